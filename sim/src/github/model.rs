//! The fake service's objects (ARC-MODEL §6.1) and their states (§6.2), as the world-facing API hands
//! out copies of them. Nothing outside the fake can change a record; every change goes through the
//! fake's operations and lands in its event log.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::wire::{Label, RunnerSetting};

/// The outcome a job ends with, as JobCompleted's `result` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobResult {
    /// `succeeded`.
    Succeeded,
    /// `failed`.
    Failed,
    /// `canceled`.
    Canceled,
}

impl JobResult {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            JobResult::Succeeded => "succeeded",
            JobResult::Failed => "failed",
            JobResult::Canceled => "canceled",
        }
    }
}

/// A job to submit: what the workflow asks for and how it will behave once a runner takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    /// `runs-on` labels; a scale set or legacy runner must carry all of them (case-insensitive).
    pub labels: Vec<String>,
    /// Repository owner.
    pub owner: String,
    /// Repository name.
    pub repository: String,
    /// Workflow ref (`owner/repo/.github/workflows/ci.yml@refs/heads/main`).
    pub workflow_ref: String,
    /// Job display name.
    pub display_name: String,
    /// Triggering event.
    pub event_name: String,
    /// How long the job runs once a runner starts it, in simulated ms.
    pub duration_ms: u64,
    /// The result it reports if it runs to the end.
    pub result: JobResult,
}

impl JobSpec {
    /// A job for `labels` that runs `duration_ms` and succeeds, in `arcsim/app`.
    pub fn simple(labels: &[&str], duration_ms: u64) -> Self {
        JobSpec {
            labels: labels.iter().map(|l| (*l).to_string()).collect(),
            owner: "arcsim".into(),
            repository: "app".into(),
            workflow_ref: "arcsim/app/.github/workflows/ci.yml@refs/heads/main".into(),
            display_name: "build".into(),
            event_name: "push".into(),
            duration_ms,
            result: JobResult::Succeeded,
        }
    }
}

/// Why a job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndReason {
    /// The runner reported its result.
    Completed,
    /// Someone canceled it.
    Canceled,
    /// Its runner's process died and the lost-runner timeout passed.
    RunnerLost,
    /// Its runner received a shutdown signal (SIGTERM) mid-job, canceled it and reported it canceled
    /// ("The runner has received a shutdown signal").
    RunnerShutdown,
    /// Weak removal only: RemoveRunner removed the runner it was assigned to before its JobStarted
    /// went out.
    RunnerRemoved,
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EndReason::Completed => "completed",
            EndReason::Canceled => "canceled",
            EndReason::RunnerLost => "runner-lost",
            EndReason::RunnerShutdown => "runner-shutdown",
            EndReason::RunnerRemoved => "runner-removed",
        })
    }
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum JobState {
    /// Waiting; offered to matching scale sets, assignable to matching legacy runners.
    Queued,
    /// Acquired by a scale set, waiting for one of its runners.
    Acquired,
    /// Running on a runner.
    Running,
    /// Over.
    Completed {
        /// The reported result.
        result: JobResult,
        /// Why it ended.
        reason: EndReason,
    },
}

/// A job (a runner request).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Runner request id: the id AcquireJobs takes and the fake's job id.
    pub request_id: i64,
    /// The job id (a string on the wire).
    pub job_id: String,
    /// Workflow run id.
    pub workflow_run_id: i64,
    /// What was submitted.
    pub spec: JobSpec,
    /// Its state.
    pub state: JobState,
    /// Scale sets it was offered to (JobAvailable).
    pub offered_to: BTreeSet<i64>,
    /// The scale set that acquired it.
    pub acquired_by: Option<i64>,
    /// The runner it ran on.
    pub runner_id: Option<i64>,
    /// Sim ms it was queued.
    pub queued_ms: u64,
    /// Sim ms a scale set acquired it.
    pub acquired_ms: Option<u64>,
    /// Sim ms the service assigned it to a runner (the runner is busy from here; its process starts
    /// running it after the pickup delay).
    pub started_ms: Option<u64>,
    /// Sim ms it ended.
    pub finished_ms: Option<u64>,
}

impl Job {
    /// Whether the job is over.
    pub fn is_completed(&self) -> bool {
        matches!(self.state, JobState::Completed { .. })
    }

    /// The result it reported, if it has ended.
    pub fn result(&self) -> Option<JobResult> {
        match self.state {
            JobState::Completed { result, .. } => Some(result),
            _ => None,
        }
    }

    /// Why it ended, if it has.
    pub fn end_reason(&self) -> Option<EndReason> {
        match self.state {
            JobState::Completed { reason, .. } => Some(reason),
            _ => None,
        }
    }
}

/// Why a runner was removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RemovalReason {
    /// RemoveRunner (scale-set API) or the legacy REST delete.
    Removed,
    /// An ephemeral runner deregistered itself after its job.
    Deregistered,
    /// Its process died mid-job and the lost-runner timeout passed.
    Lost,
    /// Its scale set was deleted.
    ScaleSetDeleted,
    /// A legacy `config.sh --replace` registered a new runner under its name.
    Replaced,
    /// Its JIT registration expired before any process connected with it.
    Expired,
}

impl fmt::Display for RemovalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RemovalReason::Removed => "removed",
            RemovalReason::Deregistered => "deregistered",
            RemovalReason::Lost => "lost",
            RemovalReason::ScaleSetDeleted => "scale-set-deleted",
            RemovalReason::Replaced => "replaced",
            RemovalReason::Expired => "expired",
        })
    }
}

/// Where a runner is in its life (ARC-MODEL §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum RunnerState {
    /// Registered, no process connected.
    Offline,
    /// Process connected, no job.
    Idle,
    /// Running job `request_id`.
    Busy {
        /// The job.
        request_id: i64,
    },
    /// Its process died while running `request_id`; the job counts as running until the
    /// lost-runner timeout.
    Lost {
        /// The job.
        request_id: i64,
        /// Sim ms the process died.
        since_ms: u64,
    },
    /// Gone for good: never assigned again, its process is refused.
    Removed {
        /// Why.
        reason: RemovalReason,
        /// Sim ms.
        at_ms: u64,
    },
}

/// A registered runner (scale-set runners come from JIT configs, legacy ones from `config.sh`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Runner {
    /// Runner id.
    pub id: i64,
    /// Runner name.
    pub name: String,
    /// Its scale set, for JIT runners.
    pub scale_set_id: Option<i64>,
    /// Its REST scope (`/orgs/x`), for legacy runners.
    pub scope: Option<String>,
    /// Labels jobs are matched against.
    pub labels: Vec<String>,
    /// Deregisters itself after one job.
    pub ephemeral: bool,
    /// Its state.
    pub state: RunnerState,
    /// Sim ms it registered.
    pub registered_ms: u64,
    /// How many times a process has connected as it.
    pub connections: u64,
}

impl Runner {
    /// Whether it has been removed.
    pub fn is_removed(&self) -> bool {
        matches!(self.state, RunnerState::Removed { .. })
    }

    /// The job it holds (busy or lost), if any.
    pub fn job(&self) -> Option<i64> {
        match self.state {
            RunnerState::Busy { request_id } | RunnerState::Lost { request_id, .. } => Some(request_id),
            _ => None,
        }
    }

    /// Whether a process is connected (idle or busy).
    pub fn is_online(&self) -> bool {
        matches!(self.state, RunnerState::Idle | RunnerState::Busy { .. })
    }
}

/// A runner scale set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScaleSet {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Runner group id.
    pub runner_group_id: i64,
    /// Labels.
    pub labels: Vec<Label>,
    /// Runner settings.
    pub runner_setting: RunnerSetting,
    /// Sim ms it was created.
    pub created_ms: u64,
    /// The last `X-ScaleSetMaxCapacity` its listener sent, if any: the most jobs its runners may run
    /// at once.
    pub max_capacity: Option<u32>,
}

impl ScaleSet {
    /// Whether every label of `wanted` is one of this set's labels (case-insensitive).
    pub fn matches(&self, wanted: &[String]) -> bool {
        wanted.iter().all(|w| self.labels.iter().any(|l| l.name.eq_ignore_ascii_case(w)))
    }
}

/// A listener's message session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Session id.
    pub id: String,
    /// Its scale set.
    pub scale_set_id: i64,
    /// Owner name.
    pub owner: String,
    /// The current queue token.
    pub queue_token: String,
    /// Sim ms the queue token expires.
    pub token_expires_ms: u64,
    /// Sim ms it was created.
    pub created_ms: u64,
    /// Sim ms of its last request.
    pub last_seen_ms: u64,
    /// Long polls in progress.
    pub polls_in_flight: u32,
}

/// A job the assigner just gave a runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Assignment {
    /// Runner request id.
    pub request_id: i64,
    /// The runner.
    pub runner_id: i64,
    /// When JobStarted is due, if not queued at once.
    pub job_started_in: Option<std::time::Duration>,
}
