//! [`GitHubConfig`]: the fake service's knobs, plain serde data with documented defaults.
//!
//! Durations are simulated milliseconds, units last in the names. The defaults follow the real service
//! where ARC's sources or docs say what it does (a ~50 s long poll, 1 h registration tokens, a 60 s
//! ListRunners cache) and are stated assumptions elsewhere (lost-runner timeout, token lifetimes,
//! assignment latency, session idle expiry, the timing model of `super::timing`).

use serde::{Deserialize, Serialize};

use super::timing::{DelayRange, ServiceLatency};

/// What RemoveRunner answers for a runner id the service does not know (ARC-MODEL §12.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnknownRunnerAnswer {
    /// 204, as ADR 2022-12-27 documents: removing a missing runner succeeds.
    #[default]
    NoContent,
    /// 404 `AgentNotFoundException` for every unknown id (a removed runner's included), to exercise
    /// ARC's error path.
    NotFound,
    /// 404 for id 0 only (a runner ARC never learnt the id of); 204 for any other unknown id, a
    /// removed runner's included (ARC #4653).
    NotFoundForIdZero,
}

/// Configuration of one [`super::FakeGitHub`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GitHubConfig {
    /// How long a busy runner whose process died keeps its job before the job fails "runner lost"
    /// and the runner is removed. Default 300 000 (5 min; the real service takes minutes).
    pub lost_runner_timeout_ms: u64,
    /// How long GetMessage waits for a message before answering 202. Default 50 000.
    pub long_poll_timeout_ms: u64,
    /// Shortest delay between assignable work appearing and the service assigning it. Default 200.
    pub assignment_latency_ms_min: u64,
    /// Longest such delay. Default 2 000.
    pub assignment_latency_ms_max: u64,
    /// Lifetime of a session's message-queue token. Default 1 800 000 (30 min).
    pub queue_token_ttl_ms: u64,
    /// Lifetime of a runner registration token. Default 3 600 000 (1 h).
    pub registration_token_ttl_ms: u64,
    /// Lifetime of an Actions admin token. Default 3 600 000 (1 h).
    pub admin_token_ttl_ms: u64,
    /// A session nobody has polled for this long is dropped when another listener asks for one, so a
    /// listener that died without deleting its session does not block its successor forever.
    /// Default 120 000.
    pub session_idle_expiry_ms: u64,
    /// How old the legacy REST runner list may be (GitHub's 60 s cache, ARC #1127). Default 60 000.
    pub list_runners_staleness_ms: u64,
    /// RemoveRunner's answer for an unknown runner id. Default 204.
    pub remove_unknown_runner: UnknownRunnerAnswer,
    /// When set, every runner process is refused on connect as too old (ARC: the runner exits 7).
    pub runner_version_deprecated: bool,
    /// Base latency of every call, split around its commit (see `super::timing` for the
    /// distribution). Default: [`ServiceLatency::default`], tens to hundreds of ms per call.
    pub latency: ServiceLatency,
    /// From a job's assignment to a runner until its JobStarted is queued for the scale set's
    /// listener. Default 200–5 000 ms (skewed: median ≈ 500 ms). Drawn independently of the pickup
    /// delay, so either may come first.
    pub job_started_delay: DelayRange,
    /// From a job's assignment until the runner process starts running it. Default 50–2 000 ms
    /// (median ≈ 170 ms).
    pub runner_pickup_delay: DelayRange,
    /// Weak removal (default off): RemoveRunner answers 204 and removes a runner whose assigned job
    /// has not been announced yet (JobStarted still pending), and the job fails (`runner-removed`).
    /// This is a service weaker than ARC-MODEL §6.3 promises; with it off, RemoveRunner and assignment
    /// stay serialised and an assigned runner is always refused with 400.
    pub weak_removal: bool,
    /// Runner groups besides `Default` (id 1); they get ids 2, 3, … in this order.
    pub runner_groups: Vec<String>,
    /// The Actions service URL handed out by the admin-token exchange.
    pub service_url: String,
    /// The base of message-queue URLs.
    pub broker_url: String,
    /// GitHub Apps that may ask for installation tokens (none by default).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub apps: Vec<GitHubApp>,
    /// Lifetime of an installation token. Default 3 600 000 (1 h, as GitHub's).
    #[serde(skip_serializing_if = "is_one_hour")]
    pub installation_token_ttl_ms: u64,
    /// Whether a message a session received but never acknowledged is delivered again to the scale
    /// set's next session (default) or dropped when that session is created (assumption
    /// `unacknowledged-messages`).
    #[serde(skip_serializing_if = "is_true")]
    pub redeliver_unacknowledged: bool,
    /// Whether the service holds a scale set to the capacity its listener sends in
    /// `X-ScaleSetMaxCapacity` (default), or takes it as advice and acquires and assigns beyond it
    /// (assumption `capacity-header`).
    #[serde(skip_serializing_if = "is_true")]
    pub honour_max_capacity: bool,
    /// How long a runner whose process died while idle stays online and assignable before the service
    /// notices (0, the default: at once). A job assigned to it meanwhile is lost after
    /// `lost_runner_timeout_ms` (assumption `dead-runner-detection`).
    #[serde(skip_serializing_if = "is_zero")]
    pub dead_runner_detection_ms: u64,
    /// How old the statistics in sessions and messages, and the runners GetRunner and
    /// GetRunnerByName answer from, may be (0, the default: linearizable; assumption `service-reads`).
    #[serde(skip_serializing_if = "is_zero")]
    pub service_read_staleness_ms: u64,
    /// How long a JIT registration no process has connected with lives (none, the default: forever;
    /// assumption `registration-lifetime`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unconnected_registration_ttl_ms: Option<u64>,
    /// Whether a session ends when its queue token expires, so that refreshing it answers 404
    /// (default: no, a refresh renews it; assumption `session-refresh`).
    #[serde(skip_serializing_if = "is_false")]
    pub session_ends_with_token: bool,
    /// Whether a job is acquired for a scale set as soon as a message offering it is delivered to the
    /// scale set's listener, AcquireJobs then being a no-op (default: no, the listener must acquire
    /// it; assumption `job-acquisition`).
    #[serde(skip_serializing_if = "is_false")]
    pub acquire_on_delivery: bool,
    /// After how long a job acquired by a scale set that no runner has taken is offered again
    /// (JobAvailable to every scale set it matches, to be acquired anew). None, the default: it waits
    /// for a runner of its scale set (assumption `unstarted-dispatch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reoffer_unstarted_after_ms: Option<u64>,
    /// The REST budgets of each credential. None, the default: REST calls are never refused for
    /// volume (assumption `rest-rate-limits`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rest_rate_limit: Option<RestRateLimit>,
    /// Whether a runner removed (RemoveRunner, the legacy REST delete) while its process polls for
    /// jobs fails that poll with "Registration … was not found", which actions/runner retries for
    /// minutes, or (the default) is told the runner is gone and stops at once (assumption
    /// `removed-runner-poll`).
    #[serde(skip_serializing_if = "is_false")]
    pub removed_registration_retried: bool,
    /// How long a runner session created over HTTP may go untaken by a process (its answer lost, its
    /// process killed while the request was in flight) before the service treats that process as
    /// dead: default 50 s, one long poll (assumption `unpolled-session`).
    #[serde(skip_serializing_if = "is_one_long_poll")]
    pub unclaimed_session_ms: u64,
}

fn is_zero(ms: &u64) -> bool {
    *ms == 0
}

fn is_one_long_poll(ms: &u64) -> bool {
    *ms == ONE_LONG_POLL_MS
}

/// The default of [`GitHubConfig::unclaimed_session_ms`]: one long poll of a runner's message queue.
pub(crate) const ONE_LONG_POLL_MS: u64 = 50_000;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_one_hour(ms: &u64) -> bool {
    *ms == 3_600_000
}

fn is_true(b: &bool) -> bool {
    *b
}

/// A GitHub App the fake knows: its id (the JWT's `iss`), its installations, and the public half of
/// its key, against which the fake verifies the app's JWTs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitHubApp {
    /// The app id (or client id).
    pub app_id: String,
    /// Installation ids of the app.
    pub installation_ids: Vec<i64>,
    /// The app's public key, SPKI PEM (`BEGIN PUBLIC KEY`).
    pub public_key_pem: String,
}

impl Default for GitHubConfig {
    fn default() -> Self {
        GitHubConfig {
            lost_runner_timeout_ms: 300_000,
            long_poll_timeout_ms: 50_000,
            assignment_latency_ms_min: 200,
            assignment_latency_ms_max: 2_000,
            queue_token_ttl_ms: 1_800_000,
            registration_token_ttl_ms: 3_600_000,
            admin_token_ttl_ms: 3_600_000,
            session_idle_expiry_ms: 120_000,
            list_runners_staleness_ms: 60_000,
            remove_unknown_runner: UnknownRunnerAnswer::NoContent,
            runner_version_deprecated: false,
            latency: ServiceLatency::default(),
            job_started_delay: DelayRange::between(200, 5_000),
            runner_pickup_delay: DelayRange::between(50, 2_000),
            weak_removal: false,
            runner_groups: Vec::new(),
            service_url: "https://pipelines.actions.githubusercontent.com/arcsim/".into(),
            broker_url: "https://broker.actions.githubusercontent.com/arcsim/".into(),
            apps: Vec::new(),
            installation_token_ttl_ms: 3_600_000,
            redeliver_unacknowledged: true,
            honour_max_capacity: true,
            dead_runner_detection_ms: 0,
            service_read_staleness_ms: 0,
            unconnected_registration_ttl_ms: None,
            session_ends_with_token: false,
            acquire_on_delivery: false,
            reoffer_unstarted_after_ms: None,
            rest_rate_limit: None,
            removed_registration_retried: false,
            unclaimed_session_ms: ONE_LONG_POLL_MS,
        }
    }
}

/// Why a [`GitHubConfig`] was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitHubConfigError {
    /// A duration that must be positive is zero.
    #[error("github config: {field} must be greater than 0")]
    Zero {
        /// The field.
        field: &'static str,
    },
    /// `rest_rate_limit.points_per_minute` is below a write's cost, so no write could ever pass.
    #[error(
        "github config: rest_rate_limit.points_per_minute is {points_per_minute}, below a write's cost of 5"
    )]
    BelowWriteCost {
        /// The value given.
        points_per_minute: u32,
    },
    /// `assignment_latency_ms_min` exceeds `assignment_latency_ms_max`.
    #[error("github config: assignment_latency_ms_min {min} exceeds assignment_latency_ms_max {max}")]
    LatencyRange {
        /// The minimum.
        min: u64,
        /// The maximum.
        max: u64,
    },
    /// A delay range whose minimum exceeds its maximum.
    #[error("github config: {field}: min_ms {min} exceeds max_ms {max}")]
    Range {
        /// The field (`latency.jit_config.before_commit`, `job_started_delay`, …).
        field: String,
        /// The minimum.
        min: u64,
        /// The maximum.
        max: u64,
    },
    /// An app whose public key is unusable.
    #[error("github config: app {app_id:?}: {message}")]
    AppKey {
        /// The app.
        app_id: String,
        /// Why.
        message: String,
    },
    /// A URL that is not absolute http(s).
    #[error("github config: {field} {value:?} is not an absolute http(s) URL")]
    Url {
        /// The field.
        field: &'static str,
        /// The value.
        value: String,
    },
}

impl GitHubConfig {
    /// The defaults without the timing model: every call answered in zero simulated time, JobStarted
    /// queued and the job handed to its runner at the instant of assignment (the fake before its
    /// timing model; for tests that assert exact times).
    pub fn instant() -> Self {
        GitHubConfig {
            latency: ServiceLatency::ZERO,
            job_started_delay: DelayRange::ZERO,
            runner_pickup_delay: DelayRange::ZERO,
            ..GitHubConfig::default()
        }
    }

    /// Every delay range, with its field name.
    fn delay_ranges(&self) -> Vec<(String, DelayRange)> {
        let mut ranges = self.latency.ranges();
        ranges.push(("job_started_delay".into(), self.job_started_delay));
        ranges.push(("runner_pickup_delay".into(), self.runner_pickup_delay));
        ranges
    }

    /// Checks the knobs; the first problem found is returned.
    pub fn validate(&self) -> Result<(), GitHubConfigError> {
        let positive = [
            ("lost_runner_timeout_ms", self.lost_runner_timeout_ms),
            ("long_poll_timeout_ms", self.long_poll_timeout_ms),
            ("unclaimed_session_ms", self.unclaimed_session_ms),
            ("queue_token_ttl_ms", self.queue_token_ttl_ms),
            ("registration_token_ttl_ms", self.registration_token_ttl_ms),
            ("admin_token_ttl_ms", self.admin_token_ttl_ms),
            ("installation_token_ttl_ms", self.installation_token_ttl_ms),
            ("session_idle_expiry_ms", self.session_idle_expiry_ms),
        ];
        let optional = [
            ("unconnected_registration_ttl_ms", self.unconnected_registration_ttl_ms),
            ("reoffer_unstarted_after_ms", self.reoffer_unstarted_after_ms),
        ];
        if let Some(limit) = self.rest_rate_limit {
            if limit.requests_per_hour == 0 {
                return Err(GitHubConfigError::Zero { field: "rest_rate_limit.requests_per_hour" });
            }
            if limit.points_per_minute < 5 {
                return Err(GitHubConfigError::BelowWriteCost { points_per_minute: limit.points_per_minute });
            }
        }
        if let Some((field, _)) = optional.iter().find(|(_, v)| *v == Some(0)) {
            return Err(GitHubConfigError::Zero { field });
        }
        if let Some((field, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(GitHubConfigError::Zero { field });
        }
        if self.assignment_latency_ms_min > self.assignment_latency_ms_max {
            let (min, max) = (self.assignment_latency_ms_min, self.assignment_latency_ms_max);
            return Err(GitHubConfigError::LatencyRange { min, max });
        }
        if let Some((field, range)) = self.delay_ranges().into_iter().find(|(_, r)| r.min_ms > r.max_ms) {
            return Err(GitHubConfigError::Range { field, min: range.min_ms, max: range.max_ms });
        }
        for app in &self.apps {
            super::rsa_key::rsa_public_key(&app.public_key_pem)
                .map_err(|message| GitHubConfigError::AppKey { app_id: app.app_id.clone(), message })?;
        }
        for (field, value) in [("service_url", &self.service_url), ("broker_url", &self.broker_url)] {
            if !(value.starts_with("https://") || value.starts_with("http://")) {
                return Err(GitHubConfigError::Url { field, value: value.clone() });
            }
        }
        Ok(())
    }
}

/// The budgets of one credential (assumption `rest-rate-limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestRateLimit {
    /// Requests per hour (GitHub: 5,000 for an installation or a personal token).
    pub requests_per_hour: u32,
    /// Secondary-limit points per minute, a read costing 1 and a write 5 (GitHub: 900).
    pub points_per_minute: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_missing_fields_take_them() {
        GitHubConfig::default().validate().unwrap();
        let parsed: GitHubConfig = serde_json::from_str(r#"{"lost_runner_timeout_ms": 5000}"#).unwrap();
        assert_eq!(parsed.lost_runner_timeout_ms, 5000);
        assert_eq!(parsed.long_poll_timeout_ms, 50_000);
        assert!(serde_json::from_str::<GitHubConfig>(r#"{"nope": 1}"#).is_err());
    }

    #[test]
    fn impossible_knobs_are_rejected_with_the_field_named() {
        let zero = GitHubConfig { long_poll_timeout_ms: 0, ..GitHubConfig::default() };
        assert!(zero.validate().unwrap_err().to_string().contains("long_poll_timeout_ms"));
        let range = GitHubConfig {
            assignment_latency_ms_min: 5,
            assignment_latency_ms_max: 1,
            ..GitHubConfig::default()
        };
        assert!(matches!(range.validate(), Err(GitHubConfigError::LatencyRange { .. })));
        let url = GitHubConfig { broker_url: "broker".into(), ..GitHubConfig::default() };
        assert!(url.validate().unwrap_err().to_string().contains("broker_url"));
        let mut latency = GitHubConfig::default();
        latency.latency.jit_config.after_commit = DelayRange::between(9, 3);
        let err = latency.validate().unwrap_err().to_string();
        assert!(err.contains("latency.jit_config.after_commit: min_ms 9 exceeds max_ms 3"), "{err}");
        let started =
            GitHubConfig { job_started_delay: DelayRange::between(2, 1), ..GitHubConfig::instant() };
        assert!(started.validate().unwrap_err().to_string().contains("job_started_delay"));
    }

    #[test]
    fn timing_knobs_parse_from_json_and_instant_turns_the_timing_off() {
        let json = r#"{"latency": {"jit_config": {"before_commit": {"min_ms": 5, "max_ms": 9},
            "after_commit": {"min_ms": 1, "max_ms": 2}}}, "weak_removal": true}"#;
        let parsed: GitHubConfig = serde_json::from_str(json).unwrap();
        assert_eq!(parsed.latency.jit_config.before_commit, DelayRange::between(5, 9));
        assert_eq!(parsed.latency.admin, ServiceLatency::default().admin, "other classes keep defaults");
        assert!(parsed.weak_removal && !GitHubConfig::default().weak_removal);
        let instant = GitHubConfig::instant();
        assert_eq!(instant.latency, ServiceLatency::ZERO);
        assert_eq!(
            (instant.job_started_delay, instant.runner_pickup_delay),
            (DelayRange::ZERO, DelayRange::ZERO)
        );
        instant.validate().unwrap();
    }
}
