//! README's kill table is the kill table: every row of `KILL_TABLE` appears there with its variant,
//! scenario, oracle, measured rate, bound and median seeds to kill, and the README lists no row the
//! table lacks (rows without a measured rate, shown with `—`, aside). A re-measured row whose README
//! line was not updated turns this red. README's table by oracle names, for every oracle, the row with
//! the smallest bound, or the field report whose world shows it, at the rate the field-report table
//! gives for `arcsim`.

use arc_scenarios::kill_table::{KILL_TABLE, KillExpectation, SHOWN_BY_REPORTS};
use arc_scenarios::oracles;

const HEADER: &str = "| variant | switch off | scenario | oracle | measured | bound | median seeds to kill |";

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).expect("README")
}

/// The body lines of the README table whose header line is `header`, each as its trimmed cells.
fn readme_table(header: &str) -> Vec<Vec<String>> {
    let readme = readme();
    let lines = readme.lines().skip_while(|l| *l != header).skip(2);
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|line| line.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect())
        .collect()
}

/// One README row: variant, scenario, oracle, measured, bound, median (as written).
type ReadmeRow = [String; 6];

/// The rows of README's kill table, a continuation row (empty variant cell) taking the variant above.
fn readme_rows() -> Vec<ReadmeRow> {
    let mut variant = String::new();
    let mut rows = Vec::new();
    for cells in readme_table(HEADER) {
        assert_eq!(cells.len(), 7, "a kill-table line of seven cells: {cells:?}");
        if !cells[0].is_empty() {
            variant = cells[0].trim_matches('`').to_string();
        }
        let scenario = cells[2].split_whitespace().next().unwrap_or("").to_string();
        rows.push([
            variant.clone(),
            scenario,
            cells[3].clone(),
            cells[4].clone(),
            cells[5].clone(),
            cells[6].clone(),
        ]);
    }
    rows
}

/// `n` with commas between thousands, as README writes counts.
fn with_commas(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn table_rows() -> Vec<ReadmeRow> {
    KILL_TABLE
        .iter()
        .map(|row| {
            let median = row.rate.median_seeds_to_kill().map_or("—".into(), with_commas);
            [
                row.variant.name().to_string(),
                row.scenario.name().to_string(),
                row.oracle.name().to_string(),
                format!("{}/{}", row.rate.hits, row.rate.seeds),
                with_commas(row.within_seeds()),
                median,
            ]
        })
        .collect()
}

#[test]
fn every_kill_table_row_is_in_the_readme_with_its_rate_bound_and_median() {
    let readme = readme_rows();
    assert!(readme.len() >= KILL_TABLE.len(), "README's kill table has {} rows", readme.len());
    for row in table_rows() {
        assert!(readme.contains(&row), "README's kill table lacks or misstates {row:?}");
    }
}

#[test]
fn the_readme_lists_no_measured_row_the_kill_table_lacks() {
    let table = table_rows();
    for row in readme_rows().into_iter().filter(|r| r[5] != "—") {
        assert!(table.contains(&row), "README lists {row:?}, which the kill table does not have");
    }
}

#[test]
fn counts_are_written_with_commas_between_thousands() {
    assert_eq!(with_commas(7), "7");
    assert_eq!(with_commas(913), "913");
    assert_eq!(with_commas(1361), "1,361");
    assert_eq!(with_commas(1_000_000), "1,000,000");
}

const BY_ORACLE_HEADER: &str = "| oracle | killed by | in | measured | bound |";

/// README's table by oracle: oracle, killed by, in (scenario), measured, bound, as written.
fn readme_by_oracle() -> Vec<[String; 5]> {
    readme_table(BY_ORACLE_HEADER)
        .into_iter()
        .map(|cells| {
            let cells: Vec<String> = cells.iter().map(|c| c.trim_matches('`').to_string()).collect();
            cells.try_into().unwrap_or_else(|c| panic!("a by-oracle line of five cells: {c:?}"))
        })
        .collect()
}

/// The row with the smallest bound for `oracle` (the first in the table on a tie).
fn best_row(oracle: &str) -> Option<&'static KillExpectation> {
    let rows = KILL_TABLE.iter().filter(|row| row.oracle.name() == oracle);
    rows.min_by_key(|row| row.within_seeds())
}

#[test]
fn the_readme_names_for_every_oracle_its_best_kill_row_or_the_report_that_shows_it() {
    let readme = readme_by_oracle();
    let names = oracles::all_names();
    assert_eq!(readme.len(), names.len(), "one README line per oracle: {readme:?}");
    for name in names {
        let line = readme.iter().find(|l| l[0] == name).unwrap_or_else(|| panic!("README lacks {name}"));
        let expected = match best_row(name) {
            Some(row) => [
                name.to_string(),
                row.variant.name().to_string(),
                row.scenario.name().to_string(),
                format!("{}/{}", row.rate.hits, row.rate.seeds),
                with_commas(row.within_seeds()),
            ],
            None => {
                let shown = SHOWN_BY_REPORTS.iter().find(|s| s.oracle.name() == name).expect("a report");
                let fixed = "fixed (no fix exists)".to_string();
                let (hits, seeds) = shown.shows;
                let report = shown.report.name().to_string();
                [name.to_string(), fixed, report, format!("{hits}/{seeds}"), "—".into()]
            }
        };
        assert_eq!(line, &expected, "README's line for {name}");
    }
}

const FIELD_REPORT_HEADER: &str =
    "| report | world (trigger) | oracle (symptom) | `arc-0.13.1` | `arc-0.15.0` | `change-set` | `arcsim` |";

/// The `arcsim` cell of README's field-report line whose world is `report` and whose symptom
/// column names `oracle`.
fn field_report_arcsim_cell(report: &str, oracle: &str) -> Option<String> {
    readme_table(FIELD_REPORT_HEADER).into_iter().find_map(|cells| {
        let world = cells.get(1)?.starts_with(&format!("`{report}`"));
        let symptom = cells.get(2)?.contains(&format!("`{oracle}`"));
        if world && symptom { cells.last().cloned() } else { None }
    })
}

#[test]
fn each_report_world_shows_its_oracle_in_the_field_report_table_as_the_kill_table_records() {
    for shown in SHOWN_BY_REPORTS {
        let (report, oracle) = (shown.report.name(), shown.oracle.name());
        let cell = field_report_arcsim_cell(report, oracle)
            .unwrap_or_else(|| panic!("README's field-report table lacks {report} judged by {oracle}"));
        let (hits, seeds) = shown.shows;
        assert!(
            cell.starts_with(&format!("shows {hits}/{seeds}")),
            "{report}, {oracle}: README says {cell:?}"
        );
    }
}

/// The value after `flag` in a command line.
fn flag_value<'a>(command: &'a str, flag: &str) -> Option<&'a str> {
    let mut words = command.split_whitespace();
    words.by_ref().find(|w| *w == flag)?;
    words.next()
}

/// README's first screen shows a race caught, the same seed passing on the fixed controller, its page
/// and its shrink: each `arcsim run` line still does what its comment says (a change to the fakes'
/// timing that makes the seed pass breaks this test, not a newcomer's trust; README says how to find
/// another seed). The shrink line is checked to name the failing run; the slow tier shrinks it.
#[test]
fn the_first_screens_commands_still_do_what_they_say() {
    let readme = readme();
    let runs: Vec<&str> = readme.lines().take(40).filter(|l| l.starts_with("arcsim run ")).collect();
    assert_eq!(runs.len(), 3, "three runs on the first screen: {runs:?}");
    for command in runs {
        let scenario = flag_value(command, "--scenario").expect("--scenario");
        let variant: arc_scenarios::variant::Variant =
            flag_value(command, "--variant").unwrap_or("fixed").parse().unwrap();
        let seed: u64 = flag_value(command, "--seed").expect("--seed").parse().unwrap();
        let found = arc_scenarios::scenarios::find(scenario).unwrap();
        let v = super::suite::verdict(found, variant, seed);
        match command.split_once("# fails ") {
            Some((_, oracle)) => {
                let oracle = oracle.trim();
                assert!(v.violations.iter().any(|x| x.oracle == oracle), "{command}: {:?}", v.violations);
            }
            None if command.contains("# passes") => assert!(v.passed(), "{command}: {:?}", v.violations),
            None => assert!(!v.passed(), "{command}: the page of a failure shows a failure"),
        }
    }
    let shrink = readme.lines().take(40).find(|l| l.starts_with("arcsim shrink ")).expect("a shrink");
    assert!(shrink.contains("--variant bug-stale-removal-snapshot --seed 3"), "{shrink}");
}
