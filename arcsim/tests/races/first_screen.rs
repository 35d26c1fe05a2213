//! README's first screen's commands do what their comments say. No test reads the docs' prose tables:
//! the kill table, the table by oracle and the field reports' measured rates are generated into
//! `docs/catalog.md` from data (`scenarios/kill-rates.tsv`, `scenarios/report-rates.tsv`), which
//! `docs::the_catalog_is_what_arcsim_list_markdown_prints` checks.

fn read(path: &str) -> String {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn readme() -> String {
    read("README.md")
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
    assert!(shrink.contains("--variant bug-stale-removal-snapshot --seed 4"), "{shrink}");
}
