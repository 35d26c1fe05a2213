//! `leader-election`: the standard world with two controller replicas electing a leader on a Lease in
//! the controller namespace (client-go's timings: 15 s lease, 10 s renew deadline, 2 s retries). At
//! 4 simulated minutes, mid-workload, the leading replica crashes without releasing the Lease and
//! restarts as a standby; the other takes over once it has seen the Lease unrenewed for 15 s. Every
//! job must still complete, the standard oracles must hold, and no replica may write while it does
//! not hold the Lease.

use arc_sim::Seed;
use arc_world::{Disruption, ReplicaConfig};

use super::objects::CONTROLLER_NAMESPACE;
use super::standard::{scale_set_oracles, scale_set_world};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::Oracle;
use arc_judging::oracles::leadership::OneLeaderAtATime;

/// When the leader is killed.
pub const KILL_LEADER_AT_MS: u64 = 240_000;

/// Two replicas, one leader, the leader killed mid-run.
pub struct LeaderElectionFailover;

impl Scenario for LeaderElectionFailover {
    fn name(&self) -> &'static str {
        "leader-election"
    }

    fn describe(&self) -> &'static str {
        "the standard world on two controller replicas electing a leader; the leader is killed at 4 min"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        let mut plan = replicated_world(seed, variant);
        plan.config.disruptions.push(Disruption::KillLeader { at_ms: KILL_LEADER_AT_MS });
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        replicated_oracles()
    }
}

/// The standard world on two controller replicas electing a leader on the Lease `arc-controller` in
/// the controller namespace, nothing done to them yet.
pub fn replicated_world(seed: Seed, variant: Variant) -> WorldPlan {
    let mut plan = scale_set_world(seed, variant, 0, 10);
    plan.config.replicas = Some(ReplicaConfig {
        count: 2,
        lease_namespace: CONTROLLER_NAMESPACE.into(),
        lease_name: "arc-controller".into(),
    });
    plan
}

/// The standard oracles and `one-leader-at-a-time`.
pub fn replicated_oracles() -> Vec<&'static dyn Oracle> {
    let mut oracles = scale_set_oracles();
    oracles.push(&OneLeaderAtATime);
    oracles
}
