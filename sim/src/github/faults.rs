//! The fake GitHub's fault layer: the `github` rules of a [`FaultPlan`], rolled with dice from
//! `Component::GitHubFaults`.
//!
//! Rules are checked in order for every recognised request; a rule applies when its window contains
//! now and its operations include the request's (or are empty; a commit-then-fail rule applies to
//! mutating operations only). The first applicable rule whose roll hits decides: extra latency before
//! the request is served; a 5xx / 429 answered, or the connection dropped, instead of serving it
//! (nothing changes); or the request served, its change committed, and then a 5xx answered or the
//! connection dropped instead of the real answer. A roll is drawn only for applicable rules, so the
//! same seed, plan and request sequence give the same faults.

use std::time::Duration;

use rand::Rng as _;
use rand_chacha::ChaCha8Rng;

use super::operation::Operation;
use super::reply::Reply;
use crate::faults::{FaultPlan, GitHubFault, GitHubFaultAction};
use crate::seed::{Component, Seed};

/// How a request fails.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// The client gets this answer.
    Answer(Reply),
    /// The connection drops: the client gets a transport error.
    Drop,
}

/// What the fault layer decided for one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FaultDecision {
    /// Serve the request after this extra delay.
    Delay(Duration),
    /// Fail the request without serving it.
    Fail(Failure),
    /// Serve the request (its change commits), then fail it.
    CommitThenFail(Failure),
}

/// A rule that fired: its action and what it does to this request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Fired {
    pub action: GitHubFaultAction,
    pub decision: FaultDecision,
}

/// The rules and their dice.
pub(crate) struct FaultLayer {
    rules: Vec<GitHubFault>,
    rng: ChaCha8Rng,
}

impl FaultLayer {
    /// The layer for `plan.github` under `seed`.
    pub(super) fn new(seed: Seed, plan: &FaultPlan) -> Self {
        FaultLayer { rules: plan.github.clone(), rng: seed.rng(Component::GitHubFaults) }
    }

    /// The fault, if any, for `operation` at sim ms `now_ms`.
    pub(super) fn decide(&mut self, operation: Operation, now_ms: u64) -> Option<Fired> {
        let name = operation.as_str();
        for rule in &self.rules {
            let in_window = rule.window.is_none_or(|w| w.contains(now_ms));
            let names_op = rule.operations.is_empty() || rule.operations.iter().any(|o| o == name);
            let can_commit = !rule.action.commits_first() || operation.is_mutating();
            if !(in_window && names_op && can_commit) {
                continue;
            }
            if self.rng.random::<f64>() < rule.probability {
                let decision = apply(&rule.action, &mut self.rng);
                return Some(Fired { action: rule.action.clone(), decision });
            }
        }
        None
    }
}

fn server_error(code: u16) -> Failure {
    Failure::Answer(Reply::text(code, format!("injected fault: HTTP {code}")))
}

fn apply(action: &GitHubFaultAction, rng: &mut ChaCha8Rng) -> FaultDecision {
    match *action {
        GitHubFaultAction::Latency { min_ms, max_ms } => {
            FaultDecision::Delay(Duration::from_millis(rng.random_range(min_ms..=max_ms)))
        }
        GitHubFaultAction::Error { code } => FaultDecision::Fail(server_error(code)),
        GitHubFaultAction::Throttle { retry_after_seconds } => FaultDecision::Fail(Failure::Answer(
            Reply::rest_error(429, "API rate limit exceeded (injected fault)")
                .with_header("Retry-After", retry_after_seconds.to_string()),
        )),
        GitHubFaultAction::Drop => FaultDecision::Fail(Failure::Drop),
        GitHubFaultAction::CommitThenError { code } => FaultDecision::CommitThenFail(server_error(code)),
        GitHubFaultAction::CommitThenDrop => FaultDecision::CommitThenFail(Failure::Drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::Window;

    fn plan(rules: Vec<GitHubFault>) -> FaultPlan {
        FaultPlan { api: Vec::new(), github: rules, network: Vec::new(), perturbations: Vec::new() }
    }

    fn rule(operations: &[&str], probability: f64, action: GitHubFaultAction) -> GitHubFault {
        GitHubFault {
            operations: operations.iter().map(|o| (*o).to_string()).collect(),
            probability,
            window: None,
            action,
        }
    }

    fn decision(fired: Option<Fired>) -> Option<FaultDecision> {
        fired.map(|f| f.decision)
    }

    #[test]
    fn rules_apply_only_to_their_operations_and_window() {
        let mut windowed = rule(&["remove-runner"], 1.0, GitHubFaultAction::Error { code: 503 });
        windowed.window = Some(Window { start_ms: 100, end_ms: 200 });
        let mut layer = FaultLayer::new(Seed(1), &plan(vec![windowed]));
        assert_eq!(layer.decide(Operation::RemoveRunner, 50), None);
        assert_eq!(layer.decide(Operation::GetRunner, 150), None);
        let hit = decision(layer.decide(Operation::RemoveRunner, 150)).expect("fires");
        assert!(matches!(hit, FaultDecision::Fail(Failure::Answer(r)) if r.status == 503));
    }

    #[test]
    fn the_first_rule_that_fires_wins_and_throttles_carry_retry_after() {
        let rules = vec![
            rule(&[], 1.0, GitHubFaultAction::Throttle { retry_after_seconds: 3 }),
            rule(&[], 1.0, GitHubFaultAction::Error { code: 500 }),
        ];
        let mut layer = FaultLayer::new(Seed(1), &plan(rules));
        let Some(FaultDecision::Fail(Failure::Answer(reply))) =
            decision(layer.decide(Operation::GetMessage, 0))
        else {
            panic!("throttle")
        };
        assert_eq!(reply.status, 429);
        assert!(reply.headers.contains(&("Retry-After", "3".to_string())));
    }

    #[test]
    fn a_commit_then_fail_rule_without_operations_hits_only_mutating_ones() {
        let rules = vec![rule(&[], 1.0, GitHubFaultAction::CommitThenDrop)];
        let mut layer = FaultLayer::new(Seed(1), &plan(rules));
        assert_eq!(layer.decide(Operation::GetRunnerByName, 0), None);
        assert_eq!(layer.decide(Operation::GetMessage, 0), None);
        let fired = layer.decide(Operation::GenerateJitConfig, 0).expect("fires");
        assert_eq!(fired.action, GitHubFaultAction::CommitThenDrop);
        assert_eq!(fired.decision, FaultDecision::CommitThenFail(Failure::Drop));
    }

    #[test]
    fn the_same_seed_rolls_the_same_faults() {
        let rules = vec![rule(&[], 0.5, GitHubFaultAction::Latency { min_ms: 10, max_ms: 500 })];
        let roll = |seed| {
            let mut layer = FaultLayer::new(Seed(seed), &plan(rules.clone()));
            (0..50).map(|ms| decision(layer.decide(Operation::GetRunner, ms))).collect::<Vec<_>>()
        };
        assert_eq!(roll(9), roll(9));
        assert_ne!(roll(9), roll(10));
        assert!(roll(9).iter().any(Option::is_none) && roll(9).iter().any(Option::is_some));
    }
}
