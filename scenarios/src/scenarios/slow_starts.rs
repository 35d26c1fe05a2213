//! Slow starts (issue 42, item 3; docs/windows.md): the steady-state swarm's draw of a node that
//! starts pods slowly. In a share of the worlds 10–50% of pods pull their image slowly (10 s to 4 min,
//! log-uniform), 0–30% of pods fail their pull 1–4 times first (each failure after 1–30 s, then the
//! kubelet's image backoff of 10 s doubling), and every runner boots for 2–15 s between its container
//! running and its session at GitHub. Not healed: a node pulls as slowly after the swarm's heal as
//! before it.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::SlowStarts;
use rand::Rng;

use crate::scenario::WorldPlan;

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), the node starts pods slowly.
pub fn draw_slow_starts(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    let mut rng = seed.named_rng("scenario/slow-starts");
    if !rng.random_bool(worlds) {
        return;
    }
    plan.config.kubelet.slow_starts = Some(SlowStarts {
        slow_pull_percent: rng.random_range(10..=50),
        slow_pull: LagRange::between(10_000, 240_000),
        failed_pull_percent: rng.random_range(0..=30),
        max_failed_pulls: rng.random_range(1..=4),
        failed_pull: LagRange::between(1_000, 30_000),
        runner_boot: LagRange::between(2_000, 15_000),
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swarm_draws_it_in_some_worlds_and_the_race_worlds_never() {
        let slow = |name| crate::scenarios::worlds_drawing(name, |c| c.kubelet.slow_starts.is_some());
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(slow(name), 0, "{name} starts every pod quickly");
        }
        assert!((6..26).contains(&slow("steady-state")), "steady-state draws it in about 40% of its worlds");
    }
}
