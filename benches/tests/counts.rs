//! Exact savings of the optimisations, for one fixed seed per scenario, snapshotted with insta so that a
//! change in what they save shows up in review. Runs are "quiet" (requests take no simulated time,
//! watches deliver at once), so switching an optimisation off moves no event in time. In the standard
//! world the two runs must then make the same mutating calls. In the race worlds they need not: a
//! reconcile the predicate would have dropped can run between a commit and the informer's copy of it
//! in the same instant and act on that intermediate state (assign-during-delete seed 1: with the
//! predicates off the runner set creates a second runner at 27.735 s and deletes one runner more at 37.089 s),
//! so there the snapshot states how many objects' calls differ instead of asserting none do.

use std::fmt::Write as _;

use arc_benches::{Switches, deep_copies, differences, dropped, mutating_calls, plan, reconciles, run};

/// Whether the two runs must make the same calls.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Behaviour {
    Identical,
    MayDiffer,
}

fn pair(scenario: &str, seed: u64, off: Switches, behaviour: Behaviour) -> String {
    let on = run(plan(scenario, seed, Switches::ON, true));
    let without = run(plan(scenario, seed, off, true));
    let diffs = differences(&on, &without);
    let mut out = String::new();
    if behaviour == Behaviour::Identical {
        assert!(diffs.is_empty(), "{scenario} seed {seed}: the optimisation changed behaviour: {diffs:#?}");
        assert_eq!(mutating_calls(&on), mutating_calls(&without));
        let _ = writeln!(
            out,
            "scenario {scenario}, seed {seed}, quiet; mutating calls {} either way",
            mutating_calls(&on)
        );
    } else {
        let _ = writeln!(
            out,
            "scenario {scenario}, seed {seed}, quiet; mutating calls on {} off {}; objects whose calls differ {}",
            mutating_calls(&on),
            mutating_calls(&without),
            diffs.len()
        );
    }
    let (a, b) = (reconciles(&on), reconciles(&without));
    for (controller, n) in &a {
        assert!(
            behaviour == Behaviour::MayDiffer || *n <= b[controller],
            "{scenario}: {controller} reconciled more with the optimisation on"
        );
    }
    assert!(
        behaviour == Behaviour::MayDiffer || deep_copies(&on) <= deep_copies(&without),
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
    let text = pair("standard", 1, Switches { predicates: false, lazy_copy: true }, Behaviour::Identical);
    assert!(
        text.contains("dropped by ers_from_ephemeral_runner"),
        "the ERS predicate dropped nothing:\n{text}"
    );
    snapshot("savings-predicates-standard-seed-1", &text);
}

#[test]
fn lazy_copy_cuts_deep_copies_on_the_standard_workload_with_identical_calls() {
    let text = pair("standard", 1, Switches { predicates: true, lazy_copy: false }, Behaviour::Identical);
    assert!(!text.contains("deep copies on 0 "), "lazy copy took no copies at all:\n{text}");
    snapshot("savings-lazy-copy-standard-seed-1", &text);
}

#[test]
fn predicates_save_work_in_the_race_worlds_too() {
    for scenario in ["watch-lag-duplicate-create", "assign-during-delete"] {
        let text = pair(scenario, 1, Switches { predicates: false, lazy_copy: true }, Behaviour::MayDiffer);
        assert!(
            text.contains("dropped by ers_from_ephemeral_runner"),
            "{scenario}: the ERS predicate dropped nothing:\n{text}"
        );
        snapshot(&format!("savings-predicates-{scenario}-seed-1"), &text);
    }
}

/// Per watch edge: updates the controller was sent, those that changed nothing the owner reads, and
/// those the predicate dropped. The predicate must drop exactly the removable ones: never fewer (work
/// left on the table), never more (a projected change lost).
fn edge_table(scenario: &str, seed: u64) -> String {
    let plan = plan(scenario, seed, Switches::ON, true);
    let reads = arc_benches::reads(&plan);
    let record = run(plan);
    let mut out = format!("scenario {scenario}, seed {seed}, quiet, predicates on\n");
    for edge in arc_benches::edges::EDGES {
        let counts = arc_benches::edges::measure(&record, &reads)[edge.predicate];
        assert_eq!(
            counts.dropped, counts.removable as i64,
            "{scenario} seed {seed}, {}: the predicate dropped {} updates; {} of {} changed nothing the owner reads",
            edge.label, counts.dropped, counts.removable, counts.seen
        );
        let _ = writeln!(
            out,
            "{:<44} seen {:>5}  removable {:>5}  dropped {:>5}",
            edge.label, counts.seen, counts.removable, counts.dropped
        );
    }
    out
}

#[test]
fn each_predicate_drops_exactly_the_updates_its_owner_does_not_read() {
    for scenario in ["standard", "watch-lag-duplicate-create", "assign-during-delete"] {
        let text = edge_table(scenario, 1);
        snapshot(&format!("savings-edges-{scenario}-seed-1"), &text);
    }
}
