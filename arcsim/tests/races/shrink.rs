//! Failure capsules and shrinking: the capsule of a seed's run replays that run's exact trace; a kill
//! row's failing seed shrinks within 200 reruns to a 1-minimal capsule that replays the same oracle
//! failure. Each shrunk capsule is kept as a snapshot (`snapshots/capsule-VARIANT-in-SCENARIO.snap`),
//! with the run's size before and after.
//!
//! The rows of the three race worlds and the hand-cleanup world are here, but for these: the
//! steady-state rows and `bug-secrets-cached` (their failing runs never settle, so every rerun runs to
//! the world's horizon), the token-refresh rows (3.5 simulated hours a run, legacy mode),
//! `bug-stale-removal-snapshot` and `bug-stale-deregistration` (killed at 14/50 and 26–49/100: the first
//! kill may be many seeds in), the turmoil row (`bug-zombie-listener`), the field report's row and the
//! equivalence twin row: cheap enough by hand (`arcsim shrink`), not for every `cargo test`.

use arc_scenarios::kill_table::{KILL_TABLE, KillExpectation};
use arc_scenarios::scenarios;
use arc_scenarios::variant::{Build, Variant};
use arc_sim::net::Network;
use arc_sim::{Seed, TraceMode};
use arcsim::capsule::Capsule;
use arcsim::runner::run_build;
use arcsim::shrink::{DEFAULT_BUDGET, Minimality, shrink};

/// The kill row of `variant` in `scenario` judged by `oracle`.
fn row(variant: Variant, scenario: &str, oracle: &str) -> &'static KillExpectation {
    KILL_TABLE
        .iter()
        .find(|k| k.variant == variant && k.scenario.name() == scenario && k.oracle.name() == oracle)
        .expect("a kill-table row")
}

/// The row's first seed (from 1) whose run fails its oracle, within the row's bound.
fn first_kill(row: &KillExpectation) -> Seed {
    let build = Build::arcsim(row.variant);
    (1..=u64::from(row.within_seeds()))
        .map(Seed)
        .find(|seed| {
            let (verdict, _) = run_build(row.scenario, build, *seed, TraceMode::HashOnly).expect("runs");
            verdict.violations.iter().any(|v| v.oracle == row.oracle.name())
        })
        .expect("the row kills within its bound")
}

/// Shrinks the row's first kill, checks the capsule, and snapshots it with the sizes.
fn shrinks_to_a_minimal_capsule(variant: Variant, scenario: &str, oracle: &str) {
    let row = row(variant, scenario, oracle);
    let seed = first_kill(row);
    let original = Capsule::of_run(row.scenario, Build::arcsim(variant), seed, Network::InProcess, oracle);
    let shrunk = shrink(original, DEFAULT_BUDGET).expect("the seed fails, so it shrinks");
    assert!(shrunk.reruns <= DEFAULT_BUDGET, "{} reruns", shrunk.reruns);
    assert_eq!(
        shrunk.minimality,
        Minimality::StepsAndJobs,
        "the budget ran out before 1-minimality was checked"
    );
    assert!(shrunk.after.steps <= shrunk.before.steps && shrunk.after.jobs <= shrunk.before.jobs);
    let (verdict, _) = shrunk.capsule.run(TraceMode::HashOnly, None).expect("the capsule runs");
    assert!(shrunk.capsule.fails(&verdict), "the capsule replays the {oracle} failure: {verdict:?}");
    let summary = format!(
        "before: {}\nafter:  {}\nreruns: {}\nkept:\n{}\n\n{}",
        shrunk.before,
        shrunk.after,
        shrunk.reruns,
        shrunk.steps().join("\n"),
        shrunk.capsule.to_json()
    );
    insta::with_settings!({snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(format!("capsule-{variant}-in-{scenario}"), summary);
    });
}

#[test]
fn the_capsule_of_a_seed_replays_its_exact_trace() {
    let scenario = scenarios::find("steady-state").unwrap();
    let build = Build::arcsim(Variant::Fixed);
    let (seed_run, seed_record) = run_build(scenario, build, Seed(7), TraceMode::Full).unwrap();
    let capsule = Capsule::of_run(scenario, build, Seed(7), Network::InProcess, "bounded-pod-creates");
    let reread = Capsule::parse(&capsule.to_json()).unwrap();
    assert_eq!(reread, capsule, "the capsule reads back as written");
    let (replayed, replayed_record) = capsule.run(TraceMode::Full, None).unwrap();
    assert_eq!(replayed.trace_hash, seed_run.trace_hash);
    assert_eq!(replayed_record.trace.text(), seed_record.trace.text());
    assert_eq!(replayed.without_wall_time(), seed_run.without_wall_time());
}

#[test]
fn a_capsule_that_passes_is_a_clear_error_not_a_shrink() {
    let scenario = scenarios::find("standard").unwrap();
    let capsule = Capsule::of_run(
        scenario,
        Build::arcsim(Variant::Fixed),
        Seed(1),
        Network::InProcess,
        "bounded-pod-creates",
    );
    let err = shrink(capsule, DEFAULT_BUDGET).unwrap_err().to_string();
    assert!(err.contains("the run passes bounded-pod-creates, so there is nothing to shrink"), "{err}");
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`).
mod slow {
    use super::*;

    /// README's first screen shows `arcsim shrink` of this seed: it shrinks to a capsule that still
    /// fails `no-busy-runner-deleted`.
    #[test]
    #[ignore = "slow tier: README's first-screen shrink"]
    fn the_first_screens_shrink_gives_a_capsule_that_still_fails() {
        let scenario = scenarios::find("assign-during-delete").unwrap();
        let build = Build::arcsim(Variant::BugStaleRemovalSnapshot);
        let original =
            Capsule::of_run(scenario, build, Seed(4), Network::InProcess, "no-busy-runner-deleted");
        let shrunk = shrink(original, DEFAULT_BUDGET).expect("seed 4 fails, so it shrinks");
        assert!(shrunk.after.jobs <= shrunk.before.jobs);
        let (verdict, _) = shrunk.capsule.run(TraceMode::HashOnly, None).expect("the capsule runs");
        assert!(shrunk.capsule.fails(&verdict), "{verdict:?}");
    }

    #[test]
    #[ignore = "slow tier: a shrink of a kill row each"]
    fn bug_2255_in_kubectl_delete_runners_shrinks() {
        shrinks_to_a_minimal_capsule(
            Variant::Bug2255NoRemoveOnDelete,
            "kubectl-delete-runners",
            "no-job-lost",
        );
    }

    #[test]
    #[ignore = "slow tier: a shrink of a kill row each"]
    fn bug_4201_in_watch_lag_duplicate_create_shrinks() {
        shrinks_to_a_minimal_capsule(Variant::Bug4201, "watch-lag-duplicate-create", "bounded-pod-creates");
    }

    #[test]
    #[ignore = "slow tier: a shrink of a kill row each"]
    fn bug_scale_down_no_remove_in_assign_during_delete_shrinks() {
        shrinks_to_a_minimal_capsule(
            Variant::BugScaleDownNoRemove,
            "assign-during-delete",
            "no-busy-runner-deleted",
        );
    }

    #[test]
    #[ignore = "slow tier: a shrink of a kill row each"]
    fn bug_3371_in_assign_during_delete_shrinks() {
        shrinks_to_a_minimal_capsule(
            Variant::Bug3371,
            "assign-during-delete",
            "scale-down-only-on-patch-zero",
        );
    }

    #[test]
    #[ignore = "slow tier: a shrink of a kill row each"]
    fn bug_running_overwrites_terminal_in_assign_during_delete_shrinks() {
        shrinks_to_a_minimal_capsule(
            Variant::BugRunningOverwritesTerminal,
            "assign-during-delete",
            "no-running-while-deleting",
        );
    }

    #[test]
    #[ignore = "slow tier: a shrink of a kill row each"]
    fn bug_running_from_pod_in_assign_during_delete_shrinks() {
        shrinks_to_a_minimal_capsule(
            Variant::BugRunningFromPod,
            "assign-during-delete",
            "running-only-after-job-started",
        );
    }

    #[test]
    #[ignore = "slow tier: a shrink of a kill row each"]
    fn bug_4580_finalizer_in_watch_lag_duplicate_create_shrinks() {
        shrinks_to_a_minimal_capsule(
            Variant::Bug4580Finalizer,
            "watch-lag-duplicate-create",
            "finalizers-in-one-write",
        );
    }

    #[test]
    #[ignore = "slow tier: a shrink of a kill row each"]
    fn bug_4580_short_circuit_in_kubectl_delete_runners_shrinks() {
        shrinks_to_a_minimal_capsule(
            Variant::Bug4580ShortCircuit,
            "kubectl-delete-runners",
            "registration-removed-before-runner-gone",
        );
    }
}
