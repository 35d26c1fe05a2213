//! `paused-leader`: the leader-election world (two replicas, client-go's timings: 15 s lease, 10 s
//! renew deadline, 2 s retries) whose leading replica is stopped at 4 simulated minutes for 20 s to
//! 2 minutes, longer than its lease (issue 42, item 6). The standby takes the Lease over once it has
//! seen it unrenewed for 15 s; the stopped leader then goes on with the reconciles it had in flight and
//! the timers that came due, and client-go's election does not fence it. Every job must complete, the
//! standard oracles must hold, and no replica may write while it does not hold the Lease:
//! `fixes.writes_stop_at_lease_deadline` refuses a leader's writes past its renew deadline; every
//! ARC release lacks it.

use arc_sim::Seed;
use arc_world::Disruption;
use rand::Rng;

use super::leader_election::{KILL_LEADER_AT_MS, replicated_oracles, replicated_world};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::Oracle;
use arc_judging::probes;
use arc_judging::probes::ProbeGoal;
use arc_judging::rates::Rate;

/// Two replicas, one leader, the leader stopped past its lease mid-run.
pub struct PausedLeader;

impl Scenario for PausedLeader {
    fn name(&self) -> &'static str {
        "paused-leader"
    }

    fn describe(&self) -> &'static str {
        "the standard world on two controller replicas; the leader is stopped at 4 min for 20 s to 2 min, past its lease"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        let mut plan = replicated_world(seed, variant);
        let for_ms = seed.named_rng("scenario/paused-leader").random_range(20_000..120_000);
        plan.config.disruptions.push(Disruption::PauseController { at_ms: KILL_LEADER_AT_MS, for_ms });
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        replicated_oracles()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const GOALS: &[ProbeGoal] =
            &[ProbeGoal::floor(&probes::LEADER_RESUMED_AFTER_TAKEOVER, Rate::measured(100, 100, 24_200_000))];
        GOALS
    }
}
