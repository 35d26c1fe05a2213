//! `legacy-steady-state`: `legacy-standard` with what production does to legacy runners, drawn from
//! the seed at the swarm's counts (`steady-state`'s disruptions and watch lags) and spread over the
//! workload and the first half of the heal (idle runners crash too): the controller restarted 0–2
//! times, a runner container OOM-killed (exit 137, reason `OOMKilled`) 0–2 times, and watch and watch-cache lag per
//! resource from ranges that include 0, in half the worlds a clock per party (`super::clocks`), and
//! in half runners that reach GitHub over HTTP with some of their requests failing
//! (`super::legacy_registrations`). No slow starts: they do not open #1295's window against a
//! 30-minute reuse margin (docs/windows.md).
//! Nothing is timed to a race: `bug-1087` fails here only when a
//! runner that sat idle past its token's expiry later crashes while busy, so the kubelet restarts its
//! container in place with the old token, as it would in a cluster. No evictions (a simplification):
//! the modelled legacy controller (ARC-MODEL §7, Feb 2022) restarts only a pod that succeeded or whose
//! runner exited 0, so an evicted pod stays Failed in every version and no world with one converges.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_world::Disruption;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::clocks::draw_party_clocks;
use super::legacy_registrations::draw_legacy_registrations;
use super::legacy_standard::{self, legacy_oracles};
use super::objects::RUNNER_NAMESPACE;
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::Oracle;
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

/// The standard workload on legacy runners, disrupted.
pub struct LegacySteadyState;

/// The resources the legacy controller watches (and the kubelet reads pods from).
const WATCHED: [&str; 2] = ["runners", "pods"];

/// Disruptions stop here, half-way through the heal, so the world has a quarter of an hour to settle.
pub const DISRUPTIONS_END_MS: u64 = legacy_standard::WORKLOAD_MS + legacy_standard::HEAL_MS / 2;

/// The seed's disruptions, each at a uniform time from the first half minute to
/// [`DISRUPTIONS_END_MS`]: production's crashes come when runners are busy and when they sit idle.
fn disruptions(rng: &mut ChaCha8Rng) -> Vec<Disruption> {
    let at = |rng: &mut ChaCha8Rng| rng.random_range(30_000..DISRUPTIONS_END_MS);
    let runner =
        |rng: &mut ChaCha8Rng| format!("legacy-runner-{}", rng.random_range(0..legacy_standard::RUNNERS));
    let mut out = Vec::new();
    for _ in 0..rng.random_range(0..3) {
        out.push(Disruption::RestartController { at_ms: at(rng) });
    }
    for _ in 0..rng.random_range(0..3) {
        let (at_ms, prefix) = (at(rng), runner(rng));
        out.push(Disruption::OomKillPod { at_ms, namespace: RUNNER_NAMESPACE.into(), prefix });
    }
    out
}

impl Scenario for LegacySteadyState {
    fn name(&self) -> &'static str {
        "legacy-steady-state"
    }

    fn describe(&self) -> &'static str {
        "legacy-standard with the swarm's watch lags, controller restarts and runner-container OOM kills"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        let mut plan = legacy_standard::LegacyStandard.world(seed, variant);
        let mut rng = seed.named_rng("scenario/legacy-steady-state");
        let apiserver = &mut plan.config.apiserver;
        for plural in WATCHED {
            let max_ms = [0, 50, 500, 2_000][rng.random_range(0..4)];
            apiserver.watch_lag.per_resource.insert(plural.into(), LagRange::between(0, max_ms));
            let max_ms = [0, 10, 100, 1_000][rng.random_range(0..4)];
            apiserver.watch_cache_lag.per_resource.insert(plural.into(), LagRange::between(0, max_ms));
        }
        plan.config.disruptions = disruptions(&mut rng);
        draw_party_clocks(seed, &mut plan, 0.5);
        draw_legacy_registrations(seed, &mut plan, 0.5, DISRUPTIONS_END_MS);
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        legacy_oracles()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const GOALS: &[ProbeGoal] = &[
            ProbeGoal::floor(&probes::TOKEN_REFRESHED_BEFORE_EXPIRY, Rate::measured(23, 400, 18_400_000)),
            ProbeGoal::floor(&probes::CONFIG_SH_REQUEST_RETRIED, Rate::measured(103, 200, 28_600_000)),
            ProbeGoal::floor(
                &probes::CONFIG_SH_REGISTRATION_ANSWER_LOST,
                Rate::measured(42, 200, 28_600_000),
            ),
        ];
        GOALS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disruptions_fall_before_the_last_quarter_hour_at_the_swarms_counts() {
        for seed in 0..200 {
            let plan = LegacySteadyState.world(Seed(seed), Variant::Fixed);
            let count = |f: fn(&Disruption) -> bool| plan.config.disruptions.iter().filter(|d| f(d)).count();
            assert!(count(|d| matches!(d, Disruption::RestartController { .. })) <= 2);
            assert!(count(|d| matches!(d, Disruption::OomKillPod { .. })) <= 2);
            assert_eq!(count(|d| matches!(d, Disruption::EvictPod { .. })), 0);
            assert!(plan.config.disruptions.iter().all(|d| d.at_ms() < DISRUPTIONS_END_MS));
        }
    }
}
