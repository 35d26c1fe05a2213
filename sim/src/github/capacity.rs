//! The listener's capacity (ARC-MODEL §4.1, §6.2): every GetMessage carries `X-ScaleSetMaxCapacity`
//! (ARC sends the runner set's maxRunners), the most jobs its scale set may hold at once. The service
//! keeps the last value per scale set and honours it twice: AcquireJobs acquires only while the scale
//! set holds fewer unfinished jobs (acquired or running) than that, and assignment only while fewer of
//! its runners hold a job.
//!
//! A job AcquireJobs leaves queued for lack of room stays offered to the scale set and gets a new
//! JobAvailable as soon as there is room again (one of the scale set's jobs ends, or its listener
//! sends a higher capacity). Simplification: when and how often the real service re-offers such jobs
//! is not documented; this one re-offers at once, as many as fit. Under the assumption
//! `capacity-header=advisory` the value is kept but not honoured: no limit at all.

use super::events::EventKind;
use super::model::JobState;
use super::state::World;

impl World {
    /// The last capacity scale set `scale_set_id`'s listener sent, if any.
    fn max_capacity(&self, scale_set_id: i64) -> Option<usize> {
        if !self.cfg.honour_max_capacity {
            return None;
        }
        let cap = self.scale_sets.get(&scale_set_id)?.max_capacity?;
        Some(usize::try_from(cap).unwrap_or(usize::MAX))
    }

    /// Unfinished jobs the scale set has acquired (waiting for a runner or running): its statistics'
    /// assigned jobs.
    fn jobs_held(&self, scale_set_id: i64) -> usize {
        usize::try_from(self.statistics(scale_set_id).total_assigned_jobs).unwrap_or(0)
    }

    /// How many more jobs AcquireJobs may acquire for the scale set; `None` without a capacity.
    pub(super) fn acquire_room(&self, scale_set_id: i64) -> Option<usize> {
        let cap = self.max_capacity(scale_set_id)?;
        Some(cap.saturating_sub(self.jobs_held(scale_set_id)))
    }

    /// Whether one more of the scale set's runners may take a job.
    pub(super) fn below_capacity(&self, scale_set_id: i64) -> bool {
        let Some(cap) = self.max_capacity(scale_set_id) else { return true };
        let busy = self.statistics(scale_set_id).total_busy_runners;
        usize::try_from(busy).unwrap_or(0) < cap
    }

    /// AcquireJobs leaves job `request_id` queued for lack of room: remember it for a re-offer.
    pub(super) fn defer_acquisition(&mut self, request_id: i64, scale_set_id: i64) {
        let max_capacity = self.scale_sets.get(&scale_set_id).and_then(|s| s.max_capacity).unwrap_or(0);
        self.deferred.entry(scale_set_id).or_default().insert(request_id);
        self.record(EventKind::AcquireDeferred { request_id, scale_set_id, max_capacity });
    }

    /// Offers the scale set's deferred jobs again, oldest first, as many as it has room for. Jobs no
    /// longer queued for it are forgotten when their turn comes; the rest wait, unread, so a job's end
    /// costs the jobs it re-offers, not every deferred one.
    pub(super) fn reoffer_deferred(&mut self, scale_set_id: i64) {
        let Some(mut deferred) = self.deferred.remove(&scale_set_id) else { return };
        let mut room = self.acquire_room(scale_set_id).unwrap_or(usize::MAX);
        while room > 0 {
            let Some(request_id) = deferred.pop_first() else { break };
            let waiting = self
                .jobs
                .get(&request_id)
                .is_some_and(|j| j.state == JobState::Queued && j.offered_to.contains(&scale_set_id));
            if waiting {
                room -= 1;
                self.offer(request_id, scale_set_id);
            }
        }
        if !deferred.is_empty() {
            self.deferred.insert(scale_set_id, deferred);
        }
    }
}
