//! What the docs still state of the catalogue in their own words: the field-report table of
//! `docs/field-reports.md` gives for `arcsim` the rate `SHOWN_BY_REPORTS` records, and README's first
//! screen's commands do what their comments say. (The kill table and the table by oracle are generated
//! into `docs/catalog.md`, which `docs::the_catalog_is_what_arcsim_list_markdown_prints` checks.)

use arc_scenarios::kill_table::SHOWN_BY_REPORTS;

fn read(path: &str) -> String {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn readme() -> String {
    read("README.md")
}

/// The page that holds the field-report table.
const FIELD_REPORTS: &str = "docs/field-reports.md";

/// The body lines of the table in `text` whose header line is `header`, each as its trimmed cells.
fn table(text: &str, header: &str) -> Vec<Vec<String>> {
    let lines = text.lines().skip_while(|l| *l != header).skip(2);
    lines
        .take_while(|l| l.starts_with('|'))
        .map(|line| line.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect())
        .collect()
}

const FIELD_REPORT_HEADER: &str =
    "| report | world (trigger) | oracle (symptom) | `arc-0.13.1` | `arc-0.15.0` | `change-set` | `arcsim` |";

/// The `arcsim` cell of the field-report line whose world is `report` and whose symptom column
/// names `oracle`.
fn field_report_arcsim_cell(report: &str, oracle: &str) -> Option<String> {
    table(&read(FIELD_REPORTS), FIELD_REPORT_HEADER).into_iter().find_map(|cells| {
        let world = cells.get(1)?.starts_with(&format!("`{report}`"));
        let symptom = cells.get(2)?.contains(&format!("`{oracle}`"));
        if world && symptom { cells.last().cloned() } else { None }
    })
}

#[test]
fn each_report_world_shows_its_oracle_in_the_field_report_table_as_the_kill_table_records() {
    for shown in SHOWN_BY_REPORTS {
        let (report, oracle) = (shown.report.name(), shown.oracle.name());
        let cell = field_report_arcsim_cell(report, oracle).unwrap_or_else(|| {
            panic!("{FIELD_REPORTS}'s field-report table lacks {report} judged by {oracle}")
        });
        let (hits, seeds) = shown.shows;
        assert!(
            cell.starts_with(&format!("shows {hits}/{seeds}")),
            "{report}, {oracle}: {FIELD_REPORTS} says {cell:?}"
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
