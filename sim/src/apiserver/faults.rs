//! The API server's fault layer: decides, per request, whether a rule of the [`FaultPlan`] fires, and
//! words the admission answers it injects (quota 403, 422 Invalid) as kube-apiserver words them.
//!
//! Rules are checked in order and only rules that match the request's verb, resource and sim time roll
//! their dice, from the `apiserver-faults` stream; the first that fires decides. So the same seed, plan
//! and request sequence give the same faults.
//!
//! [`FaultPlan`]: crate::faults::FaultPlan

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::registry::ResourceType;
use super::status::{self, ApiError, Cause};
use super::{labels, quota};
use crate::faults::{ApiFault, ApiFaultAction, ApiVerb, COMMITTING_VERBS};

/// The transport error a client sees when the fault layer drops its connection after the request was
/// served ([`Injection::CommitThenDrop`]); over TCP the connection is closed without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("connection closed by the server before the response was sent (injected fault)")]
pub struct ConnectionDropped;

/// What the fault layer does to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injection {
    /// Wait this long, then serve the request.
    Delay(Duration),
    /// Answer with this server error; change nothing.
    ServerError(u16),
    /// Answer 429 with this Retry-After.
    Throttle(u32),
    /// Answer 409 Conflict; change nothing.
    Conflict,
    /// End the watch after this long.
    DropWatch(Duration),
    /// End the watch at once with 410 Expired.
    ExpireWatch,
    /// Let the watch go silent after this long, until its timeout.
    StallWatch(Duration),
    /// Answer a create with the ResourceQuota plugin's 403; change nothing.
    ForbiddenQuota,
    /// Answer with a 422 Invalid; change nothing.
    Invalid,
    /// Serve the write, then answer this server error instead of its result.
    CommitThenError(u16),
    /// Serve the write, then drop the connection.
    CommitThenDrop,
}

impl Injection {
    /// Whether the request is served before the fault acts.
    pub fn after_commit(self) -> bool {
        matches!(self, Injection::CommitThenError(_) | Injection::CommitThenDrop)
    }
}

/// The quota an injected `forbidden-quota` names.
pub const INJECTED_QUOTA: &str = "compute-resources";

/// The 403 an injected `forbidden-quota` answers a create of `name` with: the namespace's quota for
/// the kind is exactly used up by the `used` objects already there.
pub fn quota_exceeded(rt: &ResourceType, name: &str, used: i64) -> ApiError {
    let resource = quota::resource_names(rt).pop().expect("every kind has a quota name");
    let why = format!(
        "exceeded quota: {INJECTED_QUOTA}, requested: {resource}=1, used: {resource}={used}, limited: {resource}={used}"
    );
    status::forbidden(rt, name, &why)
}

/// The 422 an injected `invalid` answers a write of `name` with: for pods a container without an image
/// (`spec.containers[0].image: Required value`), for other kinds annotations over the size limit.
pub fn invalid(rt: &ResourceType, name: &str) -> ApiError {
    let cause = if rt.is_pod() {
        Cause {
            reason: "FieldValueRequired",
            field: "spec.containers[0].image".into(),
            message: "Required value".into(),
        }
    } else {
        Cause {
            reason: "FieldValueTooLong",
            field: "metadata.annotations".into(),
            message: format!("Too long: may not be more than {} bytes", labels::ANNOTATIONS_SIZE_MAX),
        }
    };
    status::invalid(rt, name, &[cause])
}

/// The fault rules and their dice.
pub struct FaultInjector {
    rules: Vec<ApiFault>,
    rng: ChaCha8Rng,
}

impl FaultInjector {
    /// Injects `rules` with dice from `rng`.
    pub fn new(rules: Vec<ApiFault>, rng: ChaCha8Rng) -> Self {
        FaultInjector { rules, rng }
    }

    /// Decides the fate of a `verb` request on `resource` at `now_ms`.
    pub fn decide(&mut self, verb: ApiVerb, resource: &str, now_ms: u64) -> Option<Injection> {
        let FaultInjector { rules, rng } = self;
        for rule in rules.iter() {
            if !applies(rule, verb, resource, now_ms) {
                continue;
            }
            if rng.random_bool(rule.probability) {
                return Some(injection(&rule.action, rng));
            }
        }
        None
    }
}

fn applies(rule: &ApiFault, verb: ApiVerb, resource: &str, now_ms: u64) -> bool {
    let verb_ok = rule.verbs.is_empty() || rule.verbs.contains(&verb);
    let resource_ok = rule.resources.is_empty() || rule.resources.iter().any(|r| r == resource);
    let window_ok = rule.window.is_none_or(|w| w.contains(now_ms));
    let action_ok = match rule.action {
        ApiFaultAction::Conflict => matches!(verb, ApiVerb::Update | ApiVerb::Patch | ApiVerb::Delete),
        ApiFaultAction::DropWatch { .. }
        | ApiFaultAction::ExpireWatch
        | ApiFaultAction::StallWatch { .. } => verb == ApiVerb::Watch,
        ApiFaultAction::ForbiddenQuota => verb == ApiVerb::Create,
        ApiFaultAction::Invalid => matches!(verb, ApiVerb::Create | ApiVerb::Update | ApiVerb::Patch),
        ApiFaultAction::CommitThenError { .. } | ApiFaultAction::CommitThenDrop => {
            COMMITTING_VERBS.contains(&verb)
        }
        _ => true,
    };
    verb_ok && resource_ok && window_ok && action_ok
}

fn injection(action: &ApiFaultAction, rng: &mut ChaCha8Rng) -> Injection {
    let ms = |rng: &mut ChaCha8Rng, min: u64, max: u64| Duration::from_millis(rng.random_range(min..=max));
    match *action {
        ApiFaultAction::Latency { min_ms, max_ms } => Injection::Delay(ms(rng, min_ms, max_ms)),
        ApiFaultAction::Error { code } => Injection::ServerError(code),
        ApiFaultAction::Throttle { retry_after_seconds } => Injection::Throttle(retry_after_seconds),
        ApiFaultAction::Conflict => Injection::Conflict,
        ApiFaultAction::DropWatch { min_ms, max_ms } => Injection::DropWatch(ms(rng, min_ms, max_ms)),
        ApiFaultAction::ExpireWatch => Injection::ExpireWatch,
        ApiFaultAction::StallWatch { min_ms, max_ms } => Injection::StallWatch(ms(rng, min_ms, max_ms)),
        ApiFaultAction::ForbiddenQuota => Injection::ForbiddenQuota,
        ApiFaultAction::Invalid => Injection::Invalid,
        ApiFaultAction::CommitThenError { code } => Injection::CommitThenError(code),
        ApiFaultAction::CommitThenDrop => Injection::CommitThenDrop,
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::faults::Window;

    fn rule(verbs: Vec<ApiVerb>, probability: f64, action: ApiFaultAction) -> ApiFault {
        ApiFault { verbs, resources: vec!["pods".into()], probability, window: None, action }
    }

    #[test]
    fn only_matching_rules_fire_and_the_first_wins() {
        let rules = vec![
            rule(vec![ApiVerb::Create], 1.0, ApiFaultAction::Error { code: 500 }),
            rule(vec![], 1.0, ApiFaultAction::Throttle { retry_after_seconds: 3 }),
        ];
        let mut f = FaultInjector::new(rules, ChaCha8Rng::seed_from_u64(1));
        assert_eq!(f.decide(ApiVerb::Create, "pods", 0), Some(Injection::ServerError(500)));
        assert_eq!(f.decide(ApiVerb::Get, "pods", 0), Some(Injection::Throttle(3)));
        assert_eq!(f.decide(ApiVerb::Get, "secrets", 0), None);
    }

    #[test]
    fn conflicts_hit_writes_only_and_windows_bound_rules() {
        let mut conflict = rule(vec![], 1.0, ApiFaultAction::Conflict);
        conflict.window = Some(Window { start_ms: 100, end_ms: 200 });
        let mut f = FaultInjector::new(vec![conflict], ChaCha8Rng::seed_from_u64(1));
        assert_eq!(f.decide(ApiVerb::Patch, "pods", 150), Some(Injection::Conflict));
        assert_eq!(f.decide(ApiVerb::Create, "pods", 150), None);
        assert_eq!(f.decide(ApiVerb::Patch, "pods", 200), None);
    }

    #[test]
    fn quota_refusals_hit_creates_and_invalid_answers_hit_writes() {
        let mut f = FaultInjector::new(
            vec![
                rule(vec![], 1.0, ApiFaultAction::ForbiddenQuota),
                rule(vec![], 1.0, ApiFaultAction::Invalid),
            ],
            ChaCha8Rng::seed_from_u64(1),
        );
        assert_eq!(f.decide(ApiVerb::Create, "pods", 0), Some(Injection::ForbiddenQuota));
        assert_eq!(f.decide(ApiVerb::Patch, "pods", 0), Some(Injection::Invalid));
        assert_eq!(f.decide(ApiVerb::Get, "pods", 0), None);
        let pods = crate::apiserver::fixtures::resource("pods");
        assert_eq!(
            quota_exceeded(&pods, "p", 3).message(),
            "pods \"p\" is forbidden: exceeded quota: compute-resources, requested: pods=1, used: pods=3, limited: pods=3"
        );
        assert_eq!(
            invalid(&pods, "p").message(),
            "Pod \"p\" is invalid: spec.containers[0].image: Required value"
        );
        let runners = crate::apiserver::fixtures::resource("ephemeralrunners");
        assert!(
            quota_exceeded(&runners, "r", 0)
                .message()
                .contains("count/ephemeralrunners.actions.github.com=1")
        );
    }

    #[test]
    fn commit_then_fail_hits_writes_only() {
        let mut f = FaultInjector::new(
            vec![rule(vec![], 1.0, ApiFaultAction::CommitThenError { code: 504 })],
            ChaCha8Rng::seed_from_u64(1),
        );
        assert_eq!(f.decide(ApiVerb::Create, "pods", 0), Some(Injection::CommitThenError(504)));
        assert_eq!(f.decide(ApiVerb::Delete, "pods", 0), Some(Injection::CommitThenError(504)));
        for verb in [ApiVerb::Get, ApiVerb::List, ApiVerb::Watch, ApiVerb::Deletecollection] {
            assert_eq!(f.decide(verb, "pods", 0), None, "{verb}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_faults() {
        let rules = vec![rule(vec![], 0.5, ApiFaultAction::Latency { min_ms: 1, max_ms: 900 })];
        let run = |seed| {
            let mut f = FaultInjector::new(rules.clone(), ChaCha8Rng::seed_from_u64(seed));
            (0..50).map(|_| f.decide(ApiVerb::Get, "pods", 0)).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        assert!(run(7).iter().any(Option::is_none) && run(7).iter().any(Option::is_some));
    }
}
