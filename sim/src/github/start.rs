//! Between a job's assignment and its running (ARC-MODEL §6.2 "Job"): the service queues JobStarted
//! for the scale set's listener after a seeded delay, and the runner process starts running the job
//! after another seeded delay, drawn independently (either may come first).
//!
//! Until JobStarted is out the listener cannot know the runner is busy, but the runner is busy at the
//! service from the assignment on: RemoveRunner answers 400 (unless weak removal is on, see `assign`).
//! A job that ends before its JobStarted went out has it queued first, so the listener always sees a
//! job's JobStarted before its JobCompleted. Legacy runners' jobs have no JobStarted (no scale set),
//! only the pickup delay. Simplification: both delays are independent of load and of each other.

use std::time::Duration;

use super::events::EventKind;
use super::messages::JobMessage;
use super::state::World;

impl World {
    /// Draws the timing of job `request_id`, just assigned to `runner_id`. A zero JobStarted delay
    /// queues JobStarted now; otherwise the delay is returned for the caller to time it
    /// ([`World::send_job_started`] when it passes).
    pub(super) fn schedule_start(&mut self, request_id: i64, runner_id: i64) -> Option<Duration> {
        let pickup = self.cfg.runner_pickup_delay.draw(&mut self.job_timing_rng);
        let started = self.cfg.job_started_delay.draw(&mut self.job_timing_rng);
        let due_ms = self.now_ms() + u64::try_from(pickup.as_millis()).unwrap_or(u64::MAX);
        self.pickup_due_ms.insert(request_id, due_ms);
        self.jobs.get(&request_id).and_then(|j| j.acquired_by)?;
        self.pending_started.insert(request_id, runner_id);
        if started.is_zero() {
            self.send_job_started(request_id);
            return None;
        }
        Some(started)
    }

    /// Queues the JobStarted of `request_id` if it is still pending.
    pub(super) fn send_job_started(&mut self, request_id: i64) {
        let Some(runner_id) = self.pending_started.remove(&request_id) else { return };
        let Some(scale_set_id) = self.jobs.get(&request_id).and_then(|j| j.acquired_by) else { return };
        let runner_name = self.runners.get(&runner_id).map(|r| r.name.clone()).unwrap_or_default();
        let job = self.job_fields(request_id);
        self.queue(scale_set_id).pending.push(JobMessage::Started { runner_id, runner_name, job });
        self.record(EventKind::JobStartedSent { request_id, runner_id });
    }

    /// Sim ms at which the runner process starts job `request_id`, if it has not yet.
    pub(super) fn pickup_due(&self, request_id: i64) -> Option<u64> {
        self.pickup_due_ms.get(&request_id).copied()
    }

    /// The runner process of `runner_id` starts job `request_id` (recorded once).
    pub(super) fn pick_up(&mut self, request_id: i64, runner_id: i64) {
        if self.pickup_due_ms.remove(&request_id).is_some() {
            self.record(EventKind::JobPickedUp { request_id, runner_id });
        }
    }
}
