//! The same seed gives a byte-identical trace: twice in one process, and in a child process.

use std::process::Command;

use arc_scenarios::runner::run_one;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::{Seed, TraceMode};

fn trace_of(scenario: &str, seed: u64) -> (String, u64) {
    let scenario = scenarios::find(scenario).expect("a known scenario");
    let (verdict, record) =
        run_one(scenario, Variant::Fixed, Seed(seed), TraceMode::Full).expect("the run completes");
    (record.trace.text(), verdict.trace_hash)
}

#[test]
fn the_same_seed_twice_in_one_process_gives_byte_identical_traces() {
    for scenario in ["standard", "watch-lag-duplicate-create", "token-refresh-recreation", "steady-state"] {
        let (first, _) = trace_of(scenario, 11);
        let (second, _) = trace_of(scenario, 11);
        assert!(first == second, "{scenario}: two runs of seed 11 differ");
    }
}

#[test]
fn a_child_process_reproduces_the_trace_hash() {
    let (_, hash) = trace_of("assign-during-delete", 7);
    let output = Command::new(env!("CARGO_BIN_EXE_arcsim"))
        .args(["run", "--scenario", "assign-during-delete", "--seed", "7"])
        .output()
        .expect("arcsim runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let expected = format!("trace hash {hash:016x}");
    assert!(stdout.contains(&expected), "the child printed:\n{stdout}\nexpected {expected}");
}
