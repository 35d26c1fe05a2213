//! Runners that outlive their registration (issue 42, item 8; docs/windows.md): the steady-state
//! swarm's draw of the assumption `removed-runner-poll`. Under `registration-not-found` a runner removed while it polls
//! for jobs fails its poll with "Registration … was not found" and retries as actions/runner does, so
//! its pod runs on for 6.6–16.5 minutes unless it is deleted first; under the default it stops at once.

use arc_sim::Seed;
use arc_sim::github::Assumed;
use rand::Rng;

use crate::scenario::WorldPlan;

/// In a share `worlds` of seeds (from a stream of its own, so every other draw of a seed stays as it
/// was), the fake GitHub answers a removed runner's poll "Registration … was not found".
pub fn draw_removed_runner_poll(seed: Seed, plan: &mut WorldPlan, worlds: f64) {
    if seed.named_rng("scenario/removed-runner-poll").random_bool(worlds) {
        let retried =
            Assumed::parse(["removed-runner-poll=registration-not-found"]).expect("a known alternative");
        retried.apply(&mut plan.config.github);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swarm_draws_it_in_about_half_its_worlds_and_the_race_worlds_never() {
        let retried =
            |name| crate::scenarios::worlds_drawing(name, |c| c.github.removed_registration_retried);
        for name in crate::scenarios::RACE_WORLDS.into_iter().chain(["legacy-steady-state"]) {
            assert_eq!(retried(name), 0, "{name} keeps the default");
        }
        assert!((8..32).contains(&retried("steady-state")), "steady-state draws it in about half its worlds");
    }
}
