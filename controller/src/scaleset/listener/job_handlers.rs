//! HandleJobStarted and HandleJobCompleted (ARC-MODEL §4.2, §5.2): what the listener writes to the
//! EphemeralRunner a job started on, and what a finished job changes.
//!
//! JobStarted becomes a merge patch on the runner's **status** subresource, addressed by
//! `runnerName` in the EphemeralRunnerSet's namespace, with the job fields (`jobRequestId`,
//! `jobRepositoryName` = `owner/repo`, `jobId`, `workflowRunId`, `jobWorkflowRef`,
//! `jobDisplayName`). A missing runner is skipped; any other error stops the listener.
//!
//! With \[V\] `running_from_listener`, the patch also carries `phase: Running`, guarded: inside a
//! retry-on-conflict loop the runner is read, and Running (with the read `resourceVersion` as an
//! optimistic lock) is added only if the runner is not being deleted and not Succeeded, Failed or
//! Outdated; a Conflict means read again and decide again. With the
//! `running_never_overwrites_terminal` fix off, Running is written blind: no read, no guard, no lock.
//!
//! JobCompleted writes nothing: ARC's scaler only notes that a job event happened, which the message
//! loop passes to the [`super::scaler::Scaler`].

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::error::ListenerError;
use crate::crd::EphemeralRunner;
use crate::crd::EphemeralRunnerPhase;
use crate::github::job_messages::{JobCompleted, JobStarted};
use crate::runtime::api::{KubeApi, is_conflict, is_not_found};
use crate::switches::Switches;

/// Attempts of the guarded write before a persistent Conflict stops the listener (client-go's
/// `retry.DefaultRetry`: 5 steps).
pub const CONFLICT_ATTEMPTS: u32 = 5;
/// Wait between guarded-write attempts (client-go's `retry.DefaultRetry`: 10 ms; its 10 % jitter is
/// left out so runs are reproducible).
pub const CONFLICT_WAIT: Duration = Duration::from_millis(10);

/// How a JobStarted was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStartedOutcome {
    /// The job fields were written; `running` says whether `phase: Running` went with them.
    Recorded {
        /// Whether the phase was set to Running.
        running: bool,
    },
    /// No EphemeralRunner has the runner's name.
    RunnerNotFound,
}

/// Writes job events to EphemeralRunners in one namespace.
#[derive(Debug, Clone)]
pub struct JobHandlers {
    api: KubeApi,
    namespace: String,
    switches: Switches,
}

impl JobHandlers {
    /// Handlers writing through `api` to runners in `namespace` (the EphemeralRunnerSet's).
    pub fn new(api: KubeApi, namespace: impl Into<String>, switches: Switches) -> Self {
        JobHandlers { api, namespace: namespace.into(), switches }
    }

    /// HandleJobStarted: records the job on the runner it started on.
    pub async fn job_started(&self, job: &JobStarted) -> Result<JobStartedOutcome, ListenerError> {
        tracing::info!(
            runner = %job.runner_name,
            request_id = job.base.runner_request_id,
            job_id = %job.base.job_id,
            "job started; recording it on the runner"
        );
        let running_from_listener = self.switches.optimisations.running_from_listener;
        let guarded = self.switches.fixes.running_never_overwrites_terminal;
        let outcome = match (running_from_listener, guarded) {
            (false, _) => self.write(job, None).await?,
            (true, false) => self.write(job, Some(RunningWrite::Blind)).await?,
            (true, true) => self.write_guarded(job).await?,
        };
        tracing::info!(runner = %job.runner_name, ?outcome, "job recorded");
        Ok(outcome)
    }

    /// HandleJobCompleted: nothing to write; logged for the record.
    pub fn job_completed(&self, job: &JobCompleted) {
        tracing::info!(
            runner = %job.runner_name,
            request_id = job.base.runner_request_id,
            result = %job.result,
            "job completed"
        );
    }

    /// The guarded write: read, decide, write with the read version; on Conflict, again.
    async fn write_guarded(&self, job: &JobStarted) -> Result<JobStartedOutcome, ListenerError> {
        let mut attempt = 1;
        loop {
            let runner: Option<EphemeralRunner> =
                self.api.get(&self.namespace, &job.runner_name).await.map_err(|e| self.error(job, e))?;
            let Some(runner) = runner else { return Ok(JobStartedOutcome::RunnerNotFound) };
            let running = may_become_running(&runner)
                .then(|| RunningWrite::Locked(runner.metadata.resource_version.clone().unwrap_or_default()));
            match self.write(job, running).await {
                Err(ListenerError::PatchRunner { source, .. })
                    if is_conflict(&source) && attempt < CONFLICT_ATTEMPTS =>
                {
                    tracing::info!(runner = %job.runner_name, attempt, "runner changed under the write; reading it again");
                    attempt += 1;
                    tokio::time::sleep(CONFLICT_WAIT).await;
                }
                result => return result,
            }
        }
    }

    /// Sends the status patch; NotFound is [`JobStartedOutcome::RunnerNotFound`].
    async fn write(
        &self,
        job: &JobStarted,
        running: Option<RunningWrite>,
    ) -> Result<JobStartedOutcome, ListenerError> {
        let with_running = running.is_some();
        let patch = job_started_patch(job, running);
        let result =
            self.api.patch_merge_status::<EphemeralRunner>(&self.namespace, &job.runner_name, &patch).await;
        match result {
            Ok(_) => Ok(JobStartedOutcome::Recorded { running: with_running }),
            Err(error) if is_not_found(&error) => Ok(JobStartedOutcome::RunnerNotFound),
            Err(error) => Err(self.error(job, error)),
        }
    }

    fn error(&self, job: &JobStarted, source: kube::Error) -> ListenerError {
        ListenerError::PatchRunner {
            namespace: self.namespace.clone(),
            name: job.runner_name.clone(),
            source,
        }
    }
}

/// How `phase: Running` goes into the JobStarted patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunningWrite {
    /// With this observed `resourceVersion` as a precondition (the \[V\] guard).
    Locked(String),
    /// Without a precondition (the guard switched off).
    Blind,
}

/// Whether the listener may set Running on `runner`: not being deleted, and not Succeeded, Failed
/// or Outdated (§5.2).
pub fn may_become_running(runner: &EphemeralRunner) -> bool {
    runner.metadata.deletion_timestamp.is_none() && !runner.is_done()
}

/// The status merge patch for `job`: the job fields as Go's `omitempty` would send them (empty and
/// zero values left out), plus `phase: Running` and the lock when `running` says so.
pub fn job_started_patch(job: &JobStarted, running: Option<RunningWrite>) -> Value {
    let base = &job.base;
    let mut status = Map::new();
    let mut put = |key: &str, value: Value| {
        let empty = value.as_str().is_some_and(str::is_empty) || value.as_i64() == Some(0);
        if !empty {
            status.insert(key.to_string(), value);
        }
    };
    put("jobRequestId", json!(base.runner_request_id));
    put("jobRepositoryName", json!(format!("{}/{}", base.owner_name, base.repository_name)));
    put("jobId", json!(base.job_id));
    put("workflowRunId", json!(base.workflow_run_id));
    put("jobWorkflowRef", json!(base.job_workflow_ref));
    put("jobDisplayName", json!(base.job_display_name));
    let mut patch = Map::new();
    if let Some(running) = running {
        status.insert("phase".into(), json!(EphemeralRunnerPhase::Running.as_str()));
        if let RunningWrite::Locked(resource_version) = running {
            patch.insert("metadata".into(), json!({ "resourceVersion": resource_version }));
        }
    }
    patch.insert("status".into(), Value::Object(status));
    Value::Object(patch)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::crd::EphemeralRunnerStatus;
    use crate::github::job_messages::JobMessageBase;

    fn started() -> JobStarted {
        JobStarted {
            runner_id: 9,
            runner_name: "arc-runner-abc".into(),
            base: JobMessageBase {
                message_type: "JobStarted".into(),
                runner_request_id: 42,
                repository_name: "app".into(),
                owner_name: "octo".into(),
                job_id: "job-1".into(),
                job_workflow_ref: "octo/app/.github/workflows/ci.yml@refs/heads/main".into(),
                job_display_name: "build".into(),
                workflow_run_id: 77,
                ..JobMessageBase::default()
            },
        }
    }

    #[test]
    fn the_upstream_patch_carries_the_job_fields_and_no_phase() {
        let patch = job_started_patch(&started(), None);
        assert_eq!(
            patch,
            json!({"status": {
                "jobRequestId": 42,
                "jobRepositoryName": "octo/app",
                "jobId": "job-1",
                "workflowRunId": 77,
                "jobWorkflowRef": "octo/app/.github/workflows/ci.yml@refs/heads/main",
                "jobDisplayName": "build"
            }})
        );
    }

    #[test]
    fn the_guarded_patch_adds_running_with_the_observed_version_as_a_lock() {
        let patch = job_started_patch(&started(), Some(RunningWrite::Locked("314".into())));
        assert_eq!(patch["metadata"], json!({"resourceVersion": "314"}));
        assert_eq!(patch["status"]["phase"], "Running");
        assert_eq!(patch["status"]["jobId"], "job-1");
    }

    #[test]
    fn the_blind_patch_adds_running_without_a_lock() {
        let patch = job_started_patch(&started(), Some(RunningWrite::Blind));
        assert_eq!(patch["status"]["phase"], "Running");
        assert!(patch.get("metadata").is_none());
    }

    #[test]
    fn empty_job_fields_are_left_out_as_go_omitempty_does() {
        let mut job = started();
        job.base.job_display_name.clear();
        job.base.workflow_run_id = 0;
        let patch = job_started_patch(&job, None);
        assert!(patch["status"].get("jobDisplayName").is_none());
        assert!(patch["status"].get("workflowRunId").is_none());
        assert_eq!(patch["status"]["jobRequestId"], 42);
    }

    fn runner(phase: Option<EphemeralRunnerPhase>, deleting: bool) -> EphemeralRunner {
        let mut runner = EphemeralRunner::new("r", Default::default());
        runner.status = Some(EphemeralRunnerStatus { phase, ..Default::default() });
        if deleting {
            runner.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        }
        runner
    }

    #[test]
    fn only_live_runners_that_are_not_done_may_become_running() {
        use EphemeralRunnerPhase::*;
        assert!(may_become_running(&runner(None, false)));
        assert!(may_become_running(&runner(Some(Pending), false)));
        assert!(may_become_running(&runner(Some(Running), false)));
        for done in [Succeeded, Failed, Outdated] {
            assert!(!may_become_running(&runner(Some(done), false)), "{done:?}");
        }
        assert!(!may_become_running(&runner(Some(Pending), true)), "a deleting runner");
    }
}
