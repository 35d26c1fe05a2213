//! `token-refresh-recreation` (race 2, ARC-MODEL §8.2, legacy mode): registration tokens expire every
//! hour under persistent runners that keep taking jobs, and runner containers crash now and then, so a
//! restarting container runs `config.sh` with whatever token its pod carries. With #1087 the token is
//! part of the pod-template hash and an idle runner's pod is recreated with the fresh token; with
//! #1125 the runner is unregistered first, so a job assigned on a stale "idle" listing keeps its pod.

use arc_sim::Seed;
use arc_world::Disruption;
use rand::Rng;

use super::clocks::draw_party_clocks;
use super::control::Control;
use super::legacy_standard::{legacy_oracles, legacy_world};
use super::objects::RUNNER_NAMESPACE;
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::Oracle;
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

/// Race 2.
pub struct TokenRefreshRecreation;

/// Persistent legacy runners in the world.
pub const RUNNERS: usize = 5;
/// When the last job arrives: three and a half hours, three token lifetimes and more.
pub const WORKLOAD_MS: u64 = 12_600_000;

fn crashes(seed: Seed) -> Vec<Disruption> {
    let mut rng = seed.rng(arc_sim::Component::Scenario);
    let mut at_ms = rng.random_range(300_000..900_000);
    let mut out = Vec::new();
    while at_ms < WORKLOAD_MS {
        let runner = rng.random_range(0..RUNNERS);
        out.push(Disruption::CrashPod {
            at_ms,
            namespace: RUNNER_NAMESPACE.into(),
            prefix: format!("legacy-runner-{runner}"),
            exit_code: 137,
        });
        at_ms += rng.random_range(300_000..900_000);
    }
    out
}

impl Scenario for TokenRefreshRecreation {
    fn name(&self) -> &'static str {
        "token-refresh-recreation"
    }

    fn describe(&self) -> &'static str {
        "legacy runners whose registration tokens expire hourly under jobs and container crashes (§8.2)"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        race_world(seed, variant)
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        legacy_oracles()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const GOALS: &[ProbeGoal] = &[
            ProbeGoal::floor(
                &probes::TOKEN_EXPIRED_BEFORE_CONTAINER_START,
                Rate::measured(89, 100, 2_000_000),
            ),
            ProbeGoal::floor(&probes::TOKEN_REFRESHED_WHILE_BUSY, Rate::measured(100, 100, 2_000_000)),
            ProbeGoal::floor(&probes::TOKEN_REFRESHED_BEFORE_EXPIRY, Rate::measured(26, 400, 18_400_000)),
        ];
        GOALS
    }

    fn control(&self) -> Option<&'static dyn Scenario> {
        Some(&CONTROL)
    }
}

/// Race 2 without its ingredient: registration tokens outlive the run.
pub static CONTROL: Control = Control {
    name: "token-refresh-recreation-control",
    describe: "race 2's world with registration tokens that outlive the run",
    race: &TokenRefreshRecreation,
    strip: |seed, variant| {
        let mut plan = race_world(seed, variant);
        plan.config.github.registration_token_ttl_ms = 10 * plan.config.horizon_ms;
        plan
    },
    goals: &[
        ProbeGoal::ceiling(&probes::TOKEN_EXPIRED_BEFORE_CONTAINER_START, Rate::measured(0, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::TOKEN_REFRESHED_WHILE_BUSY, Rate::measured(0, 100, 2_000_000)),
    ],
};

/// Race 2's world.
fn race_world(seed: Seed, variant: Variant) -> WorldPlan {
    let mut plan = legacy_world(seed, variant, RUNNERS);
    let workload = &mut plan.config.workload;
    workload.arrivals_per_minute = 1.0;
    workload.burst_probability = 0.0;
    workload.duration_ms_min = 60_000;
    workload.duration_ms_max = 300_000;
    workload.cancel_probability = 0.0;
    workload.horizon_ms = WORKLOAD_MS;
    plan.config.disruptions = crashes(seed);
    plan.config.horizon_ms = WORKLOAD_MS + 3_600_000;
    draw_party_clocks(seed, &mut plan, 0.5);
    plan
}
