//! Early answers: a run that has already answered the question it was run for can stop before its
//! end. A sweep runs a bug variant to learn whether the oracles it must fail fire; once they have, the
//! rest of the run (often most of it) changes no verdict. The world consults an [`EarlyAnswer`] at
//! spaced simulated times with its record so far, and stops when it says the question is answered.
//!
//! The record it is shown holds every kept event *before* the instant the world paused at (events of
//! that instant may still be under way), GitHub's jobs and runners as they are, no objects (those are
//! the end state of a finished run) and `end_ms` at that instant; a judge that reads it must be one
//! whose answer a later event cannot retract. The world knows nothing
//! of which judges those are: the caller decides.

use super::RunRecord;

/// Gaps between checks grow with the run (a quarter of the time run so far), so the checks cost a
/// few passes over the record in all, and a run stops at most a quarter of its age after its answer.
const GAP_SHARE: u64 = 4;

/// The smallest gap between two checks, in simulated ms.
const MIN_GAP_MS: u64 = 5_000;

/// A question a run can answer before its end: consulted with the record so far, it says whether the
/// run may stop.
pub struct EarlyAnswer {
    answered: Box<dyn FnMut(&RunRecord) -> bool + Send>,
    next_check_ms: u64,
    fixed_gap_ms: Option<u64>,
}

impl std::fmt::Debug for EarlyAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EarlyAnswer").field("next_check_ms", &self.next_check_ms).finish_non_exhaustive()
    }
}

impl EarlyAnswer {
    /// Stops the run once `answered` holds for its record so far.
    pub fn when(answered: impl FnMut(&RunRecord) -> bool + Send + 'static) -> Self {
        EarlyAnswer { answered: Box::new(answered), next_check_ms: MIN_GAP_MS, fixed_gap_ms: None }
    }

    /// [`EarlyAnswer::when`], checked every `gap_ms` (at least the world's own step) instead of at
    /// growing gaps: for looking at many cuts of one run.
    pub fn every(gap_ms: u64, answered: impl FnMut(&RunRecord) -> bool + Send + 'static) -> Self {
        EarlyAnswer { answered: Box::new(answered), next_check_ms: gap_ms, fixed_gap_ms: Some(gap_ms) }
    }

    /// Whether a check is due at `now_ms`.
    pub fn due(&self, now_ms: u64) -> bool {
        now_ms >= self.next_check_ms
    }

    /// Checks `so_far` (the record before `now_ms`) and schedules the next check.
    pub fn check(&mut self, now_ms: u64, so_far: &RunRecord) -> bool {
        let gap = self.fixed_gap_ms.unwrap_or_else(|| MIN_GAP_MS.max(now_ms / GAP_SHARE));
        self.next_check_ms = now_ms + gap.max(1);
        (self.answered)(so_far)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::SyntheticRun;

    #[test]
    fn checks_are_spaced_by_a_quarter_of_the_run_so_far_and_at_least_five_seconds() {
        let mut answer = EarlyAnswer::when(|run| run.end_ms >= 100_000);
        let mut checked = Vec::new();
        for now in (0..=200_000).step_by(1_000) {
            if answer.due(now) {
                checked.push(now);
                let mut run = SyntheticRun::new().build();
                run.end_ms = now;
                if answer.check(now, &run) {
                    break;
                }
            }
        }
        let expected = [5, 10, 15, 20, 25, 32, 40, 50, 63, 79, 99, 124].map(|s| s * 1_000);
        assert_eq!(checked, expected, "checks on the world's 1 s steps");
        let answered_at = 100_000;
        let stopped_at = checked.last().copied().unwrap_or(0);
        assert!(stopped_at - answered_at <= answered_at / GAP_SHARE + 1_000, "within a quarter of its age");
    }

    #[test]
    fn a_fixed_gap_checks_at_every_multiple_of_it() {
        let mut answer = EarlyAnswer::every(2_000, |_| false);
        let run = SyntheticRun::new().build();
        let due: Vec<u64> =
            (0..=9_000).step_by(1_000).filter(|now| answer.due(*now) && !answer.check(*now, &run)).collect();
        assert_eq!(due, vec![2_000, 4_000, 6_000, 8_000]);
    }
}
