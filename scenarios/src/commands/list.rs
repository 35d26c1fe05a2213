//! `arcsim list`: the scenarios, control worlds, profiles (with every switch's value in each),
//! variants (with the profiles in which a variant is the fixed controller itself), oracles, probes,
//! kill rows and the assumptions about GitHub; `arcsim list assumptions`: the assumptions alone, each
//! alternative with its evidence.

use std::fmt::Write as _;

use arc_controller::Profile;
use arc_controller::switches::GROUPS;

use arc_sim::github::assumptions;

use crate::kill_table::{CI_SEED_BUDGET, KILL_TABLE};
use crate::{oracles, probes, scenarios, variant::Variant};

/// Options of `arcsim list`.
#[derive(Debug, Clone, clap::Args)]
pub struct ListArgs {
    /// Only this part of the catalogue.
    #[arg(value_enum)]
    pub section: Option<Section>,
}

/// A part of the catalogue that `arcsim list` prints alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Section {
    /// The behaviours of GitHub that no public document fixes, their alternatives and evidence.
    Assumptions,
}

/// Prints the catalogue, or the part of it asked for.
pub fn run(args: ListArgs) -> anyhow::Result<()> {
    match args.section {
        Some(Section::Assumptions) => print!("{}", assumptions_text(true)),
        None => {
            catalogue();
            print!("{}", assumptions_text(false));
            kill_table();
        }
    }
    Ok(())
}

/// The assumptions about GitHub: each with its question and alternatives (the default first), and
/// with `evidence` each alternative's evidence.
pub fn assumptions_text(evidence: bool) -> String {
    let mut out =
        String::from("assumptions about GitHub (--assume NAME=ALT; the first alternative is the default):\n");
    let width =
        assumptions::all().iter().flat_map(|a| a.alternatives).map(|alt| alt.name.len()).max().unwrap_or(0);
    for a in assumptions::all() {
        let names: Vec<&str> = a.alternatives.iter().map(|alt| alt.name).collect();
        let _ = writeln!(out, "  {:<30} {}", a.name, names.join(" | "));
        if evidence {
            let _ = writeln!(out, "    {}", a.question);
            for alt in a.alternatives {
                let _ = writeln!(out, "    {:<width$} {}", alt.name, alt.evidence);
            }
        }
    }
    out
}

fn catalogue() {
    println!("scenarios:");
    for s in scenarios::all() {
        println!("  {:<30} {}", s.name(), s.describe());
    }
    println!("control worlds (run on request: the race without its ingredient):");
    for s in scenarios::controls() {
        println!("  {:<30} {}", s.name(), s.describe());
    }
    println!("field reports (run on request; upstream is expected to fail them):");
    for s in scenarios::field_reports::all() {
        println!("  {:<30} {}", s.name(), s.describe());
    }
    print!("{}", profiles_text());
    println!("variants (of the chosen profile; `= fixed in P`: profile P never had the fix):");
    for v in Variant::ALL {
        println!("  {:<30} {}{}", v.name(), v.describe(), same_as_fixed_note(v));
    }
    println!("oracles:");
    for o in oracles::all() {
        println!("  {:<30} {}", o.name(), o.describe());
    }
    for o in oracles::all_twins() {
        println!("  {:<30} {} (twin runs)", o.name(), o.describe());
    }
    println!("probes:");
    for p in probes::all() {
        println!("  {:<30} {}", p.name, p.describe);
    }
}

/// The kill table, last (scripts read it to the end of the listing).
fn kill_table() {
    println!(
        "kill table (variant scenario oracle hits/seeds bound median [needs]; bounds over {CI_SEED_BUDGET} seeds are swept by scripts/kill-rows.sh; a row that needs alternatives about GitHub kills under those only):"
    );
    for row in KILL_TABLE {
        let needs = if row.needs.is_empty() { String::new() } else { format!(" needs {}", row.needs_text()) };
        println!(
            "  {} {} {} {}/{} {} {}{needs}",
            row.variant,
            row.scenario.name(),
            row.oracle.name(),
            row.rate.hits,
            row.rate.seeds,
            row.within_seeds(),
            row.rate.median_seeds_to_kill().map_or("-".to_string(), |m| m.to_string())
        );
    }
}

/// The profiles, then every switch with its value in each profile (`on`/`-`) and its origin.
pub fn profiles_text() -> String {
    let mut out = String::from("profiles:\n");
    for p in Profile::ALL {
        let _ = writeln!(out, "  {:<30} {}", p.name(), p.describe());
    }
    let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
    let _ = writeln!(out, "switches ({}):", names.join(" | "));
    let switches: Vec<_> = Profile::ALL.iter().map(|p| p.switches().values()).collect();
    let mut row = 0;
    for (group, docs) in GROUPS {
        for doc in docs {
            let marks: Vec<&str> =
                switches.iter().map(|values| if values[row].on { "on" } else { "-" }).collect();
            let name = format!("{group}.{}", doc.name);
            let _ = writeln!(out, "  {name:<46} {:<16} {} [{}]", marks.join(" "), doc.summary, doc.origin);
            row += 1;
        }
    }
    out
}

/// ` (= fixed in P, Q)` for the profiles in which `variant` changes nothing.
fn same_as_fixed_note(variant: Variant) -> String {
    if variant.is_fixed() {
        return String::new();
    }
    let same: Vec<&str> =
        Profile::ALL.iter().filter(|p| variant.same_as_fixed_in(**p)).map(|p| p.name()).collect();
    if same.is_empty() { String::new() } else { format!(" (= fixed in {})", same.join(", ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_table_lists_every_switch_with_a_value_per_profile() {
        let text = profiles_text();
        for p in Profile::ALL {
            assert!(text.contains(p.name()), "{text}");
        }
        assert!(text.contains("scaling.actionable_revision"), "{text}");
        let row = text.lines().find(|l| l.contains("fixes.reread_runner_before_removal")).unwrap();
        assert!(row.contains("- - - on"), "{row}");
    }

    #[test]
    fn a_variant_of_a_fix_a_profile_never_had_says_so() {
        assert!(same_as_fixed_note(Variant::BugStaleRemovalSnapshot).contains("arc-0.13.1"));
        assert!(!same_as_fixed_note(Variant::Bug4201).contains("arc-0.13.1"));
        assert_eq!(same_as_fixed_note(Variant::Fixed), "");
    }
}
