//! `leader-election`: two controller replicas, one leader, the leader killed mid-run.

use arc_scenarios::runner::run_one;
use arc_scenarios::scenarios::leader_election::{KILL_LEADER_AT_MS, LeaderElectionFailover};
use arc_scenarios::variant::Variant;
use arc_sim::{Seed, TraceMode};
use serde_json::Value;

use super::suite::fixed_passes;

#[test]
fn the_fixed_controller_passes_with_two_replicas_and_a_killed_leader() {
    fixed_passes(&LeaderElectionFailover, 1..=2);
}

#[test]
fn the_standby_takes_over_after_the_leader_is_killed_and_both_replicas_lead_in_turn() {
    let (verdict, record) = run_one(&LeaderElectionFailover, Variant::Fixed, Seed(1), TraceMode::HashOnly)
        .expect("the run completes");
    assert!(verdict.passed(), "{:#?}", verdict.violations);
    let lease = record.objects["leases"].first().cloned().expect("the Lease exists");
    let transitions = lease.pointer("/spec/leaseTransitions").and_then(Value::as_i64);
    assert_eq!(transitions, Some(1), "one takeover: {lease}");
    let holder = lease.pointer("/spec/holderIdentity").and_then(Value::as_str).unwrap_or_default();
    assert!(holder.is_empty(), "the last leader released the Lease when the world stopped: {holder:?}");
    let writers: std::collections::BTreeSet<&str> = record
        .audit()
        .filter(|a| a.actor.starts_with("controller#") && a.resource != "leases" && a.code < 300)
        .map(|a| a.actor.as_str())
        .collect();
    assert_eq!(writers.len(), 2, "both replicas led in turn: {writers:?}");
    let late =
        record.audit().filter(|a| a.ms > KILL_LEADER_AT_MS && a.actor.starts_with("controller#")).count();
    assert!(late > 0, "the controllers acted after the kill");
    assert_eq!(record.controller_restarts, 1);
}
