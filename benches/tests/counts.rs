//! Exact savings of the optimisations, for one fixed seed per scenario, snapshotted with insta so that a
//! change in what they save shows up in review. Runs are "quiet" (requests take no simulated time,
//! watches deliver at once), so switching an optimisation off cannot move any event in time and the
//! two runs must make the same mutating calls; the difference is only in the work done.

use std::fmt::Write as _;

use arc_benches::{Switches, deep_copies, differences, dropped, mutating_calls, plan, reconciles, run};

fn pair(scenario: &str, seed: u64, off: Switches) -> String {
    let on = run(plan(scenario, seed, Switches::ON, true));
    let without = run(plan(scenario, seed, off, true));
    let diffs = differences(&on, &without);
    assert!(diffs.is_empty(), "{scenario} seed {seed}: the optimisation changed behaviour: {diffs:#?}");
    assert_eq!(mutating_calls(&on), mutating_calls(&without));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scenario {scenario}, seed {seed}, quiet; mutating calls {} either way",
        mutating_calls(&on)
    );
    let (a, b) = (reconciles(&on), reconciles(&without));
    for (controller, n) in &a {
        assert!(*n <= b[controller], "{scenario}: {controller} reconciled more with the optimisation on");
    }
    assert!(
        deep_copies(&on) <= deep_copies(&without),
        "{scenario}: more deep copies with the optimisation on"
    );
    for controller in a.keys() {
        let _ =
            writeln!(out, "reconciles {controller:<22} on {:>6}  off {:>6}", a[controller], b[controller]);
    }
    for (predicate, n) in dropped(&on) {
        let _ = writeln!(out, "dropped by {predicate:<26} {n}");
    }
    let _ = writeln!(out, "deep copies on {}  off {}", deep_copies(&on), deep_copies(&without));
    out
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn predicates_cut_runner_set_reconciles_on_the_standard_workload_with_identical_calls() {
    let text = pair("standard", 1, Switches { predicates: false, lazy_copy: true });
    assert!(
        text.contains("dropped by ers_from_ephemeral_runner"),
        "the ERS predicate dropped nothing:\n{text}"
    );
    snapshot("savings-predicates-standard-seed-1", &text);
}

#[test]
fn lazy_copy_cuts_deep_copies_on_the_standard_workload_with_identical_calls() {
    let text = pair("standard", 1, Switches { predicates: true, lazy_copy: false });
    assert!(!text.contains("deep copies on 0 "), "lazy copy took no copies at all:\n{text}");
    snapshot("savings-lazy-copy-standard-seed-1", &text);
}

#[test]
fn predicates_save_work_in_the_race_worlds_too() {
    for scenario in ["watch-lag-duplicate-create", "assign-during-delete"] {
        let text = pair(scenario, 1, Switches { predicates: false, lazy_copy: true });
        snapshot(&format!("savings-predicates-{scenario}-seed-1"), &text);
    }
}
