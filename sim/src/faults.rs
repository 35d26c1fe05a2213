//! The fault plan: which faults the world injects, where, when and how often.
//!
//! A [`FaultPlan`] is plain data (serde JSON), so it can be printed in a replay line and read back from
//! the command line. The API server's fault layer reads [`FaultPlan::api`], the fake GitHub's reads
//! [`FaultPlan::github`]; both draw their dice from their own seeded stream, so the same seed and plan
//! give the same faults.

use std::fmt;

use serde::{Deserialize, Serialize};

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

/// A span of simulated time, in milliseconds since the run began: `[start_ms, end_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    /// First millisecond the fault is active.
    pub start_ms: u64,
    /// First millisecond it is no longer active.
    pub end_ms: u64,
}

impl Window {
    /// Whether `ms` falls inside the window.
    pub fn contains(&self, ms: u64) -> bool {
        self.start_ms <= ms && ms < self.end_ms
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
}

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
    "generate-jit-config",
    "get-runner",
    "get-runner-by-name",
    "remove-runner",
    "list-runners",
    "delete-runner",
    "installation-token",
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
    /// A watch-only action on a rule that names other verbs.
    #[error("fault rule {rule}: {action} applies to watches only; set \"verbs\": [\"watch\"]")]
    WatchOnly {
        /// Which rule.
        rule: String,
        /// The action.
        action: &'static str,
    },
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
        Ok(())
    }

    /// Whether the plan injects nothing.
    pub fn is_empty(&self) -> bool {
        self.api.is_empty() && self.github.is_empty()
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
        ApiFaultAction::Throttle { .. } | ApiFaultAction::Conflict => Ok(()),
        ApiFaultAction::DropWatch { min_ms, max_ms } => {
            if !watch_only {
                return Err(FaultPlanError::WatchOnly { rule: rule.into(), action: "drop-watch" });
            }
            check_range(rule, min_ms, max_ms)
        }
        ApiFaultAction::ExpireWatch if !watch_only => {
            Err(FaultPlanError::WatchOnly { rule: rule.into(), action: "expire-watch" })
        }
        ApiFaultAction::ExpireWatch => Ok(()),
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
    match fault.action {
        GitHubFaultAction::Latency { min_ms, max_ms } => check_range(rule, min_ms, max_ms),
        GitHubFaultAction::Error { code } => check_server_error(rule, code),
        GitHubFaultAction::Throttle { .. } => Ok(()),
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
        };
        let line = plan.to_json();
        assert_eq!(FaultPlan::parse(&line), Ok(plan));
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
            (r#"{"apy":[]}"#, "unknown field"),
            ("not json", "not valid JSON"),
        ];
        for (json, expected) in cases {
            let err = FaultPlan::parse(json).expect_err(json).to_string();
            assert!(err.contains(expected), "{json}: {err}");
        }
    }
}
