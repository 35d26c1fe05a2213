//! The listener's scaling decision (ARC-MODEL §4.3, \[SS\]/\[U\] `cmd/ghalistener/scaler`): from the
//! number of jobs assigned to the scale set, the `replicas` and `patchID` the EphemeralRunnerSet is
//! patched with.
//!
//! The target is `min(minRunners + totalAssignedJobs, maxRunners)`. Every decision takes the next
//! patch sequence number as its patch ID, except the "forced" state: when no job event was handled
//! since the last decision (`dirty` clear) and the target is unchanged and equal to `minRunners`,
//! the patch ID is 0, which is what allows the ERS to scale down idle runners. The very first
//! decision is always patch ID 0, because the sequence starts at -1. The sequence wraps from
//! `i32::MAX` back to 1, as ARC's does. This file is pure: the ERS patch itself is sent by
//! [`super::desired_count`].

/// What one decision asks of the EphemeralRunnerSet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DesiredState {
    /// `spec.replicas`: the target runner count.
    pub replicas: i32,
    /// `spec.patchID`: the patch sequence number, or 0 for the forced state.
    pub patch_id: i64,
}

/// The scaler's state across decisions: last target, patch sequence, and whether a job event was
/// handled since the last decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaler {
    min_runners: i32,
    max_runners: i32,
    /// The last target; -1 before the first decision.
    target_runners: i32,
    /// The last patch sequence number; -1 before the first decision.
    patch_seq: i64,
    /// Set by a handled JobStarted or JobCompleted, cleared by every decision.
    dirty: bool,
}

impl Scaler {
    /// A scaler between `min_runners` and `max_runners`, before its first decision.
    pub fn new(min_runners: i32, max_runners: i32) -> Self {
        Scaler { min_runners, max_runners, target_runners: -1, patch_seq: -1, dirty: false }
    }

    /// Records that a job event (JobStarted or JobCompleted) was handled: the next decision gets a
    /// fresh patch ID even if the target did not move.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Decides the desired state for `total_assigned_jobs` (ARC's `setDesiredWorkerState`). A
    /// negative count, which the service never sends, is read as 0 so the target stays in
    /// `[minRunners, maxRunners]`.
    pub fn desired_state(&mut self, total_assigned_jobs: i64) -> DesiredState {
        let dirty = std::mem::take(&mut self.dirty);
        if self.patch_seq == i64::from(i32::MAX) {
            self.patch_seq = 0;
        }
        self.patch_seq += 1;
        let target = self.target_for(total_assigned_jobs);
        let old_target = std::mem::replace(&mut self.target_runners, target);
        let forced = !dirty && target == old_target && target == self.min_runners;
        let patch_id = if forced { 0 } else { self.patch_seq };
        DesiredState { replicas: target, patch_id }
    }

    fn target_for(&self, total_assigned_jobs: i64) -> i32 {
        let wanted = i64::from(self.min_runners).saturating_add(total_assigned_jobs.max(0));
        let target = wanted.min(i64::from(self.max_runners));
        i32::try_from(target).unwrap_or(self.max_runners)
    }

    /// The last target (-1 before the first decision).
    pub fn target_runners(&self) -> i32 {
        self.target_runners
    }

    /// The last patch sequence number (-1 before the first decision).
    pub fn patch_seq(&self) -> i64 {
        self.patch_seq
    }

    /// Whether a job event was handled since the last decision.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }
}

#[cfg(test)]
mod tests {
    //! Ports of ARC's `TestSetDesiredWorkerState_*` tables (`cmd/ghalistener/scaler/scaler_test.go`),
    //! one test per row, named for the behaviour the row pins down.

    use super::*;

    const UNBOUNDED: i32 = i32::MAX;

    /// Decides for `count`, then checks the decision and the state left behind.
    fn decide(s: &mut Scaler, count: i64, patch_id: i64, target: i32, patch_seq: i64) {
        let desired = s.desired_state(count);
        assert_eq!(desired, DesiredState { replicas: target, patch_id }, "decision for {count}");
        assert_eq!((s.target_runners(), s.patch_seq(), s.is_dirty()), (target, patch_seq, false));
    }

    // --- MinMaxDefaults: min 0, max unbounded -------------------------------------------------

    #[test]
    fn the_first_decision_with_no_jobs_is_patch_zero_at_zero_runners() {
        decide(&mut Scaler::new(0, UNBOUNDED), 0, 0, 0, 0);
    }

    #[test]
    fn the_first_decision_with_a_job_is_still_patch_zero() {
        decide(&mut Scaler::new(0, UNBOUNDED), 1, 0, 1, 0);
    }

    #[test]
    fn a_completed_job_gives_the_next_patch_id_when_scaling_back_to_zero() {
        let mut s = Scaler::new(0, UNBOUNDED);
        decide(&mut s, 1, 0, 1, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 0, 1);
    }

    #[test]
    fn the_same_count_twice_above_min_gets_a_new_patch_id() {
        let mut s = Scaler::new(0, UNBOUNDED);
        decide(&mut s, 1, 0, 1, 0);
        decide(&mut s, 1, 1, 1, 1);
    }

    #[test]
    fn a_dirty_first_decision_is_still_patch_zero_and_clears_dirty() {
        let mut s = Scaler::new(0, UNBOUNDED);
        s.mark_dirty();
        decide(&mut s, 1, 0, 1, 0);
    }

    #[test]
    fn dirty_twice_then_no_jobs_scales_to_zero_with_patch_one() {
        let mut s = Scaler::new(0, UNBOUNDED);
        s.mark_dirty();
        decide(&mut s, 1, 0, 1, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 0, 1);
    }

    // --- MinSet: min 1, max unbounded -----------------------------------------------------------

    #[test]
    fn with_min_set_the_first_decision_targets_min_with_patch_zero() {
        decide(&mut Scaler::new(1, UNBOUNDED), 0, 0, 1, 0);
    }

    #[test]
    fn with_min_set_a_completed_job_returns_to_min_with_a_fresh_patch_id() {
        let mut s = Scaler::new(1, UNBOUNDED);
        decide(&mut s, 2, 0, 3, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 1, 1);
    }

    #[test]
    fn with_min_set_an_idle_repeat_at_min_forces_patch_zero_while_the_sequence_continues() {
        let mut s = Scaler::new(1, UNBOUNDED);
        decide(&mut s, 3, 0, 4, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 1, 1);
        decide(&mut s, 0, 0, 1, 2);
    }

    // --- MaxSet: min 0, max 5 -------------------------------------------------------------------

    #[test]
    fn with_max_set_the_first_decision_with_no_jobs_is_zero_runners() {
        decide(&mut Scaler::new(0, 5), 0, 0, 0, 0);
    }

    #[test]
    fn with_max_set_a_completed_job_scales_back_to_zero_with_patch_one() {
        let mut s = Scaler::new(0, 5);
        decide(&mut s, 2, 0, 2, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 0, 1);
    }

    #[test]
    fn with_max_set_more_jobs_than_max_are_capped_at_max() {
        decide(&mut Scaler::new(0, 5), 6, 0, 5, 0);
    }

    #[test]
    fn with_max_set_exactly_max_jobs_target_max() {
        decide(&mut Scaler::new(0, 5), 5, 0, 5, 0);
    }

    #[test]
    fn with_max_set_a_dirty_decision_above_max_is_capped_with_a_fresh_patch_id() {
        let mut s = Scaler::new(0, 5);
        decide(&mut s, 1, 0, 1, 0);
        s.mark_dirty();
        decide(&mut s, 6, 1, 5, 1);
    }

    #[test]
    fn with_max_set_scaling_back_from_the_cap_to_zero_gets_a_fresh_patch_id() {
        let mut s = Scaler::new(0, 5);
        decide(&mut s, 6, 0, 5, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 0, 1);
    }

    #[test]
    fn with_max_set_an_idle_repeat_at_min_forces_patch_zero() {
        let mut s = Scaler::new(0, 5);
        decide(&mut s, 3, 0, 3, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 0, 1);
        decide(&mut s, 0, 0, 0, 2);
    }

    // --- MinMaxSet: min 1, max 3 ----------------------------------------------------------------

    #[test]
    fn with_min_and_max_set_the_first_decision_targets_min() {
        decide(&mut Scaler::new(1, 3), 0, 0, 1, 0);
    }

    #[test]
    fn with_min_and_max_set_no_jobs_after_a_completion_returns_to_min() {
        let mut s = Scaler::new(1, 3);
        decide(&mut s, 2, 0, 3, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 1, 1);
    }

    #[test]
    fn with_min_and_max_set_min_plus_jobs_is_capped_at_max() {
        decide(&mut Scaler::new(1, 3), 4, 0, 3, 0);
        decide(&mut Scaler::new(1, 3), 3, 0, 3, 0);
    }

    #[test]
    fn with_min_and_max_set_an_idle_repeat_at_min_forces_patch_zero() {
        let mut s = Scaler::new(1, 3);
        decide(&mut s, 3, 0, 3, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 1, 1);
        decide(&mut s, 0, 0, 1, 2);
    }

    // --- Beyond ARC's tables ----------------------------------------------------------------------

    #[test]
    fn a_job_event_since_the_last_decision_prevents_the_forced_zero() {
        let mut s = Scaler::new(1, 3);
        decide(&mut s, 0, 0, 1, 0);
        s.mark_dirty();
        decide(&mut s, 0, 1, 1, 1);
        decide(&mut s, 0, 0, 1, 2);
    }

    #[test]
    fn an_unchanged_target_above_min_is_never_forced() {
        let mut s = Scaler::new(1, 3);
        decide(&mut s, 2, 0, 3, 0);
        decide(&mut s, 2, 1, 3, 1);
        decide(&mut s, 5, 2, 3, 2);
    }

    #[test]
    fn the_patch_sequence_wraps_from_i32_max_to_one() {
        let mut s = Scaler::new(0, 5);
        s.patch_seq = i64::from(i32::MAX) - 1;
        decide(&mut s, 1, i64::from(i32::MAX), 1, i64::from(i32::MAX));
        decide(&mut s, 2, 1, 2, 1);
    }

    #[test]
    fn a_negative_job_count_is_read_as_none_and_huge_ones_are_capped() {
        let mut s = Scaler::new(1, 3);
        decide(&mut s, -4, 0, 1, 0);
        decide(&mut s, i64::MAX, 1, 3, 1);
    }
}
