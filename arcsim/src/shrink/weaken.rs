//! Weaker forms of a step, tried in order once the steps that can go have gone: a fault that fails
//! or crashes a request becomes a short delay (5xx, throttle, conflict, dropped connection,
//! commit-then-fail → latency 1–100 ms), a long delay or lag is halved (down to the default 20 ms), a
//! rule's probability is halved (down to 1%). Disruptions and network faults have no weaker form
//! here, nor do perturbations: they stay or go whole.

use arc_sim::apiserver::LagRange;
use arc_sim::faults::{ApiFault, ApiFaultAction, GitHubFault, GitHubFaultAction};

use super::steps::Step;

/// A delay no longer than this is as weak as a delay gets.
const SHORTEST_MAX_MS: u64 = 20;
/// A probability no higher than this is as weak as a probability gets.
const LOWEST_PROBABILITY: f64 = 0.01;
/// The delay a failing request is weakened into.
const SHORT_DELAY: (u64, u64) = (1, 100);

/// The weaker forms of `step`, strongest change first; empty when it has none.
pub fn weakenings(step: &Step) -> Vec<Step> {
    match step {
        Step::Api(rule) => api(rule).into_iter().map(Step::Api).collect(),
        Step::GitHub(rule) => github(rule).into_iter().map(Step::GitHub).collect(),
        Step::WatchLag(plural, lag) => {
            halved(*lag).map(|l| Step::WatchLag(plural.clone(), l)).into_iter().collect()
        }
        Step::CacheLag(plural, lag) => {
            halved(*lag).map(|l| Step::CacheLag(plural.clone(), l)).into_iter().collect()
        }
        Step::Network(_) | Step::Disruption(_) | Step::Perturbation(_) => Vec::new(),
    }
}

fn api(rule: &ApiFault) -> Vec<ApiFault> {
    let with = |action| ApiFault { action, ..rule.clone() };
    let mut out = Vec::new();
    match &rule.action {
        ApiFaultAction::Latency { min_ms, max_ms } => {
            if let Some(l) = halved(LagRange::between(*min_ms, *max_ms)) {
                out.push(with(ApiFaultAction::Latency { min_ms: l.min_ms, max_ms: l.max_ms }));
            }
        }
        _ => out.push(with(ApiFaultAction::Latency { min_ms: SHORT_DELAY.0, max_ms: SHORT_DELAY.1 })),
    }
    if let Some(p) = halved_probability(rule.probability) {
        out.push(ApiFault { probability: p, ..rule.clone() });
    }
    out
}

fn github(rule: &GitHubFault) -> Vec<GitHubFault> {
    let with = |action| GitHubFault { action, ..rule.clone() };
    let mut out = Vec::new();
    match &rule.action {
        GitHubFaultAction::Latency { min_ms, max_ms } => {
            if let Some(l) = halved(LagRange::between(*min_ms, *max_ms)) {
                out.push(with(GitHubFaultAction::Latency { min_ms: l.min_ms, max_ms: l.max_ms }));
            }
        }
        _ => out.push(with(GitHubFaultAction::Latency { min_ms: SHORT_DELAY.0, max_ms: SHORT_DELAY.1 })),
    }
    if let Some(p) = halved_probability(rule.probability) {
        out.push(GitHubFault { probability: p, ..rule.clone() });
    }
    out
}

/// `lag` with its longest delay halved (its shortest no longer than that), unless already short.
fn halved(lag: LagRange) -> Option<LagRange> {
    (lag.max_ms > SHORTEST_MAX_MS).then(|| {
        let max_ms = lag.max_ms / 2;
        LagRange::between(lag.min_ms.min(max_ms), max_ms)
    })
}

/// Half of `p`, unless already low.
fn halved_probability(p: f64) -> Option<f64> {
    (p > LOWEST_PROBABILITY).then_some(p / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_request_weakens_to_a_short_delay_then_a_lower_chance() {
        let rule = GitHubFault {
            operations: vec![],
            probability: 0.3,
            window: None,
            action: GitHubFaultAction::CommitThenDrop,
        };
        let weaker = weakenings(&Step::GitHub(rule.clone()));
        assert_eq!(weaker.len(), 2);
        assert!(
            matches!(&weaker[0], Step::GitHub(r) if r.action == GitHubFaultAction::Latency { min_ms: 1, max_ms: 100 })
        );
        assert!(matches!(&weaker[1], Step::GitHub(r) if r.probability == 0.15));
    }

    #[test]
    fn lags_halve_down_to_the_default_and_disruptions_do_not_weaken() {
        let lag = Step::WatchLag("pods".into(), LagRange::between(1_000, 3_000));
        assert_eq!(weakenings(&lag), vec![Step::WatchLag("pods".into(), LagRange::between(1_000, 1_500))]);
        assert!(weakenings(&Step::WatchLag("pods".into(), LagRange::between(0, 20))).is_empty());
        let restart = Step::Disruption(arc_world::Disruption::RestartController { at_ms: 5 });
        assert!(weakenings(&restart).is_empty());
    }
}
