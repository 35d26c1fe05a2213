//! Legacy runners that reach GitHub over HTTP (issue 42, item 3; docs/windows.md): legacy-steady-state's
//! draw. In a share of its worlds (a stream of its own, so every other draw of a seed stays as it was)
//! every legacy runner runs `config.sh` as the summerwind image's `startup.sh` runs it, over the fake
//! GitHub's HTTP interface, and creates its session so (`KubeletConfig::runner_sessions_over_http`).
//! Those worlds' GitHub then fails some of the runners' requests until the disruptions end: 500, 502
//! or 503 on 5–20% of the token exchanges, registrations and sessions, and in half of them 5–20% of
//! registrations commit and lose their answer. The legacy controller's own calls are not touched.

use arc_sim::Seed;
use arc_sim::faults::{GitHubFault, GitHubFaultAction, Window};
use rand::Rng;

use crate::scenario::WorldPlan;

/// The runner's own requests: `config.sh`'s two and its session.
const RUNNER_OPERATIONS: [&str; 3] = ["admin-token", "register-runner", "create-runner-session"];

/// In a share `worlds` of seeds, legacy runners reach GitHub over HTTP, and some of their requests
/// fail before `until_ms`.
pub fn draw_legacy_registrations(seed: Seed, plan: &mut WorldPlan, worlds: f64, until_ms: u64) {
    let mut rng = seed.named_rng("scenario/legacy-registrations");
    if !rng.random_bool(worlds) {
        return;
    }
    plan.config.kubelet.runner_sessions_over_http = true;
    let window = Some(Window { start_ms: 0, end_ms: until_ms });
    let operations = RUNNER_OPERATIONS.iter().map(|o| (*o).to_string()).collect();
    let code = [500, 502, 503][rng.random_range(0..3)];
    let probability = rng.random_range(0.05..0.2);
    let errors = GitHubFault { operations, probability, window, action: GitHubFaultAction::Error { code } };
    plan.config.faults.github.push(errors);
    if rng.random_bool(0.5) {
        plan.config.faults.github.push(GitHubFault {
            operations: vec!["register-runner".into()],
            probability: rng.random_range(0.05..0.2),
            window,
            action: GitHubFaultAction::CommitThenDrop,
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn legacy_steady_state_draws_it_in_about_half_its_worlds_and_legacy_standard_never() {
        let over_http =
            |name| crate::scenarios::worlds_drawing(name, |c| c.kubelet.runner_sessions_over_http);
        assert_eq!(over_http("legacy-standard"), 0, "legacy-standard keeps direct calls");
        assert!((8..32).contains(&over_http("legacy-steady-state")), "about half of legacy-steady-state");
        let faulted = crate::scenarios::worlds_drawing("legacy-steady-state", |c| {
            c.kubelet.runner_sessions_over_http != c.faults.github.is_empty()
        });
        assert_eq!(faulted, 40, "exactly the worlds over HTTP fail some runner requests");
    }
}
