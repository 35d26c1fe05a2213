//! Jobs (ARC-MODEL §6.2 "Job"): queued → offered to matching scale sets (JobAvailable) → acquired by
//! one (AcquireJobs, JobAssigned) → running on a runner (JobStarted, see `assign`) → completed
//! (JobCompleted: succeeded, failed or canceled). Job messages go to the acquiring scale set's queue;
//! a job nobody acquired ends without a message.

use super::events::EventKind;
use super::messages::{JobFields, JobMessage};
use super::model::{EndReason, Job, JobResult, JobSpec, JobState};
use super::reply::Reply;
use super::state::World;
use super::state::later::Later;
use super::tokens;

/// Why a job cannot be canceled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CancelError {
    /// No job has this request id.
    #[error("no job with request id {0}")]
    Unknown(i64),
    /// The job already ended.
    #[error("job {0} already completed")]
    AlreadyCompleted(i64),
}

impl World {
    /// Queues a job and offers it to every scale set it matches. Returns its request id.
    pub(super) fn submit_job(&mut self, spec: JobSpec) -> i64 {
        let request_id = self.next_id();
        let job = Job {
            request_id,
            job_id: tokens::uuid(self.seed, "job", request_id.unsigned_abs()),
            workflow_run_id: 10_000 + request_id,
            spec,
            state: JobState::Queued,
            offered_to: Default::default(),
            acquired_by: None,
            runner_id: None,
            queued_ms: self.now_ms(),
            acquired_ms: None,
            started_ms: None,
            finished_ms: None,
        };
        self.jobs.insert(request_id, job);
        self.ledger_new_job(request_id);
        self.set_job_state(request_id, JobState::Queued);
        self.record(EventKind::JobQueued { request_id });
        self.offer_to_matching(request_id);
        request_id
    }

    /// Offers job `request_id` to every scale set whose labels it matches.
    fn offer_to_matching(&mut self, request_id: i64) {
        let matching: Vec<i64> = self
            .scale_sets
            .values()
            .filter(|s| s.matches(&self.jobs[&request_id].spec.labels))
            .map(|s| s.id)
            .collect();
        for scale_set_id in matching {
            self.offer(request_id, scale_set_id);
        }
    }

    /// Offers every queued job that scale set `scale_set_id` matches and has not been offered yet.
    pub(super) fn offer_queued_jobs(&mut self, scale_set_id: i64) {
        let Some(set) = self.scale_sets.get(&scale_set_id) else { return };
        let unoffered: Vec<i64> = self
            .jobs
            .values()
            .filter(|j| {
                j.state == JobState::Queued
                    && !j.offered_to.contains(&scale_set_id)
                    && set.matches(&j.spec.labels)
            })
            .map(|j| j.request_id)
            .collect();
        for request_id in unoffered {
            self.offer(request_id, scale_set_id);
        }
    }

    /// Offers job `request_id` to scale set `scale_set_id` (a JobAvailable in its queue).
    pub(super) fn offer(&mut self, request_id: i64, scale_set_id: i64) {
        let available = self.available_message(request_id, scale_set_id);
        self.edit_job(request_id, |job| job.offered_to.insert(scale_set_id));
        self.queue(scale_set_id).pending.push(available);
    }

    /// The JobAvailable of job `request_id` for scale set `scale_set_id`.
    fn available_message(&self, request_id: i64, scale_set_id: i64) -> JobMessage {
        let acquire_job_url =
            format!("{}_apis/runtime/runnerscalesets/{scale_set_id}/acquirejobs", self.cfg.service_url);
        JobMessage::Available { acquire_job_url, job: self.job_fields(request_id) }
    }

    /// Puts the jobs scale set `scale_set_id` acquired but never started back in the queue, offered
    /// again to the other scale sets they match.
    pub(super) fn requeue_jobs_of(&mut self, scale_set_id: i64) {
        let stranded: Vec<i64> = self
            .jobs
            .values()
            .filter(|j| j.acquired_by == Some(scale_set_id) && j.state == JobState::Acquired)
            .map(|j| j.request_id)
            .collect();
        for request_id in stranded {
            self.requeue(request_id);
        }
    }

    /// Puts acquired job `request_id` back in the queue and offers it to every scale set it matches.
    pub(crate) fn requeue(&mut self, request_id: i64) {
        self.set_job_state(request_id, JobState::Queued);
        self.edit_job(request_id, |job| {
            job.acquired_by = None;
            job.acquired_ms = None;
            job.offered_to.clear();
        });
        self.record(EventKind::JobQueued { request_id });
        self.offer_to_matching(request_id);
    }

    /// The re-offer time of job `request_id`, acquired at `acquired_ms`, has come: if no runner has
    /// taken it since, it is offered again (assumption `unstarted-dispatch`).
    pub(crate) fn reoffer_unstarted(&mut self, request_id: i64, acquired_ms: u64) {
        let unstarted = self
            .jobs
            .get(&request_id)
            .is_some_and(|j| j.state == JobState::Acquired && j.acquired_ms == Some(acquired_ms));
        if unstarted {
            self.requeue(request_id);
        }
    }

    /// AcquireJobs: of `request_ids`, acquires those still queued and offered to this scale set, as
    /// many as its capacity leaves room for; the others stay queued and are offered again later (see
    /// `capacity`).
    pub(super) fn acquire_jobs(&mut self, scale_set_id: i64, request_ids: &[i64]) -> Vec<i64> {
        let mut acquired = Vec::new();
        let mut room = self.acquire_room(scale_set_id);
        for &request_id in request_ids {
            let now = self.now_ms();
            let Some(job) = self.jobs.get(&request_id) else { continue };
            if job.state != JobState::Queued
                || !job.offered_to.contains(&scale_set_id)
                || acquired.contains(&request_id)
            {
                continue;
            }
            if room == Some(0) {
                self.defer_acquisition(request_id, scale_set_id);
                continue;
            }
            room = room.map(|r| r - 1);
            self.edit_job(request_id, |job| {
                job.acquired_by = Some(scale_set_id);
                job.acquired_ms = Some(now);
            });
            self.set_job_state(request_id, JobState::Acquired);
            if let Some(after_ms) = self.cfg.reoffer_unstarted_after_ms {
                self.after(after_ms, Later::ReofferUnstarted { request_id, acquired_ms: now });
            }
            acquired.push(request_id);
            self.record(EventKind::JobAcquired { request_id, scale_set_id });
            let job = self.job_fields(request_id);
            self.queue(scale_set_id).pending.push(JobMessage::Assigned { job });
        }
        acquired
    }

    /// `GET runnerscalesets/{id}/acquirablejobs`: the jobs offered to the scale set and not yet
    /// acquired by anyone, as their JobAvailable messages (ARC's `AcquirableJobList`, `{count, jobs}`).
    pub(super) fn http_acquirable_jobs(&self, scale_set_id: i64) -> Reply {
        if !self.scale_sets.contains_key(&scale_set_id) {
            let message = format!("runner scale set {scale_set_id} not found");
            return Reply::exception(404, "RunnerScaleSetNotFoundException", message);
        }
        let jobs: Vec<JobMessage> = self
            .index
            .open_jobs
            .iter()
            .map(|id| &self.jobs[id])
            .filter(|j| j.state == JobState::Queued && j.offered_to.contains(&scale_set_id))
            .map(|j| self.available_message(j.request_id, scale_set_id))
            .collect();
        Reply::json(200, &AcquirableJobs { count: jobs.len(), jobs })
    }

    /// Cancels a job that has not ended. A running job ends at once; its runner stays busy until its
    /// process reports back.
    pub(super) fn cancel_job(&mut self, request_id: i64) -> Result<(), CancelError> {
        let job = self.jobs.get(&request_id).ok_or(CancelError::Unknown(request_id))?;
        if job.is_completed() {
            return Err(CancelError::AlreadyCompleted(request_id));
        }
        self.finish_job(request_id, JobResult::Canceled, EndReason::Canceled);
        Ok(())
    }

    /// Ends a job and tells the acquiring scale set (JobCompleted, after a JobStarted still pending),
    /// which may then have room for a job it had to leave.
    pub(super) fn finish_job(&mut self, request_id: i64, result: JobResult, reason: EndReason) {
        self.send_job_started(request_id);
        let now = self.now_ms();
        self.set_job_state(request_id, JobState::Completed { result, reason });
        let job = self.jobs.get_mut(&request_id).expect("finished job exists");
        job.finished_ms = Some(now);
        let (scale_set, runner_id) = (job.acquired_by, job.runner_id);
        self.record(EventKind::JobCompleted { request_id, result, reason });
        let Some(scale_set_id) = scale_set.filter(|id| self.scale_sets.contains_key(id)) else { return };
        let runner_name =
            runner_id.and_then(|id| self.runners.get(&id)).map(|r| r.name.clone()).unwrap_or_default();
        let completed = JobMessage::Completed {
            result: result.as_str().into(),
            runner_id: runner_id.unwrap_or(0),
            runner_name,
            job: self.job_fields(request_id),
        };
        self.queue(scale_set_id).pending.push(completed);
        self.reoffer_deferred(scale_set_id);
    }

    /// The common job-message fields of job `request_id` as of now.
    pub(super) fn job_fields(&self, request_id: i64) -> JobFields {
        let job = &self.jobs[&request_id];
        let at = |ms: Option<u64>| JobFields::time(ms.map(|ms| self.timestamp(ms)));
        JobFields {
            runner_request_id: request_id,
            repository_name: job.spec.repository.clone(),
            owner_name: job.spec.owner.clone(),
            job_id: job.job_id.clone(),
            job_workflow_ref: job.spec.workflow_ref.clone(),
            job_display_name: job.spec.display_name.clone(),
            workflow_run_id: job.workflow_run_id,
            event_name: job.spec.event_name.clone(),
            request_labels: job.spec.labels.clone(),
            queue_time: at(Some(job.queued_ms)),
            scale_set_assign_time: at(job.acquired_ms),
            runner_assign_time: at(job.started_ms),
            finish_time: at(job.finished_ms),
        }
    }
}

/// The answer of GetAcquirableJobs.
#[derive(Debug, serde::Serialize)]
struct AcquirableJobs {
    count: usize,
    jobs: Vec<JobMessage>,
}
