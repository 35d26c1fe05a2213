//! `watch-lag-duplicate-create` (race 1, ARC-MODEL §8.1): the pod watch lags 1–3 s behind the API
//! server while the EphemeralRunner watch is nearly instant, so the ER controller's second reconcile
//! looks for the pod it just created in a cache that does not have it yet, and creates it again. With
//! #4201 the AlreadyExists answer is an info log and a 5 s requeue; before it, a reconcile error and a
//! tight rate-limited retry loop. Secrets are read uncached, so the runner is never registered twice.

use arc_sim::Seed;
use arc_sim::apiserver::{LagRange, WatchLag};

use super::control::Control;
use super::standard::{scale_set_oracles, scale_set_world};
use super::steady_state::LIVENESS_MS;
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::{self, Oracle};
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

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
        race_world(seed, variant, LagRange::between(1_000, 3_000), LagRange::between(0, 50))
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        let mut all = scale_set_oracles();
        all.push(&oracles::deletion::FinalizersInOneWrite);
        all
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const GOALS: &[ProbeGoal] = &[
            ProbeGoal::floor(&probes::POD_CREATE_ALREADY_EXISTS, Rate::measured(100, 100, 2_000_000)),
            ProbeGoal::floor(&probes::STALE_POD_CACHE_READ, Rate::measured(100, 100, 2_000_000)),
        ];
        GOALS
    }

    fn control(&self) -> Option<&'static dyn Scenario> {
        Some(&CONTROL)
    }
}

/// Jobs arrive for this long.
const WORKLOAD_MS: u64 = 300_000;

/// Race 1's world with the pod and secret watches lagging by `pod_lag`, the runner watch by `runner_lag`.
/// It must settle within steady-state's liveness window after the last arrival: the fixed controller
/// settled by 739 s in 1,300 seeds from 30,000,000 (its control world by 784 s in 200, ARC 0.13.1 and
/// 0.15.0 by 704 s in 200 each), so a controller that never settles is judged at 35 minutes, not two
/// hours.
fn race_world(seed: Seed, variant: Variant, pod_lag: LagRange, runner_lag: LagRange) -> WorldPlan {
    let mut plan = scale_set_world(seed, variant, 0, 10);
    let lag = &mut plan.config.apiserver.watch_lag;
    lag.per_resource.insert("pods".into(), pod_lag);
    lag.per_resource.insert("ephemeralrunners".into(), runner_lag);
    lag.per_resource.insert("secrets".into(), pod_lag);
    plan.config.workload.horizon_ms = WORKLOAD_MS;
    plan.config.horizon_ms = WORKLOAD_MS + LIVENESS_MS;
    plan
}

/// Race 1 without its ingredient: no watch lag (nor watch-cache lag) on pods, secrets or runners. (Even 0–50 ms on both
/// opens the window: the runner watch can deliver the controller's own status write before the pod
/// it created.)
pub static CONTROL: Control = Control {
    name: "watch-lag-duplicate-create-control",
    describe: "race 1's world with no watch lag on pods, secrets and runners",
    race: &WatchLagDuplicateCreate,
    strip: |seed, variant| {
        let mut plan = race_world(seed, variant, LagRange::between(0, 0), LagRange::between(0, 0));
        // The watch cache's lag delays deliveries as a watch lag does.
        plan.config.apiserver.watch_cache_lag = WatchLag::default();
        plan
    },
    goals: &[
        ProbeGoal::ceiling(&probes::POD_CREATE_ALREADY_EXISTS, Rate::measured(0, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::STALE_POD_CACHE_READ, Rate::measured(0, 100, 2_000_000)),
    ],
};
