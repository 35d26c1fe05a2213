//! The 0.13 listener's scaling decision (ARC-MODEL §4.3 \[0.13\], `cmd/ghalistener/worker`'s
//! `setDesiredWorkerState` at gha-runner-scale-set-0.13.1), used when the
//! `releases.scaleset_listener` switch is off.
//!
//! Every decision takes the next patch sequence number as its patch ID. The target is
//! `min(minRunners + count, maxRunners)`, except on an "empty batch" (`count == 0` and no job
//! completed: a long poll that returned nothing), where the last target is kept when it is higher
//! (#3453), and the patch ID is 0 when that target is `minRunners` (#3426's self-correction: all
//! idle at the minimum, so the ERS may scale down). The first decision is patch 0 (the sequence
//! starts at -1). The sequence does not wrap, as 0.13's does not. This file is pure.

use super::scaler::DesiredState;

/// The worker's state across decisions: the last target and the patch sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerScaler {
    min_runners: i32,
    max_runners: i32,
    /// The last target; -1 before the first decision.
    last_patch: i32,
    /// The last patch sequence number; -1 before the first decision.
    patch_seq: i64,
}

impl WorkerScaler {
    /// A worker between `min_runners` and `max_runners`, before its first decision.
    pub fn new(min_runners: i32, max_runners: i32) -> Self {
        WorkerScaler { min_runners, max_runners, last_patch: -1, patch_seq: -1 }
    }

    /// Decides for `count` assigned jobs after `jobs_completed` completions (0.13's
    /// `HandleDesiredRunnerCount(count, jobsCompleted)`). A negative count is read as 0.
    pub fn desired_state(&mut self, count: i64, jobs_completed: usize) -> DesiredState {
        self.patch_seq = self.patch_seq.saturating_add(1);
        let mut patch_id = self.patch_seq;
        let wanted = i64::from(self.min_runners).saturating_add(count.max(0));
        let mut target = i32::try_from(wanted.min(i64::from(self.max_runners))).unwrap_or(self.max_runners);
        if count <= 0 && jobs_completed == 0 {
            target = target.max(self.last_patch);
            if target == self.min_runners {
                patch_id = 0;
            }
        }
        self.last_patch = target;
        DesiredState { replicas: target, patch_id }
    }

    /// The last target (-1 before the first decision).
    pub fn last_patch(&self) -> i32 {
        self.last_patch
    }

    /// The last patch sequence number (-1 before the first decision).
    pub fn patch_seq(&self) -> i64 {
        self.patch_seq
    }
}

#[cfg(test)]
mod tests {
    //! Ports of rows of 0.13.1's `TestSetDesiredWorkerState_*` (`cmd/ghalistener/worker/worker_test.go`).

    use super::*;

    const UNBOUNDED: i32 = i32::MAX;

    /// Decides, then checks the patch ID and the state left behind.
    fn decide(w: &mut WorkerScaler, count: i64, completed: usize, patch_id: i64, last: i32, seq: i64) {
        let desired = w.desired_state(count, completed);
        assert_eq!(desired, DesiredState { replicas: last, patch_id }, "decision for ({count}, {completed})");
        assert_eq!((w.last_patch(), w.patch_seq()), (last, seq));
    }

    #[test]
    fn the_first_decision_is_patch_zero_whatever_the_count() {
        decide(&mut WorkerScaler::new(0, UNBOUNDED), 0, 0, 0, 0, 0);
        decide(&mut WorkerScaler::new(0, UNBOUNDED), 1, 0, 0, 1, 0);
        decide(&mut WorkerScaler::new(0, UNBOUNDED), 1, 1, 0, 1, 0);
    }

    #[test]
    fn a_completed_job_scales_back_with_the_next_patch_id() {
        let mut w = WorkerScaler::new(0, UNBOUNDED);
        decide(&mut w, 1, 0, 0, 1, 0);
        decide(&mut w, 0, 1, 1, 0, 1);
    }

    #[test]
    fn the_same_count_twice_gets_a_new_patch_id() {
        let mut w = WorkerScaler::new(0, UNBOUNDED);
        decide(&mut w, 1, 0, 0, 1, 0);
        decide(&mut w, 1, 0, 1, 1, 1);
    }

    #[test]
    fn an_empty_batch_reuses_the_last_target() {
        let mut w = WorkerScaler::new(0, UNBOUNDED);
        decide(&mut w, 1, 0, 0, 1, 0);
        decide(&mut w, 0, 0, 1, 1, 1);
        let mut with_min = WorkerScaler::new(1, UNBOUNDED);
        decide(&mut with_min, 2, 0, 0, 3, 0);
        decide(&mut with_min, 0, 0, 1, 3, 1);
    }

    #[test]
    fn an_empty_batch_at_the_minimum_forces_patch_zero_while_the_sequence_continues() {
        let mut w = WorkerScaler::new(1, 3);
        decide(&mut w, 2, 0, 0, 3, 0);
        decide(&mut w, 0, 1, 1, 1, 1);
        decide(&mut w, 0, 0, 0, 1, 2);
    }

    #[test]
    fn counts_are_capped_at_max_and_negative_counts_read_as_none() {
        decide(&mut WorkerScaler::new(0, 5), 6, 0, 0, 5, 0);
        decide(&mut WorkerScaler::new(1, 3), -4, 0, 0, 1, 0);
    }
}
