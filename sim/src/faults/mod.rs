//! The fault plan: which faults the world injects, where, when and how often.
//!
//! A [`FaultPlan`] is plain data (serde JSON), so it can be printed in a replay line and read back from
//! the command line. The API server's fault layer reads [`FaultPlan::api`], the fake GitHub's reads
//! [`FaultPlan::github`]; both draw their dice from their own seeded stream, so the same seed and plan
//! give the same faults.

use std::fmt;

use serde::{Deserialize, Serialize};

pub mod network;

pub use crate::window::Window;
pub use network::{NetFault, NetFaultError};

/// Every fault the world injects in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultPlan {
    /// Faults of the fake API server, checked in order; the first rule that fires wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api: Vec<ApiFault>,
    /// Faults of the fake GitHub service, checked in order; the first rule that fires wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub github: Vec<GitHubFault>,
    /// Faults of the network between the turmoil hosts (the turmoil backend only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<NetFault>,
    /// Perturbations at a run's read and write points (`arcsim explore`'s plans).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub perturbations: Vec<crate::perturb::Perturbation>,
}

/// A Kubernetes API verb, as the fault layer and the request counters name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiVerb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    Deletecollection,
}

impl ApiVerb {
    /// The verb's lowercase name, as kube-apiserver's audit log spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVerb::Get => "get",
            ApiVerb::List => "list",
            ApiVerb::Watch => "watch",
            ApiVerb::Create => "create",
            ApiVerb::Update => "update",
            ApiVerb::Patch => "patch",
            ApiVerb::Delete => "delete",
            ApiVerb::Deletecollection => "deletecollection",
        }
    }

    /// Whether the verb changes state.
    pub fn is_mutating(self) -> bool {
        matches!(
            self,
            ApiVerb::Create | ApiVerb::Update | ApiVerb::Patch | ApiVerb::Delete | ApiVerb::Deletecollection
        )
    }
}

impl fmt::Display for ApiVerb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One fault rule of the API server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiFault {
    /// Verbs the rule applies to; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verbs: Vec<ApiVerb>,
    /// Resources (plural names, e.g. `pods`, `ephemeralrunners`) the rule applies to; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
    /// Chance, in `[0, 1]`, that a matching request is hit.
    pub probability: f64,
    /// When the rule is active; absent means the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// What a hit does.
    pub action: ApiFaultAction,
}

/// What an API-server fault does to the request it hits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ApiFaultAction {
    /// Delay the request by a seeded duration in `[min_ms, max_ms]`, then serve it.
    Latency {
        /// Shortest delay.
        min_ms: u64,
        /// Longest delay.
        max_ms: u64,
    },
    /// Answer with a server error (500, 503 or 504) and change nothing.
    Error {
        /// The HTTP status.
        code: u16,
    },
    /// Answer 429 TooManyRequests with a `Retry-After` header and change nothing.
    Throttle {
        /// Seconds in `Retry-After` and `details.retryAfterSeconds`.
        retry_after_seconds: u32,
    },
    /// Answer a write that carries a precondition (a resourceVersion in an update or patch, delete
    /// preconditions) with 409 Conflict, as if the object had changed under the client. Writes without
    /// one are served: a real server never answers them Conflict.
    Conflict,
    /// End a watch stream after a seeded time in `[min_ms, max_ms]` (watch only).
    DropWatch {
        /// Earliest cut.
        min_ms: u64,
        /// Latest cut.
        max_ms: u64,
    },
    /// Answer a watch with the 410 Expired ERROR event at once, forcing a relist (watch only).
    ExpireWatch,
    /// Let a watch go silent after a seeded time in `[min_ms, max_ms]`: no event, bookmark or error
    /// reaches the client until the stream's own timeout ends it (the client's `timeoutSeconds`), as a
    /// watch whose server side or connection hangs (watch only).
    StallWatch {
        /// Earliest stall.
        min_ms: u64,
        /// Latest stall.
        max_ms: u64,
    },
    /// Answer a create with the ResourceQuota admission plugin's 403 (`pods "x" is forbidden:
    /// exceeded quota: compute-resources, requested: pods=1, used: pods=N, limited: pods=N`, N the
    /// objects of that kind in the namespace) and change nothing (create only).
    ForbiddenQuota,
    /// Answer a create, update or patch with a 422 Invalid as validation words it (pods:
    /// `spec.containers[0].image: Required value`; other kinds: annotations over the size limit) and
    /// change nothing.
    Invalid,
    /// Serve a create, update, patch or delete (the change commits and watchers hear of it), then
    /// answer 500 or 504 instead of the result, as a server whose deadline passed after the write
    /// reached etcd does. Requests that fail on their own get their own answer.
    CommitThenError {
        /// 500 (InternalError) or 504 (Timeout).
        code: u16,
    },
    /// Serve a create, update, patch or delete (the change commits), then drop the connection without
    /// an answer: the client sees a transport error.
    CommitThenDrop,
}

impl ApiFaultAction {
    /// Whether the action runs the request before it fails it (create, update, patch, delete only).
    pub fn commits_first(&self) -> bool {
        matches!(self, ApiFaultAction::CommitThenError { .. } | ApiFaultAction::CommitThenDrop)
    }
}

/// The verbs a commit-then-fail action can hit.
pub const COMMITTING_VERBS: &[ApiVerb] = &[ApiVerb::Create, ApiVerb::Update, ApiVerb::Patch, ApiVerb::Delete];

/// The fake GitHub operations a fault rule can name.
pub const GITHUB_OPERATIONS: &[&str] = &[
    "admin-token",
    "registration-token",
    "get-runner-group",
    "get-scale-set",
    "create-scale-set",
    "update-scale-set",
    "delete-scale-set",
    "create-session",
    "refresh-session",
    "delete-session",
    "get-message",
    "delete-message",
    "acquire-jobs",
    "get-acquirable-jobs",
    "generate-jit-config",
    "get-runner",
    "get-runner-by-name",
    "remove-runner",
    "list-runners",
    "delete-runner",
    "installation-token",
    "create-runner-session",
    "register-runner",
];

/// The fake GitHub operations that change state, the ones a `commit-then-error` or `commit-then-drop`
/// rule can hit (a rule with no operations hits exactly these).
pub const GITHUB_MUTATING_OPERATIONS: &[&str] = &[
    "admin-token",
    "registration-token",
    "create-scale-set",
    "update-scale-set",
    "delete-scale-set",
    "create-session",
    "refresh-session",
    "delete-session",
    "delete-message",
    "acquire-jobs",
    "generate-jit-config",
    "remove-runner",
    "delete-runner",
    "installation-token",
    "create-runner-session",
    "register-runner",
];

/// One fault rule of the fake GitHub service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitHubFault {
    /// Operations (from [`GITHUB_OPERATIONS`]) the rule applies to; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<String>,
    /// Chance, in `[0, 1]`, that a matching request is hit.
    pub probability: f64,
    /// When the rule is active; absent means the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// What a hit does.
    pub action: GitHubFaultAction,
}

/// What a GitHub fault does to the request it hits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum GitHubFaultAction {
    /// Delay the request by a seeded duration in `[min_ms, max_ms]`, then serve it.
    Latency {
        /// Shortest delay.
        min_ms: u64,
        /// Longest delay.
        max_ms: u64,
    },
    /// Answer with a server error (500, 502, 503 or 504) and change nothing.
    Error {
        /// The HTTP status.
        code: u16,
    },
    /// Answer 429 with a `Retry-After` header and change nothing.
    Throttle {
        /// Seconds in `Retry-After`.
        retry_after_seconds: u32,
    },
    /// Drop the connection without serving the request: nothing changes and the client sees a
    /// transport error.
    Drop,
    /// Serve the request, so its state change commits, then answer a server error (500, 502, 503 or
    /// 504) instead of the real answer, as a gateway timing out after the backend committed would.
    /// Mutating operations only ([`GITHUB_MUTATING_OPERATIONS`]).
    CommitThenError {
        /// The HTTP status the client gets.
        code: u16,
    },
    /// Serve the request, so its state change commits, then drop the connection before the answer:
    /// the client sees a transport error. Mutating operations only.
    CommitThenDrop,
}

impl GitHubFaultAction {
    /// The action's name, as a plan spells its `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            GitHubFaultAction::Latency { .. } => "latency",
            GitHubFaultAction::Error { .. } => "error",
            GitHubFaultAction::Throttle { .. } => "throttle",
            GitHubFaultAction::Drop => "drop",
            GitHubFaultAction::CommitThenError { .. } => "commit-then-error",
            GitHubFaultAction::CommitThenDrop => "commit-then-drop",
        }
    }

    /// Whether the action serves the request (commits its change) before failing it.
    pub fn commits_first(&self) -> bool {
        matches!(self, GitHubFaultAction::CommitThenError { .. } | GitHubFaultAction::CommitThenDrop)
    }
}

impl fmt::Display for GitHubFaultAction {
    /// `latency 10..500ms`, `error 503`, `throttle retry-after=2s`, `drop`, `commit-then-error 504`,
    /// `commit-then-drop`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitHubFaultAction::Latency { min_ms, max_ms } => write!(f, "latency {min_ms}..{max_ms}ms"),
            GitHubFaultAction::Error { code } | GitHubFaultAction::CommitThenError { code } => {
                write!(f, "{} {code}", self.kind())
            }
            GitHubFaultAction::Throttle { retry_after_seconds } => {
                write!(f, "throttle retry-after={retry_after_seconds}s")
            }
            GitHubFaultAction::Drop | GitHubFaultAction::CommitThenDrop => f.write_str(self.kind()),
        }
    }
}

/// Why a fault plan was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FaultPlanError {
    /// Not valid JSON for a plan.
    #[error("fault plan is not valid JSON for a plan: {0}")]
    Syntax(String),
    /// A probability outside `[0, 1]`.
    #[error("fault rule {rule}: probability {value} is outside [0, 1]")]
    Probability {
        /// Which rule (`api[2]`, `github[0]`).
        rule: String,
        /// The bad value.
        value: f64,
    },
    /// A range whose minimum exceeds its maximum, or an empty window.
    #[error("fault rule {rule}: {what}")]
    Range {
        /// Which rule.
        rule: String,
        /// What is wrong.
        what: String,
    },
    /// A status code the action cannot produce.
    #[error("fault rule {rule}: status {code} is not a server error (use 500, 502, 503 or 504)")]
    Code {
        /// Which rule.
        rule: String,
        /// The bad code.
        code: u16,
    },
    /// An unknown GitHub operation name.
    #[error("fault rule {rule}: unknown GitHub operation {name:?}; valid: {valid}")]
    Operation {
        /// Which rule.
        rule: String,
        /// The bad name.
        name: String,
        /// The valid names, comma separated.
        valid: String,
    },
    /// A commit-then-fail action on a rule that names an operation that changes nothing.
    #[error(
        "fault rule {rule}: {action} needs an operation that changes state, and {name:?} does not; mutating operations: {valid}"
    )]
    NotMutating {
        /// Which rule.
        rule: String,
        /// The action.
        action: &'static str,
        /// The read-only operation.
        name: String,
        /// The mutating operations, comma separated.
        valid: String,
    },
    /// A watch-only action on a rule that names other verbs.
    #[error("fault rule {rule}: {action} applies to watches only; set \"verbs\": [\"watch\"]")]
    WatchOnly {
        /// Which rule.
        rule: String,
        /// The action.
        action: &'static str,
    },
    /// A commit-then-fail action on a rule that names a verb that commits nothing.
    #[error(
        "fault rule {rule}: {action} applies to create, update, patch and delete only, not {verb}; list those verbs or none"
    )]
    CommittingOnly {
        /// Which rule.
        rule: String,
        /// The action.
        action: &'static str,
        /// The verb that cannot commit.
        verb: ApiVerb,
    },
    /// A commit-then-error code other than 500 or 504.
    #[error("fault rule {rule}: commit-then-error answers 500 or 504, not {code}")]
    AfterCommitCode {
        /// Which rule.
        rule: String,
        /// The bad code.
        code: u16,
    },
    /// A network fault is invalid.
    #[error(transparent)]
    Network(#[from] NetFaultError),
}

impl FaultPlan {
    /// The plan with no faults.
    pub fn none() -> Self {
        Self::default()
    }

    /// Parses and validates a plan from JSON.
    pub fn parse(json: &str) -> Result<Self, FaultPlanError> {
        let plan: FaultPlan =
            serde_json::from_str(json).map_err(|e| FaultPlanError::Syntax(e.to_string()))?;
        plan.validate()?;
        Ok(plan)
    }

    /// Checks every rule; the first problem found is returned.
    pub fn validate(&self) -> Result<(), FaultPlanError> {
        for (i, rule) in self.api.iter().enumerate() {
            let name = format!("api[{i}]");
            check_common(&name, rule.probability, rule.window)?;
            check_api_action(&name, rule)?;
        }
        for (i, rule) in self.github.iter().enumerate() {
            let name = format!("github[{i}]");
            check_common(&name, rule.probability, rule.window)?;
            check_github_rule(&name, rule)?;
        }
        for (i, fault) in self.network.iter().enumerate() {
            fault.validate(&format!("network[{i}]"))?;
        }
        Ok(())
    }

    /// Whether the plan injects nothing.
    pub fn is_empty(&self) -> bool {
        self.api.is_empty() && self.github.is_empty() && self.network.is_empty()
    }

    /// The plan as one line of JSON, for replay lines and logs.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a fault plan always serialises")
    }
}

fn check_common(rule: &str, probability: f64, window: Option<Window>) -> Result<(), FaultPlanError> {
    if !(0.0..=1.0).contains(&probability) {
        return Err(FaultPlanError::Probability { rule: rule.into(), value: probability });
    }
    if let Some(w) = window.filter(|w| w.start_ms >= w.end_ms) {
        let what = format!("window [{}, {}) is empty", w.start_ms, w.end_ms);
        return Err(FaultPlanError::Range { rule: rule.into(), what });
    }
    Ok(())
}

fn check_range(rule: &str, min_ms: u64, max_ms: u64) -> Result<(), FaultPlanError> {
    if min_ms > max_ms {
        let what = format!("min_ms {min_ms} exceeds max_ms {max_ms}");
        return Err(FaultPlanError::Range { rule: rule.into(), what });
    }
    Ok(())
}

fn check_server_error(rule: &str, code: u16) -> Result<(), FaultPlanError> {
    if matches!(code, 500 | 502 | 503 | 504) {
        Ok(())
    } else {
        Err(FaultPlanError::Code { rule: rule.into(), code })
    }
}

fn check_api_action(rule: &str, fault: &ApiFault) -> Result<(), FaultPlanError> {
    let watch_only = !fault.verbs.is_empty() && fault.verbs.iter().all(|v| *v == ApiVerb::Watch);
    match fault.action {
        ApiFaultAction::Latency { min_ms, max_ms } => check_range(rule, min_ms, max_ms),
        ApiFaultAction::Error { code } => check_server_error(rule, code),
        ApiFaultAction::Throttle { .. }
        | ApiFaultAction::Conflict
        | ApiFaultAction::ForbiddenQuota
        | ApiFaultAction::Invalid => Ok(()),
        ApiFaultAction::DropWatch { min_ms, max_ms } => {
            if !watch_only {
                return Err(FaultPlanError::WatchOnly { rule: rule.into(), action: "drop-watch" });
            }
            check_range(rule, min_ms, max_ms)
        }
        ApiFaultAction::StallWatch { min_ms, max_ms } => {
            if !watch_only {
                return Err(FaultPlanError::WatchOnly { rule: rule.into(), action: "stall-watch" });
            }
            check_range(rule, min_ms, max_ms)
        }
        ApiFaultAction::ExpireWatch if !watch_only => {
            Err(FaultPlanError::WatchOnly { rule: rule.into(), action: "expire-watch" })
        }
        ApiFaultAction::ExpireWatch => Ok(()),
        ApiFaultAction::CommitThenError { code } => {
            check_committing(rule, fault, "commit-then-error")?;
            if matches!(code, 500 | 504) {
                Ok(())
            } else {
                Err(FaultPlanError::AfterCommitCode { rule: rule.into(), code })
            }
        }
        ApiFaultAction::CommitThenDrop => check_committing(rule, fault, "commit-then-drop"),
    }
}

fn check_committing(rule: &str, fault: &ApiFault, action: &'static str) -> Result<(), FaultPlanError> {
    match fault.verbs.iter().find(|v| !COMMITTING_VERBS.contains(v)) {
        Some(verb) => Err(FaultPlanError::CommittingOnly { rule: rule.into(), action, verb: *verb }),
        None => Ok(()),
    }
}

fn check_github_rule(rule: &str, fault: &GitHubFault) -> Result<(), FaultPlanError> {
    if let Some(bad) = fault.operations.iter().find(|op| !GITHUB_OPERATIONS.contains(&op.as_str())) {
        return Err(FaultPlanError::Operation {
            rule: rule.into(),
            name: bad.clone(),
            valid: GITHUB_OPERATIONS.join(", "),
        });
    }
    if fault.action.commits_first()
        && let Some(read) =
            fault.operations.iter().find(|op| !GITHUB_MUTATING_OPERATIONS.contains(&op.as_str()))
    {
        return Err(FaultPlanError::NotMutating {
            rule: rule.into(),
            action: fault.action.kind(),
            name: read.clone(),
            valid: GITHUB_MUTATING_OPERATIONS.join(", "),
        });
    }
    match fault.action {
        GitHubFaultAction::Latency { min_ms, max_ms } => check_range(rule, min_ms, max_ms),
        GitHubFaultAction::Error { code } | GitHubFaultAction::CommitThenError { code } => {
            check_server_error(rule, code)
        }
        GitHubFaultAction::Throttle { .. } | GitHubFaultAction::Drop | GitHubFaultAction::CommitThenDrop => {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_round_trips_through_its_json_line() {
        let plan = FaultPlan {
            api: vec![ApiFault {
                verbs: vec![ApiVerb::Create],
                resources: vec!["pods".into()],
                probability: 0.25,
                window: Some(Window { start_ms: 0, end_ms: 60_000 }),
                action: ApiFaultAction::Error { code: 500 },
            }],
            github: vec![GitHubFault {
                operations: vec!["remove-runner".into()],
                probability: 1.0,
                window: None,
                action: GitHubFaultAction::Throttle { retry_after_seconds: 2 },
            }],
            network: vec![NetFault::DropLongPoll { at_ms: 5_000 }],
            perturbations: Vec::new(),
        };
        let line = plan.to_json();
        assert_eq!(FaultPlan::parse(&line), Ok(plan));
    }

    #[test]
    fn admission_refusals_are_fault_actions() {
        let line = r#"{"api":[{"verbs":["create"],"resources":["pods"],"probability":0.1,"action":{"kind":"forbidden-quota"}},{"probability":0.1,"action":{"kind":"invalid"}}]}"#;
        let plan = FaultPlan::parse(line).unwrap();
        assert_eq!(plan.api[0].action, ApiFaultAction::ForbiddenQuota);
        assert_eq!(plan.api[1].action, ApiFaultAction::Invalid);
        assert_eq!(plan.to_json(), line);
    }

    #[test]
    fn commit_then_fail_actions_parse_from_their_json() {
        let plan = FaultPlan::parse(
            r#"{"api":[{"verbs":["create","delete"],"resources":["pods"],"probability":0.1,"action":{"kind":"commit-then-error","code":504}},{"probability":0.05,"action":{"kind":"commit-then-drop"}}]}"#,
        )
        .expect("a valid plan");
        assert_eq!(plan.api[0].action, ApiFaultAction::CommitThenError { code: 504 });
        assert_eq!(plan.api[1].action, ApiFaultAction::CommitThenDrop);
        assert!(plan.api.iter().all(|r| r.action.commits_first()));
        assert_eq!(FaultPlan::parse(&plan.to_json()), Ok(plan));
    }

    #[test]
    fn bad_plans_get_errors_that_name_the_rule() {
        let cases = [
            (r#"{"api":[{"probability":1.5,"action":{"kind":"conflict"}}]}"#, "api[0]: probability 1.5"),
            (r#"{"api":[{"probability":1,"action":{"kind":"error","code":404}}]}"#, "status 404"),
            (r#"{"api":[{"probability":1,"action":{"kind":"expire-watch"}}]}"#, "watches only"),
            (
                r#"{"github":[{"operations":["nope"],"probability":1,"action":{"kind":"error","code":500}}]}"#,
                "nope",
            ),
            (r#"{"api":[{"probability":1,"action":{"kind":"latency","min_ms":5,"max_ms":1}}]}"#, "exceeds"),
            (
                r#"{"github":[{"operations":["get-runner"],"probability":1,"action":{"kind":"commit-then-drop"}}]}"#,
                "commit-then-drop needs an operation that changes state, and \"get-runner\" does not",
            ),
            (
                r#"{"github":[{"probability":1,"action":{"kind":"commit-then-error","code":409}}]}"#,
                "github[0]: status 409 is not a server error",
            ),
            (r#"{"apy":[]}"#, "unknown field"),
            (r#"{"api":[{"probability":1,"action":{"kind":"forbidden"}}]}"#, "unknown variant"),
            (
                r#"{"api":[{"verbs":["create","list"],"probability":1,"action":{"kind":"commit-then-drop"}}]}"#,
                "commit-then-drop applies to create, update, patch and delete only, not list",
            ),
            (
                r#"{"api":[{"probability":1,"action":{"kind":"commit-then-error","code":503}}]}"#,
                "commit-then-error answers 500 or 504, not 503",
            ),
            ("not json", "not valid JSON"),
        ];
        for (json, expected) in cases {
            let err = FaultPlan::parse(json).expect_err(json).to_string();
            assert!(err.contains(expected), "{json}: {err}");
        }
    }
}
