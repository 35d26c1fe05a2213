//! `watch-lag-duplicate-create` (race 1, ARC-MODEL §8.1): the pod watch lags 1–3 s behind the API
//! server while the EphemeralRunner watch is nearly instant, so the ER controller's second reconcile
//! looks for the pod it just created in a cache that does not have it yet, and creates it again. With
//! #4201 the AlreadyExists answer is an info log and a 5 s requeue; before it, a reconcile error and a
//! tight rate-limited retry loop. Secrets are read uncached, so the runner is never registered twice.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;

use super::standard::{scale_set_oracles, scale_set_world};
use crate::oracles::{self, Oracle};
use crate::probes::{self, ProbeGoal};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;

/// Race 1.
pub struct WatchLagDuplicateCreate;

impl Scenario for WatchLagDuplicateCreate {
    fn name(&self) -> &'static str {
        "watch-lag-duplicate-create"
    }

    fn describe(&self) -> &'static str {
        "pod watch lags 1-3 s, runner watch ~0: the ER controller re-creates pods it cannot see yet (§8.1)"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        let mut plan = scale_set_world(seed, variant, 0, 10);
        let lag = &mut plan.config.apiserver.watch_lag;
        lag.per_resource.insert("pods".into(), LagRange::between(1_000, 3_000));
        lag.per_resource.insert("ephemeralrunners".into(), LagRange::between(0, 50));
        lag.per_resource.insert("secrets".into(), LagRange::between(1_000, 3_000));
        plan.config.workload.horizon_ms = 300_000;
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        let mut all = scale_set_oracles();
        all.push(&oracles::deletion::FinalizersInOneWrite);
        all
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        &[
            ProbeGoal { probe: &probes::POD_CREATE_ALREADY_EXISTS, min_share: 0.3 },
            ProbeGoal { probe: &probes::STALE_POD_CACHE_READ, min_share: 0.3 },
        ]
    }
}
