//! `arcsim list`: the scenarios, control worlds, profiles (with every switch's value in each),
//! variants (with the profiles in which a variant is the fixed controller itself), oracles, probes,
//! kill rows and the assumptions about GitHub; `arcsim list assumptions`: the assumptions alone, each
//! alternative with its evidence.

use std::fmt::Write as _;

use arc_controller::Profile;
use arc_controller::switches::GROUPS;

use arc_sim::github::assumptions;

use super::columns::{Table, WIDTH, wrap};
use crate::kill_table::{CI_SEED_BUDGET, KILL_TABLE};
use crate::{oracles, probes, scenarios, variant::Variant};

/// Options of `arcsim list`.
#[derive(Debug, Clone, clap::Args)]
pub struct ListArgs {
    /// Only this part of the catalogue (every part, in this order, when none is named).
    #[arg(value_enum)]
    pub topic: Option<Topic>,
    /// The topic's table as tab-separated values, a header row first (for scripts; needs a topic).
    #[arg(long, requires = "topic")]
    pub tsv: bool,
}

/// A part of the catalogue that `arcsim list` prints alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Topic {
    /// The scenarios the sweep runs, the control worlds and the field reports.
    Scenarios,
    /// The controller builds a variant is a variant of.
    Profiles,
    /// Every switch, with its value in each profile.
    Switches,
    /// The fixed controller and the historic bugs, each a fix switched off.
    Variants,
    /// The invariants the runs are judged by.
    Oracles,
    /// The race windows a run can be shown to have opened.
    Probes,
    /// Which oracle catches which bug in which world, how often, within how many seeds.
    KillTable,
    /// The behaviours of GitHub that no public document fixes, their alternatives and evidence.
    Assumptions,
}

impl Topic {
    /// Every topic, in the order `arcsim list` prints them (the kill table last: it is the longest).
    pub const ALL: [Topic; 8] = [
        Topic::Scenarios,
        Topic::Profiles,
        Topic::Switches,
        Topic::Variants,
        Topic::Oracles,
        Topic::Probes,
        Topic::Assumptions,
        Topic::KillTable,
    ];

    /// Its table.
    pub fn table(self) -> Table {
        match self {
            Topic::Scenarios => scenarios_table(),
            Topic::Profiles => profiles_table(),
            Topic::Switches => switches_table(),
            Topic::Variants => variants_table(),
            Topic::Oracles => oracles_table(),
            Topic::Probes => probes_table(),
            Topic::KillTable => kill_table(),
            Topic::Assumptions => assumptions_table(),
        }
    }
}

/// Prints the catalogue, or the part of it asked for.
pub fn run(args: ListArgs) -> anyhow::Result<()> {
    match args.topic {
        Some(Topic::Assumptions) if !args.tsv => print!("{}", assumptions_evidence_text()),
        Some(topic) if args.tsv => print!("{}", topic.table().tsv()),
        Some(topic) => print!("{}", topic.table().text()),
        None => print!("{}", catalogue_text()),
    }
    Ok(())
}

/// Every topic's table, each after a blank line but the first.
pub fn catalogue_text() -> String {
    let tables: Vec<String> = Topic::ALL.iter().map(|t| t.table().text()).collect();
    tables.join("\n")
}

fn scenarios_table() -> Table {
    let kinds = [
        ("scenario", scenarios::all()),
        ("control", scenarios::controls()),
        ("field-report", scenarios::field_reports::all()),
    ];
    let rows = kinds
        .into_iter()
        .flat_map(|(kind, list)| {
            list.into_iter()
                .map(move |s| vec![s.name().to_string(), kind.to_string(), s.describe().to_string()])
        })
        .collect();
    Table::new(
        "scenarios (the sweep runs every `scenario`; a `control` world is its race without the ingredient, \
         run on request; a `field-report` world replays an upstream report, which upstream is expected to fail):",
        &["NAME", "KIND", "WHAT IT RUNS"],
        rows,
    )
}

fn profiles_table() -> Table {
    let rows = Profile::ALL.iter().map(|p| vec![p.name().to_string(), p.describe().to_string()]).collect();
    Table::new(
        "profiles (--profile; the controller build a variant is a variant of):",
        &["NAME", "WHAT IT IS"],
        rows,
    )
}

fn switches_table() -> Table {
    let switches: Vec<_> = Profile::ALL.iter().map(|p| p.switches().values()).collect();
    let mut row = 0;
    let mut groups = Vec::new();
    for (group, docs) in GROUPS {
        let mut rows = Vec::new();
        for doc in docs {
            let mut cells = vec![doc.name.to_string()];
            cells.extend(switches.iter().map(|values| if values[row].on { "on" } else { "-" }.to_string()));
            cells.push(format!("{} [{}]", doc.summary, doc.origin));
            rows.push(cells);
            row += 1;
        }
        groups.push((group.to_string(), rows));
    }
    let mut headers = vec!["GROUP", "SWITCH"];
    headers.extend(Profile::ALL.iter().map(|p| p.name()));
    headers.push("WHAT IT DOES WHEN ON [ORIGIN]");
    Table::grouped("switches, `on` or `-` in each profile:", &headers, groups)
}

fn variants_table() -> Table {
    let rows = Variant::ALL
        .iter()
        .map(|v| vec![v.name().to_string(), format!("{}{}", v.describe(), same_as_fixed_note(*v))])
        .collect();
    Table::new(
        "variants (--variant, of the chosen profile; `= fixed in P`: profile P never had the fix):",
        &["NAME", "WHAT IT REVERTS"],
        rows,
    )
}

fn oracles_table() -> Table {
    let mut rows: Vec<Vec<String>> =
        oracles::all().iter().map(|o| vec![o.name().to_string(), o.describe().to_string()]).collect();
    rows.extend(
        oracles::all_twins()
            .iter()
            .map(|o| vec![o.name().to_string(), format!("{} (twin runs)", o.describe())]),
    );
    Table::new("oracles (--oracle of shrink):", &["NAME", "WHAT MUST HOLD"], rows)
}

fn probes_table() -> Table {
    let rows = probes::all().iter().map(|p| vec![p.name.to_string(), p.describe.to_string()]).collect();
    Table::new("probes (race windows a run opened):", &["NAME", "THE WINDOW"], rows)
}

/// The kill table, by variant (its TSV form adds `BY`: `test` where `cargo test` sweeps the row's
/// whole bound, `script` where scripts/kill-rows.sh does).
fn kill_table() -> Table {
    // Rows by variant, the variants in order of first appearance; `by` in the same order.
    let mut groups: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    let mut by: Vec<(usize, String)> = Vec::new();
    for row in KILL_TABLE {
        let cells = vec![
            row.scenario.name().to_string(),
            row.oracle.name().to_string(),
            format!("{}/{}", row.rate.hits, row.rate.seeds),
            row.within_seeds().to_string(),
            row.rate.median_seeds_to_kill().map_or("-".to_string(), |m| m.to_string()),
            row.needs_text(),
        ];
        let variant = row.variant.to_string();
        let group = groups.iter().position(|(v, _)| *v == variant).unwrap_or_else(|| {
            groups.push((variant, Vec::new()));
            groups.len() - 1
        });
        groups[group].1.push(cells);
        by.push((group, if row.within_seeds() > CI_SEED_BUDGET { "script" } else { "test" }.to_string()));
    }
    by.sort_by_key(|(group, _)| *group);
    let by = by.into_iter().map(|(_, by)| by).collect();
    Table::grouped(
        format!(
            "kill table: each bug variant fails the ORACLE in the SCENARIO's world within BOUND seeds \
             (measured: KILLS of seeds; MEDIAN seeds to the first kill); `cargo test` sweeps bounds up to \
             {CI_SEED_BUDGET} seeds, scripts/kill-rows.sh the wider; a row that NEEDS alternatives about \
             GitHub kills under those only:"
        ),
        &["VARIANT", "SCENARIO", "ORACLE", "KILLS", "BOUND", "MEDIAN", "NEEDS"],
        groups,
    )
    .with_tsv_column("BY", by)
}

fn assumptions_table() -> Table {
    let rows = assumptions::all()
        .iter()
        .map(|a| {
            let names: Vec<&str> = a.alternatives.iter().map(|alt| alt.name).collect();
            vec![a.name.to_string(), names.join(" | ")]
        })
        .collect();
    Table::new(
        "assumptions about GitHub (--assume NAME=ALT; the first alternative is the default; \
         `arcsim list assumptions`: with their evidence):",
        &["NAME", "ALTERNATIVES"],
        rows,
    )
}

/// The assumptions about GitHub, each with its question, then each alternative (the default first)
/// with its evidence, wrapped to [`WIDTH`] columns.
pub fn assumptions_evidence_text() -> String {
    let mut out = String::new();
    for line in wrap(&assumptions_table().title, WIDTH) {
        let _ = writeln!(out, "{line}");
    }
    let width =
        assumptions::all().iter().flat_map(|a| a.alternatives).map(|alt| alt.name.len()).max().unwrap_or(0);
    for a in assumptions::all() {
        let _ = writeln!(out, "  {}", a.name);
        for line in wrap(a.question, WIDTH - 4) {
            let _ = writeln!(out, "    {line}");
        }
        for alt in a.alternatives {
            for (i, line) in wrap(alt.evidence, WIDTH - 7 - width).into_iter().enumerate() {
                let (dash, name) = if i == 0 { ("-", alt.name) } else { (" ", "") };
                let _ = writeln!(out, "    {dash} {name:<width$} {line}");
            }
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
    fn the_switch_table_lists_every_switch_with_a_value_per_profile() {
        let text = switches_table().text();
        for p in Profile::ALL {
            assert!(text.contains(p.name()), "{text}");
        }
        assert!(text.contains("\nscaling:\n"), "{text}");
        let row = text.lines().find(|l| l.contains(" reread_runner_before_removal ")).unwrap();
        let marks: Vec<&str> = row.split_whitespace().skip(1).collect();
        assert_eq!(marks, ["-", "-", "-", "on"], "{row}");
    }

    #[test]
    fn every_topic_and_the_whole_catalogue_fit_the_width_under_headers() {
        let texts = Topic::ALL
            .iter()
            .map(|t| t.table().text())
            .chain([catalogue_text(), assumptions_evidence_text()]);
        for text in texts {
            for line in text.lines() {
                assert!(line.chars().count() <= WIDTH, "{} columns: {line}", line.chars().count());
            }
        }
        for topic in Topic::ALL {
            let table = topic.table();
            let last = table.headers.last().copied().unwrap_or_default();
            let text = table.text();
            let header =
                text.lines().find(|l| l.trim_start().starts_with(table.headers[0]) || l.ends_with(last));
            assert!(header.is_some_and(|h| h.contains(last)), "{topic:?} has a header row:\n{text}");
        }
    }

    #[test]
    fn the_kill_tables_tsv_has_a_row_per_kill_row_with_every_column() {
        let tsv = kill_table().tsv();
        let lines: Vec<&str> = tsv.lines().collect();
        assert_eq!(lines[0], "VARIANT\tSCENARIO\tORACLE\tKILLS\tBOUND\tMEDIAN\tNEEDS\tBY");
        assert_eq!(lines.len(), KILL_TABLE.len() + 1);
        assert!(lines.iter().all(|l| l.split('\t').count() == 8), "{tsv}");
    }

    #[test]
    fn a_variant_of_a_fix_a_profile_never_had_says_so() {
        assert!(same_as_fixed_note(Variant::BugStaleRemovalSnapshot).contains("arc-0.13.1"));
        assert!(!same_as_fixed_note(Variant::Bug4201).contains("arc-0.13.1"));
        assert_eq!(same_as_fixed_note(Variant::Fixed), "");
    }
}
