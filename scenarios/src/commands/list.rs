//! `arcsim list`: the scenarios, control worlds, profiles (with every switch's value in each),
//! variants (with the profiles in which a variant is the fixed controller itself), oracles, probes
//! and kill rows.

use std::fmt::Write as _;

use arc_controller::Profile;
use arc_controller::switches::GROUPS;

use crate::kill_table::{CI_SEED_BUDGET, KILL_TABLE};
use crate::{oracles, probes, scenarios, variant::Variant};

/// Prints the catalogue.
pub fn run() -> anyhow::Result<()> {
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
    println!(
        "kill table (variant scenario oracle hits/seeds bound median; bounds over {CI_SEED_BUDGET} seeds are swept by scripts/kill-rows.sh):"
    );
    for row in KILL_TABLE {
        println!(
            "  {} {} {} {}/{} {} {}",
            row.variant,
            row.scenario.name(),
            row.oracle.name(),
            row.rate.hits,
            row.rate.seeds,
            row.within_seeds(),
            row.rate.median_seeds_to_kill().map_or("-".to_string(), |m| m.to_string())
        );
    }
    Ok(())
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
