//! Load (issue 42, item 7; docs/windows.md): the steady-state swarm's draw of an API server under its
//! other tenants' load. In a share of the worlds the server's priority level has 4–12 seats for the
//! world's clients and a queue of 0–16, requests wait at most 15 s (APF's limit on a default server),
//! and the other tenants come in bursts every 10–120 s that hold up to every seat for 2–30 s, until the
//! swarm's heal (no burst starts after it, as no fault does); the
//! controller's requests then queue, are served more slowly, and are turned away with APF's 429
//! (`Retry-After: 1`), which its client retries as client-go does.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;
use arc_sim::apiserver::load::{LoadConfig, TenantBursts};
use rand::Rng;

use crate::scenario::WorldPlan;

/// How long a request may wait for a seat: a quarter of kube-apiserver's 60 s request timeout.
pub const MAX_WAIT_MS: u64 = 15_000;

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), the API server is under load; no burst of the other tenants starts from `heal_ms` on.
pub fn draw_load(seed: Seed, plan: &mut WorldPlan, worlds: f64, heal_ms: u64) {
    let mut rng = seed.named_rng("scenario/load");
    if !rng.random_bool(worlds) {
        return;
    }
    let seats = rng.random_range(4..=12);
    plan.config.apiserver.load = Some(LoadConfig {
        seats,
        queue_length: rng.random_range(0..=16),
        max_wait_ms: MAX_WAIT_MS,
        tenants: TenantBursts {
            gap_ms: LagRange::between(10_000, 120_000),
            length_ms: LagRange::between(2_000, 30_000),
            max_busy_seats: seats,
            until_ms: Some(heal_ms),
        },
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swarm_draws_it_in_some_worlds_and_the_race_worlds_never() {
        let loaded = |name| crate::scenarios::worlds_drawing(name, |c| c.apiserver.load.is_some());
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(loaded(name), 0, "{name} serves every request at once");
        }
        assert!(
            (6..26).contains(&loaded("steady-state")),
            "steady-state draws it in about 40% of its worlds"
        );
    }
}
