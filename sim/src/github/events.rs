//! The fake service's event log: every state change, with its sim time, in order. The oracles judge
//! races from it (who won a RemoveRunner-vs-assignment race, which jobs ended "runner lost"), and each
//! event is also a trace line (actor `github`). Beside the state changes: every answered call
//! ([`GitHubCall`], with when it arrived, what the service committed and what the client got) and
//! every fault that fired ([`GitHubFaultFired`]).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::model::{EndReason, JobResult, RemovalReason};
use crate::faults::GitHubFaultAction;
use crate::record::{Line, Observed};

/// What RemoveRunner (or the legacy REST delete) answered, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RemoveOutcome {
    /// 204: the runner was registered and is now removed.
    Removed,
    /// 204: no such runner (or already removed).
    Unknown,
    /// 204 under weak removal only: the runner held a job whose JobStarted had not gone out yet; the
    /// runner is removed and the job fails (`runner-removed`).
    RemovedAssigned,
    /// 404 `AgentNotFoundException` (the `remove_unknown_runner: not-found` knob, or legacy REST).
    NotFound,
    /// 400 `JobStillRunningException` (scale-set API): the runner holds a job.
    JobStillRunning,
    /// 422 (legacy REST): the runner holds a job.
    Busy,
}

impl RemoveOutcome {
    /// Whether the runner was left in place because it holds a job.
    pub fn refused_busy(self) -> bool {
        matches!(self, RemoveOutcome::JobStillRunning | RemoveOutcome::Busy)
    }
}

/// Why a runner process was refused on connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectRefused {
    /// The config is not one this service issued.
    #[error("the runner config is not valid")]
    InvalidConfig,
    /// The runner was removed; a real runner exits non-zero.
    #[error("the runner has been removed")]
    Removed,
    /// Another process is connected as this runner.
    #[error("another process is connected as this runner")]
    AlreadyConnected,
    /// The runner's earlier process died mid-job and the job is not yet declared lost.
    #[error("the runner's previous job is still running")]
    JobInProgress,
    /// The runner version is deprecated (the `runner_version_deprecated` knob); the runner exits 7.
    #[error("the runner version is deprecated")]
    VersionDeprecated,
}

/// One state change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "event")]
pub enum EventKind {
    /// A scale set was created.
    ScaleSetCreated {
        /// Id.
        scale_set_id: i64,
        /// Name.
        name: String,
    },
    /// A request's registration token was refused (404): it had expired, or was never issued.
    RegistrationTokenRefused {
        /// The token presented.
        token: String,
        /// Whether it was issued and has expired.
        expired: bool,
    },
    /// A scale set was deleted.
    ScaleSetDeleted {
        /// Id.
        scale_set_id: i64,
    },
    /// A runner registered (JIT config or legacy `config.sh`).
    RunnerRegistered {
        /// Id.
        runner_id: i64,
        /// Name.
        name: String,
        /// Its scale set, for JIT runners.
        scale_set_id: Option<i64>,
    },
    /// A runner process connected.
    RunnerConnected {
        /// Id.
        runner_id: i64,
    },
    /// A runner process was refused.
    RunnerRefused {
        /// Id (0 for an invalid config).
        runner_id: i64,
        /// Why.
        reason: ConnectRefused,
    },
    /// A runner process died or exited.
    ProcessExited {
        /// Id.
        runner_id: i64,
        /// The job it held, which now runs on as "lost" until the timeout.
        lost_job: Option<i64>,
    },
    /// The service noticed that an idle runner's process had died (it had stayed assignable until
    /// now, assumption `dead-runner-detection`).
    DeadRunnerNoticed {
        /// Id.
        runner_id: i64,
        /// The job it was assigned meanwhile, now lost with it.
        lost_job: Option<i64>,
    },
    /// RemoveRunner was answered.
    RemoveRunner {
        /// The id asked for.
        runner_id: i64,
        /// The answer.
        outcome: RemoveOutcome,
    },
    /// A runner was removed.
    RunnerRemoved {
        /// Id.
        runner_id: i64,
        /// Why.
        reason: RemovalReason,
    },
    /// A job was queued.
    JobQueued {
        /// Request id.
        request_id: i64,
    },
    /// A scale set acquired a job.
    JobAcquired {
        /// Request id.
        request_id: i64,
        /// The scale set.
        scale_set_id: i64,
    },
    /// The service assigned a job to a runner.
    JobAssigned {
        /// Request id.
        request_id: i64,
        /// The runner.
        runner_id: i64,
    },
    /// A job's JobStarted was queued for its scale set's listener (after the seeded JobStarted delay).
    JobStartedSent {
        /// Request id.
        request_id: i64,
        /// The runner.
        runner_id: i64,
    },
    /// The runner process started running its assigned job (after the seeded pickup delay).
    JobPickedUp {
        /// Request id.
        request_id: i64,
        /// The runner.
        runner_id: i64,
    },
    /// AcquireJobs left a job queued because the scale set already holds as many jobs as its
    /// listener's last `X-ScaleSetMaxCapacity`; it is offered again when room frees up.
    AcquireDeferred {
        /// Request id.
        request_id: i64,
        /// The scale set.
        scale_set_id: i64,
        /// The capacity in force.
        max_capacity: u32,
    },
    /// A job ended.
    JobCompleted {
        /// Request id.
        request_id: i64,
        /// Its result.
        result: JobResult,
        /// Why it ended.
        reason: EndReason,
    },
    /// A message session opened.
    SessionCreated {
        /// Session id.
        session_id: String,
        /// Its scale set.
        scale_set_id: i64,
    },
    /// A session was refreshed (new queue token).
    SessionRefreshed {
        /// Session id.
        session_id: String,
    },
    /// A session closed, by DeleteMessageSession or idle expiry.
    SessionClosed {
        /// Session id.
        session_id: String,
        /// `deleted`, `expired` or `scale-set-deleted`.
        why: String,
    },
    /// Pending job messages were sealed into a message.
    MessageSealed {
        /// The scale set.
        scale_set_id: i64,
        /// Message id.
        message_id: i64,
        /// Job messages in it.
        jobs: usize,
    },
}

/// An event with its sim time: what the fake puts into the run's record for each state change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitHubEvent {
    /// Sim ms.
    pub at_ms: u64,
    /// What happened.
    pub kind: EventKind,
    /// Who made the call that made it happen, as the call named itself
    /// ([`crate::actor::ACTOR_HEADER`]); `None` for the service's own doing (a timer, an assignment)
    /// or a caller that names nobody. Not in the trace line, which stays what the service did.
    pub by: Option<String>,
}

impl Observed for GitHubEvent {
    fn line(&self) -> Option<Line<'_>> {
        Some(Line::new("github", self.kind.name(), &self.kind))
    }

    crate::observed_as_any!();
}

/// One request, as the fake saw it, recorded when its answer left (or its connection was dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubCall {
    /// The HTTP method.
    pub method: String,
    /// The request path.
    pub path: String,
    /// The operation it was routed to (`unknown` when none).
    pub operation: &'static str,
    /// Sim ms the request arrived.
    pub received_ms: u64,
    /// The status of the answer the service produced when it served the request (its change
    /// committed if that is a success); `None` when a fault answered without serving it.
    pub served: Option<u16>,
    /// The status the client got; `None` when the connection was dropped (a transport error).
    pub status: Option<u16>,
}

impl GitHubCall {
    /// Whether the service committed a successful change but the client got a failure (a
    /// `commit-then-error` or `commit-then-drop` fault over a 2xx answer).
    pub fn committed_then_failed(&self) -> bool {
        self.served.is_some_and(|s| (200..300).contains(&s)) && self.status != self.served
    }
}

impl Observed for GitHubCall {
    fn line(&self) -> Option<Line<'_>> {
        let status = self.status.map_or_else(|| "dropped".to_string(), |s| s.to_string());
        let served = match self.served {
            Some(served) if Some(served) != self.status => format!(" served={served}"),
            _ => String::new(),
        };
        Some(Line::new(
            "github",
            "http",
            format!("{} {} {} {status}{served}", self.method, self.path, self.operation),
        ))
    }

    crate::observed_as_any!();
}

/// A fault of the plan fired on a request (recorded when it arrived).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubFaultFired {
    /// The operation hit.
    pub operation: &'static str,
    /// The request path.
    pub path: String,
    /// What the fault does to it.
    pub action: GitHubFaultAction,
}

impl Observed for GitHubFaultFired {
    fn line(&self) -> Option<Line<'_>> {
        Some(Line::new("github", "fault", format!("{} {} {}", self.action, self.operation, self.path)))
    }

    crate::observed_as_any!();
}

impl EventKind {
    /// The trace event name.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::ScaleSetCreated { .. } => "scale-set-created",
            EventKind::ScaleSetDeleted { .. } => "scale-set-deleted",
            EventKind::RegistrationTokenRefused { .. } => "registration-token-refused",
            EventKind::RunnerRegistered { .. } => "runner-registered",
            EventKind::RunnerConnected { .. } => "runner-connected",
            EventKind::RunnerRefused { .. } => "runner-refused",
            EventKind::ProcessExited { .. } => "process-exited",
            EventKind::DeadRunnerNoticed { .. } => "dead-runner-noticed",
            EventKind::RemoveRunner { .. } => "remove-runner",
            EventKind::RunnerRemoved { .. } => "runner-removed",
            EventKind::JobQueued { .. } => "job-queued",
            EventKind::JobAcquired { .. } => "job-acquired",
            EventKind::JobAssigned { .. } => "job-assigned",
            EventKind::JobStartedSent { .. } => "job-started-sent",
            EventKind::JobPickedUp { .. } => "job-picked-up",
            EventKind::AcquireDeferred { .. } => "acquire-deferred",
            EventKind::JobCompleted { .. } => "job-completed",
            EventKind::SessionCreated { .. } => "session-created",
            EventKind::SessionRefreshed { .. } => "session-refreshed",
            EventKind::SessionClosed { .. } => "session-closed",
            EventKind::MessageSealed { .. } => "message-sealed",
        }
    }
}

impl fmt::Display for EventKind {
    /// The trace details: `key=value` pairs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventKind::ScaleSetCreated { scale_set_id, name } => {
                write!(f, "scale-set={scale_set_id} name={name}")
            }
            EventKind::ScaleSetDeleted { scale_set_id } => write!(f, "scale-set={scale_set_id}"),
            EventKind::RegistrationTokenRefused { token, expired } => {
                write!(f, "token={token} expired={expired}")
            }
            EventKind::RunnerRegistered { runner_id, name, scale_set_id } => {
                write!(f, "runner={runner_id} name={name} scale-set={}", scale_set_id.unwrap_or(0))
            }
            EventKind::RunnerConnected { runner_id } => write!(f, "runner={runner_id}"),
            EventKind::RunnerRefused { runner_id, reason } => {
                write!(f, "runner={runner_id} reason={reason:?}")
            }
            EventKind::ProcessExited { runner_id, lost_job } => match lost_job {
                Some(job) => write!(f, "runner={runner_id} lost-job={job}"),
                None => write!(f, "runner={runner_id}"),
            },
            EventKind::DeadRunnerNoticed { runner_id, lost_job } => match lost_job {
                Some(job) => write!(f, "runner={runner_id} lost-job={job}"),
                None => write!(f, "runner={runner_id}"),
            },
            EventKind::RemoveRunner { runner_id, outcome } => {
                write!(f, "runner={runner_id} outcome={outcome:?}")
            }
            EventKind::RunnerRemoved { runner_id, reason } => write!(f, "runner={runner_id} reason={reason}"),
            EventKind::JobQueued { request_id } => write!(f, "job={request_id}"),
            EventKind::JobAcquired { request_id, scale_set_id } => {
                write!(f, "job={request_id} scale-set={scale_set_id}")
            }
            EventKind::JobAssigned { request_id, runner_id }
            | EventKind::JobStartedSent { request_id, runner_id }
            | EventKind::JobPickedUp { request_id, runner_id } => {
                write!(f, "job={request_id} runner={runner_id}")
            }
            EventKind::AcquireDeferred { request_id, scale_set_id, max_capacity } => {
                write!(f, "job={request_id} scale-set={scale_set_id} max-capacity={max_capacity}")
            }
            EventKind::JobCompleted { request_id, result, reason } => {
                write!(f, "job={request_id} result={} reason={reason}", result.as_str())
            }
            EventKind::SessionCreated { session_id, scale_set_id } => {
                write!(f, "session={session_id} scale-set={scale_set_id}")
            }
            EventKind::SessionRefreshed { session_id } => write!(f, "session={session_id}"),
            EventKind::SessionClosed { session_id, why } => write!(f, "session={session_id} why={why}"),
            EventKind::MessageSealed { scale_set_id, message_id, jobs } => {
                write!(f, "scale-set={scale_set_id} message={message_id} jobs={jobs}")
            }
        }
    }
}
