//! Canonical traces: the opening of seed 1's trace for every scenario (sim-time stamps only), plus the
//! whole trace's length and hash, snapshotted with insta in `snapshots/` so that any change in what
//! the world does shows up in review.

use arc_scenarios::runner::run_one;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::{Seed, TraceMode};

/// Lines of each trace kept verbatim.
const OPENING_LINES: usize = 250;

fn canonical(scenario: &str) -> String {
    let found = scenarios::find(scenario).expect("a known scenario");
    let (verdict, record) =
        run_one(found, Variant::Fixed, Seed(1), TraceMode::Full).expect("the run completes");
    let lines = record.trace.lines();
    let mut out = format!("lines: {}\nhash: {:016x}\n---\n", lines.len(), verdict.trace_hash);
    for line in lines.iter().skip(1).take(OPENING_LINES) {
        out.push_str(line);
        out.push('\n');
    }
    out
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
