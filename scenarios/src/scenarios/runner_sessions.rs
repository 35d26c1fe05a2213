//! Runners that reach GitHub over its HTTP interface (issue 42, item 3; docs/windows.md): the
//! steady-state swarm's draw of `KubeletConfig::runner_sessions_over_http`. In a share of the worlds
//! every runner process creates its session with a request the fake GitHub serves like any other
//! (its latency, the world's GitHub fault rules), and tries again as actions/runner does: every 30 s,
//! through conflicts for 4 minutes, never after `invalid_client`.

use arc_sim::Seed;
use rand::Rng;

use crate::scenario::WorldPlan;

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), runners create their sessions over HTTP.
pub fn draw_runner_sessions(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    if seed.named_rng("scenario/runner-sessions").random_bool(worlds) {
        plan.config.kubelet.runner_sessions_over_http = true;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swarm_draws_it_in_about_half_its_worlds_and_the_race_worlds_never() {
        let over_http =
            |name| crate::scenarios::worlds_drawing(name, |c| c.kubelet.runner_sessions_over_http);
        for name in crate::scenarios::RACE_WORLDS {
            assert_eq!(over_http(name), 0, "{name} keeps direct sessions");
        }
        assert!(
            (8..32).contains(&over_http("steady-state")),
            "steady-state draws it in about half its worlds"
        );
    }
}
