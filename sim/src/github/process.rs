//! [`RunnerSession`]: the fake's side of one simulated runner process, for the kubelet model.
//!
//! A process connects with its JIT config (`FakeGitHub::connect_runner`), waits for a job
//! ([`RunnerSession::next_job`], which hands it over once the seeded pickup delay after the
//! assignment has passed), runs it for the job's duration unless it is canceled, reports the
//! result ([`RunnerSession::complete_job`]; an ephemeral runner then deregisters and the process exits
//! 0), or dies on the way ([`RunnerSession::process_died`]). [`RunnerSession::run_one_job`] does the
//! whole happy path. Handles are cheap clones; one that outlived its process (the runner reconnected)
//! gets [`SessionEnded::Disconnected`].

use std::sync::Arc;
use std::time::Duration;

use super::Shared;
use super::assign::SessionEnded;
use super::model::{JobResult, RemovalReason, RunnerState};
use super::state::World;
use super::state::index::Topic;

/// A job the service assigned to this runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignedJob {
    /// Runner request id.
    pub request_id: i64,
    /// Job id.
    pub job_id: String,
    /// How long it runs.
    pub duration: Duration,
    /// What it reports if it runs to the end.
    pub planned_result: JobResult,
}

/// One connected runner process.
#[derive(Clone)]
pub struct RunnerSession {
    pub(crate) shared: Arc<Shared>,
    pub(crate) runner_id: i64,
    pub(crate) connection: u64,
}

impl std::fmt::Debug for RunnerSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerSession")
            .field("runner_id", &self.runner_id)
            .field("connection", &self.connection)
            .finish()
    }
}

impl RunnerSession {
    /// The runner's id.
    pub fn runner_id(&self) -> i64 {
        self.runner_id
    }

    /// Waits until the service assigns a job and the pickup delay has passed (at once if that has
    /// happened already). Ends with an error when the runner is removed (RemoveRunner while idle or,
    /// under weak removal, before its job was announced) or this process is no longer connected.
    pub async fn next_job(&self) -> Result<AssignedJob, SessionEnded> {
        loop {
            let job = self.shared.wait_on(Topic::Runner(self.runner_id), |w| self.probe_job(w)).await?;
            self.wait_for_pickup(job.request_id).await;
            let picked = self.shared.mutate(|w| {
                let now = self.probe_job(w);
                if matches!(&now, Some(Ok(same)) if same.request_id == job.request_id) {
                    w.pick_up(job.request_id, self.runner_id);
                }
                now
            });
            if let Some(outcome) = picked {
                return outcome;
            }
        }
    }

    /// Sleeps until job `request_id`'s pickup is due (not at all when it is due already).
    async fn wait_for_pickup(&self, request_id: i64) {
        let wait_ms = {
            let world = self.shared.lock();
            world.pickup_due(request_id).map_or(0, |due| due.saturating_sub(world.now_ms()))
        };
        if wait_ms > 0 {
            tokio::time::sleep(Duration::from_millis(wait_ms)).await;
        }
    }

    fn probe_job(&self, world: &World) -> Option<Result<AssignedJob, SessionEnded>> {
        let Some(runner) = world.runners.get(&self.runner_id) else {
            return Some(Err(SessionEnded::Removed));
        };
        if let RunnerState::Removed { reason, .. } = runner.state {
            let retried = reason == RemovalReason::Removed && world.cfg.removed_registration_retried;
            return Some(Err(if retried {
                SessionEnded::RegistrationNotFound
            } else {
                SessionEnded::Removed
            }));
        }
        if runner.connections != self.connection {
            return Some(Err(SessionEnded::Disconnected));
        }
        match runner.state {
            RunnerState::Idle => None,
            RunnerState::Busy { request_id } => {
                let job = &world.jobs[&request_id];
                Some(Ok(AssignedJob {
                    request_id,
                    job_id: job.job_id.clone(),
                    duration: Duration::from_millis(job.spec.duration_ms),
                    planned_result: job.spec.result,
                }))
            }
            _ => Some(Err(SessionEnded::Disconnected)),
        }
    }

    /// Waits until job `request_id` has ended at the service (canceled, or failed as lost).
    pub async fn job_ended(&self, request_id: i64) {
        let ended = |w: &mut World| w.jobs.get(&request_id).is_none_or(|j| j.is_completed()).then_some(());
        self.shared.wait_on(Topic::Job(request_id), ended).await;
    }

    /// Reports the current job done with `result` (ignored if the job was already canceled). An
    /// ephemeral runner deregisters itself; a persistent one goes back to idle. Returns the job's id.
    pub fn complete_job(&self, result: JobResult) -> Result<i64, SessionEnded> {
        self.shared.mutate(|w| w.complete_from_runner(self.runner_id, self.connection, result))
    }

    /// The process was told to shut down (SIGTERM) while running its job: it canceled the job and
    /// reports it canceled with reason `runner-shutdown`; an ephemeral runner then deregisters.
    /// Returns the job's id.
    pub fn cancel_job_for_shutdown(&self) -> Result<i64, SessionEnded> {
        self.shared.mutate(|w| w.cancel_from_runner_shutdown(self.runner_id, self.connection))
    }

    /// The process died (pod killed, container exited) without a word. An idle runner goes offline
    /// (under `dead-runner-detection=after-3-min`, only once the service notices); a busy one keeps
    /// its job "running" until the lost-runner timeout, then the job fails and the runner is removed.
    pub fn process_died(&self) {
        self.exited(false);
    }

    /// The process deleted its session and exited (the runner's shutdown): the service knows at once
    /// that an idle runner is offline; a runner holding a job is left with it, as when it dies.
    pub fn session_deleted(&self) {
        self.exited(true);
    }

    fn exited(&self, said_so: bool) {
        let lost = self.shared.mutate(|w| w.process_exited(self.runner_id, self.connection, said_so));
        if let Some(lost) = lost {
            super::spawn_lost_runner_timer(&self.shared, lost);
        }
    }

    /// Waits for a job, runs it for its duration (or until it is canceled), and reports it. Returns
    /// the job's result as reported.
    pub async fn run_one_job(&self) -> Result<JobResult, SessionEnded> {
        let job = self.next_job().await?;
        let result = tokio::select! {
            biased;
            () = self.job_ended(job.request_id) => JobResult::Canceled,
            () = tokio::time::sleep(job.duration) => job.planned_result,
        };
        self.complete_job(result)?;
        Ok(result)
    }
}
