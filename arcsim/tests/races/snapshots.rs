//! Canonical runs: seed 1 of every scenario on the fixed controller, snapshotted with insta in
//! `snapshots/` as a reviewer reads them (`arcsim::review`): the trace's length and hash, the
//! world's config, the verdict without wall time, API requests per verb × resource × code and actor,
//! GitHub state changes per kind, and the trace around each probe's first hit. Any change in what the
//! world does moves the hash; the rest of the text shows what moved.

use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::record::Interest;
use arc_sim::{Seed, TraceMode};
use arcsim::review;
use arcsim::runner::run_one_keeping;

fn canonical(scenario: &str) -> String {
    let found = scenarios::find(scenario).expect("a known scenario");
    let (verdict, record) =
        run_one_keeping(found, Variant::Fixed, Seed(1), TraceMode::Full, Some(Interest::everything()))
            .expect("the run completes");
    review::text(&verdict, &record)
}

fn check(scenario: &str) {
    let text = canonical(scenario);
    insta::with_settings!({snapshot_path => "../../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(format!("trace-{scenario}-seed-1"), text);
    });
}

#[test]
fn standard_trace() {
    check("standard");
}

#[test]
fn watch_lag_duplicate_create_trace() {
    check("watch-lag-duplicate-create");
}

#[test]
fn token_refresh_recreation_trace() {
    check("token-refresh-recreation");
}

#[test]
fn assign_during_delete_trace() {
    check("assign-during-delete");
}

#[test]
fn steady_state_trace() {
    check("steady-state");
}

#[test]
fn kubectl_delete_runners_trace() {
    check("kubectl-delete-runners");
}
