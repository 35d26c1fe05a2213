//! Job assignment and RemoveRunner: the two operations that must never both win for one runner
//! (ARC-MODEL §6.3, §8.3).
//!
//! Both run under the world lock, so they are linearised: once RemoveRunner has removed a runner it
//! is never a candidate again, and once a job is assigned RemoveRunner answers 400
//! `JobStillRunningException` (legacy REST: 422). Assignment takes the oldest waiting job that has an
//! idle online runner: an acquired job goes to a runner of its scale set (while the scale set runs
//! fewer jobs than its listener's `X-ScaleSetMaxCapacity`, see `capacity`), a queued job to a legacy
//! runner carrying all its labels. The service assigns after a seeded latency and picks the runner by
//! a seeded draw at that moment, so a RemoveRunner issued about then wins under some seeds and loses
//! under others. What follows an assignment (JobStarted, the runner's pickup) is in `start`.
//!
//! Weak removal (`GitHubConfig::weak_removal`, off by default) models a service weaker than §6.3
//! promises: RemoveRunner on a runner whose assigned job has not had its JobStarted sent yet answers
//! 204, removes the runner and fails the job (`runner-removed`).

use std::time::Duration;

use rand::Rng as _;

use super::config::UnknownRunnerAnswer;
use super::events::{EventKind, RemoveOutcome};
use super::model::{Assignment, EndReason, Job, JobResult, JobState, RemovalReason, Runner, RunnerState};
use super::state::World;

/// Which API a removal came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RemovalApi {
    /// `DELETE _apis/distributedtask/pools/0/agents/{id}`.
    ScaleSet,
    /// `DELETE …/actions/runners/{id}` (REST).
    Legacy,
}

/// Why a runner process's session is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SessionEnded {
    /// The runner was removed (RemoveRunner, deregistration, lost, scale set deleted).
    #[error("the runner has been removed")]
    Removed,
    /// The runner was removed and the poll's token exchange fails "Registration … was not found"
    /// (assumption `removed-runner-poll`): to the runner, an error like any other, so it retries.
    #[error("Registration was not found")]
    RegistrationNotFound,
    /// This process is no longer the runner's connection (it died, or another connected since).
    #[error("this process is no longer connected")]
    Disconnected,
    /// The runner holds no job to complete.
    #[error("the runner has no job")]
    NoJob,
}

impl World {
    /// The oldest waiting job with an idle runner that may take it, and those runners (by id).
    pub(super) fn next_assignable(&self) -> Option<(i64, Vec<i64>)> {
        if self.index.idle_runners.is_empty() {
            return None;
        }
        self.index.open_jobs.iter().map(|id| &self.jobs[id]).find_map(|job| {
            let runners = self.candidates_for(job);
            (!runners.is_empty()).then_some((job.request_id, runners))
        })
    }

    /// The idle runners that may take `job`, in id order: an acquired job's scale set's (while it is
    /// below capacity), or a queued job's legacy runners carrying all its labels.
    pub(super) fn candidates_for(&self, job: &Job) -> Vec<i64> {
        if self.held.holds(job.request_id) {
            return Vec::new();
        }
        match (job.state, job.acquired_by) {
            (JobState::Acquired, Some(set)) if self.below_capacity(set) => self
                .index
                .idle_in_scale_set
                .get(&set)
                .map(|ids| ids.iter().copied().collect())
                .unwrap_or_default(),
            (JobState::Queued, _) => {
                let scoped = self.index.idle_scoped.iter().copied();
                scoped.filter(|id| carries(&self.runners[id], &job.spec.labels)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// A seeded assignment latency from the configured range.
    pub(super) fn draw_assignment_latency(&mut self) -> Duration {
        let (min, max) = (self.cfg.assignment_latency_ms_min, self.cfg.assignment_latency_ms_max);
        Duration::from_millis(self.rng.random_range(min..=max))
    }

    /// Assigns the oldest assignable job to a runner drawn from its candidates, or returns `None`
    /// when nothing is assignable any more or a delayed-assignment perturbation holds the job (`held`).
    pub(super) fn assign_next(&mut self) -> Option<Assignment> {
        let (request_id, candidates) = self.next_assignable()?;
        let runner_id = candidates[self.rng.random_range(0..candidates.len())];
        if self.held.hold_on_assignment(request_id) {
            return None;
        }
        Some(self.give(request_id, runner_id))
    }

    /// Assigns `request_id` to `runner_id` (which may take it) and times its JobStarted.
    pub(super) fn give(&mut self, request_id: i64, runner_id: i64) -> Assignment {
        let now = self.now_ms();
        self.set_runner_state(runner_id, RunnerState::Busy { request_id });
        self.set_job_state(request_id, JobState::Running);
        let job = self.jobs.get_mut(&request_id).expect("assignable job exists");
        job.runner_id = Some(runner_id);
        job.started_ms = Some(now);
        self.record(EventKind::JobAssigned { request_id, runner_id });
        let job_started_in = self.schedule_start(request_id, runner_id);
        Assignment { request_id, runner_id, job_started_in }
    }

    /// RemoveRunner, linearised against assignment. Records and returns the outcome.
    pub(super) fn remove_runner(&mut self, runner_id: i64, api: RemovalApi) -> RemoveOutcome {
        let outcome = match self.runners.get(&runner_id).filter(|r| !r.is_removed()) {
            Some(runner) if runner.job().is_some() => match api {
                RemovalApi::ScaleSet if self.weakly_removable(runner) => RemoveOutcome::RemovedAssigned,
                RemovalApi::ScaleSet => RemoveOutcome::JobStillRunning,
                RemovalApi::Legacy => RemoveOutcome::Busy,
            },
            Some(_) => RemoveOutcome::Removed,
            None if api == RemovalApi::Legacy => RemoveOutcome::NotFound,
            None => match self.cfg.remove_unknown_runner {
                UnknownRunnerAnswer::NoContent => RemoveOutcome::Unknown,
                UnknownRunnerAnswer::NotFound => RemoveOutcome::NotFound,
                UnknownRunnerAnswer::NotFoundForIdZero if runner_id == 0 => RemoveOutcome::NotFound,
                UnknownRunnerAnswer::NotFoundForIdZero => RemoveOutcome::Unknown,
            },
        };
        self.record(EventKind::RemoveRunner { runner_id, outcome });
        match outcome {
            RemoveOutcome::Removed => self.remove(runner_id, RemovalReason::Removed),
            RemoveOutcome::RemovedAssigned => self.remove_assigned(runner_id),
            _ => {}
        }
        outcome
    }

    /// Under weak removal: whether `runner` holds a job whose JobStarted has not gone out.
    fn weakly_removable(&self, runner: &Runner) -> bool {
        self.cfg.weak_removal && runner.job().is_some_and(|job| self.pending_started.contains_key(&job))
    }

    /// Weak removal of a runner holding an unannounced job: the job never starts and fails.
    fn remove_assigned(&mut self, runner_id: i64) {
        let job = self.runners.get(&runner_id).and_then(Runner::job);
        self.remove(runner_id, RemovalReason::Removed);
        if let Some(request_id) = job {
            self.pending_started.remove(&request_id);
            self.finish_job(request_id, JobResult::Failed, EndReason::RunnerRemoved);
        }
    }

    /// The lost-runner timeout fired: if the runner still holds `request_id` with no process, the job
    /// fails "runner lost" and the runner is removed.
    pub(super) fn expire_lost_runner(&mut self, runner_id: i64, request_id: i64) {
        let still_lost = self.runners.get(&runner_id).is_some_and(
            |r| matches!(r.state, RunnerState::Lost { request_id: held, .. } if held == request_id),
        );
        if !still_lost {
            return;
        }
        if self.jobs.get(&request_id).is_some_and(|j| !j.is_completed()) {
            self.finish_job(request_id, JobResult::Failed, EndReason::RunnerLost);
        }
        self.remove(runner_id, RemovalReason::Lost);
    }

    /// The runner process on `connection` reports its job done. The job ends with `result` unless it
    /// already ended (canceled); an ephemeral runner then deregisters, a persistent one goes idle.
    pub(super) fn complete_from_runner(
        &mut self,
        runner_id: i64,
        connection: u64,
        result: JobResult,
    ) -> Result<i64, SessionEnded> {
        let reason = if result == JobResult::Canceled { EndReason::Canceled } else { EndReason::Completed };
        self.end_from_runner(runner_id, connection, result, reason)
    }

    /// The runner process on `connection` was told to shut down mid-job: it canceled the job and
    /// reports it canceled (reason `runner-shutdown`); then as [`World::complete_from_runner`].
    pub(super) fn cancel_from_runner_shutdown(
        &mut self,
        runner_id: i64,
        connection: u64,
    ) -> Result<i64, SessionEnded> {
        self.end_from_runner(runner_id, connection, JobResult::Canceled, EndReason::RunnerShutdown)
    }

    fn end_from_runner(
        &mut self,
        runner_id: i64,
        connection: u64,
        result: JobResult,
        reason: EndReason,
    ) -> Result<i64, SessionEnded> {
        let runner = self.runners.get(&runner_id).ok_or(SessionEnded::Removed)?;
        let request_id = match (runner.connections == connection, runner.state) {
            (_, RunnerState::Removed { .. }) => return Err(SessionEnded::Removed),
            (false, _) | (true, RunnerState::Offline | RunnerState::Lost { .. }) => {
                return Err(SessionEnded::Disconnected);
            }
            (true, RunnerState::Idle) => return Err(SessionEnded::NoJob),
            (true, RunnerState::Busy { request_id }) => request_id,
        };
        if self.jobs.get(&request_id).is_some_and(|j| !j.is_completed()) {
            self.finish_job(request_id, result, reason);
        }
        if self.runners[&runner_id].ephemeral {
            self.remove(runner_id, RemovalReason::Deregistered);
        } else {
            self.set_runner_state(runner_id, RunnerState::Idle);
        }
        Ok(request_id)
    }
}

fn carries(runner: &Runner, wanted: &[String]) -> bool {
    wanted.iter().all(|w| runner.labels.iter().any(|l| l.eq_ignore_ascii_case(w)))
}
