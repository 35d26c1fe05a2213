//! `arcsim shrink`'s engine: a failing capsule cut down to what its failure needs, keeping a
//! candidate only when the same oracle still fails. In order: the whole plan dropped at once (a bug
//! that needs no fault), the run shortened (arrivals stop earlier, the liveness phase kept), the
//! disruptions and jobs that come after the failure cut in one go (nothing later caused it), the
//! plan's steps delta-debugged ([`ddmin()`]), the workload's jobs delta-debugged, each remaining step
//! weakened ([`weaken`]), and last every remaining step and job removed one at a time to verify that
//! the result is 1-minimal (a removal that still fails is kept, and the check starts over). Every
//! rerun counts against one budget (200 by default); a stage that would leave the check too few
//! reruns stops early.

pub mod ddmin;
pub mod steps;
pub mod trials;
pub mod weaken;

use std::fmt;

use arc_sim::TraceMode;

use self::ddmin::{Outcome, ddmin};
use self::steps::{Step, jobs_arriving, jobs_of, steps_of, with_jobs, with_steps};
use self::trials::{Seen, Trials};
use crate::capsule::{Capsule, CapsuleError};

/// The reruns a shrink may spend unless told otherwise.
pub const DEFAULT_BUDGET: u32 = 200;
/// Arrival horizons closer than this are not told apart when the run is shortened.
const HORIZON_STEP_MS: u64 = 10_000;

/// Why a capsule cannot be shrunk.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    /// It cannot be read or run.
    #[error(transparent)]
    Capsule(#[from] CapsuleError),
    /// Its run does not fail the oracle it names: there is nothing to shrink.
    #[error(
        "the run passes {oracle}, so there is nothing to shrink (oracles that failed: {failed}); replay it with `arcsim run --capsule`"
    )]
    DoesNotFail {
        /// The expected oracle.
        oracle: String,
        /// The oracles that did fail, or `none`.
        failed: String,
    },
}

/// How big a failing run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Size {
    /// Fault rules, disruptions and per-resource lags.
    pub steps: usize,
    /// Jobs in the workload.
    pub jobs: usize,
    /// Simulated milliseconds the run took.
    pub sim_ms: u64,
    /// Trace lines it wrote.
    pub trace_lines: u64,
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} steps, {} jobs, {} s simulated, {} trace lines",
            self.steps,
            self.jobs,
            self.sim_ms / 1_000,
            self.trace_lines
        )
    }
}

/// A shrink's result.
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// The smallest capsule found that still fails the expected oracle.
    pub capsule: Capsule,
    /// The run it started from.
    pub before: Size,
    /// The shrunk run.
    pub after: Size,
    /// Reruns spent (the original run not counted).
    pub reruns: u32,
    /// Removing any one remaining step or job was checked to make the expected oracle pass.
    pub one_minimal: bool,
}

impl Shrunk {
    /// The remaining steps, one per line.
    pub fn steps(&self) -> Vec<String> {
        steps_of(&self.capsule).iter().map(Step::to_string).collect()
    }
}

/// Shrinks `original` (which must fail its expected oracle) within `budget` reruns.
pub fn shrink(original: Capsule, budget: u32) -> Result<Shrunk, ShrinkError> {
    let (verdict, _) = original.run(TraceMode::HashOnly, None)?;
    if !original.fails(&verdict) {
        let mut failed: Vec<&str> = verdict.violations.iter().map(|v| v.oracle).collect();
        failed.dedup();
        let failed = if failed.is_empty() { "none".to_string() } else { failed.join(", ") };
        return Err(ShrinkError::DoesNotFail { oracle: original.expected_oracle, failed });
    }
    let seen = Seen::of(&original, &verdict);
    let before = size(&original, seen);
    let mut trials = Trials::new(budget);
    trials.remember(&original, seen);
    let mut current = original;
    current = drop_all_steps(current, &mut trials);
    current = shorten(current, &mut trials);
    current = cut_after_failure(current, &mut trials);
    let reserve = |c: &Capsule| u32::try_from(steps_of(c).len() + jobs_of(c).len()).unwrap_or(u32::MAX);
    trials.cap_at(budget.saturating_sub(reserve(&current) + 30));
    current = reduce_steps(current, &mut trials);
    trials.cap_at(budget.saturating_sub(reserve(&current) + 10));
    current = reduce_jobs(current, &mut trials);
    trials.cap_at(budget.saturating_sub(reserve(&current)));
    current = weaken_steps(current, &mut trials);
    trials.cap_at(budget);
    let (capsule, one_minimal) = verify_one_minimal(current, &mut trials);
    let after = size(&capsule, trials.seen(&capsule).unwrap_or(seen));
    Ok(Shrunk { capsule, before, after, reruns: trials.reruns(), one_minimal })
}

fn size(capsule: &Capsule, seen: Seen) -> Size {
    Size {
        steps: steps_of(capsule).len(),
        jobs: jobs_of(capsule).len(),
        sim_ms: seen.sim_ms,
        trace_lines: seen.trace_lines,
    }
}

/// The capsule with no plan at all, if the failure needs none.
fn drop_all_steps(capsule: Capsule, trials: &mut Trials) -> Capsule {
    let bare = with_steps(&capsule, &[]);
    if bare != capsule && trials.test(&bare) == Outcome::Fails { bare } else { capsule }
}

/// The capsule with arrivals stopping as early as the failure allows (to [`HORIZON_STEP_MS`]), the run
/// shortened by as much so the liveness phase after the arrivals stays as long.
fn shorten(capsule: Capsule, trials: &mut Trials) -> Capsule {
    let liveness_ms = capsule.duration_ms.saturating_sub(capsule.workload.horizon_ms);
    let at = |horizon_ms: u64| {
        let mut c = capsule.clone();
        c.workload.horizon_ms = horizon_ms;
        c.duration_ms = horizon_ms + liveness_ms;
        c
    };
    let (mut passes, mut fails) = (capsule.workload.start_ms, capsule.workload.horizon_ms);
    while fails - passes > HORIZON_STEP_MS {
        let middle = passes + (fails - passes) / 2;
        match trials.test(&at(middle)) {
            Outcome::Fails => fails = middle,
            Outcome::Passes => passes = middle,
            Outcome::OutOfBudget => break,
        }
    }
    at(fails)
}

/// The capsule without the disruptions and jobs that come after its failure: nothing later can have
/// caused it. Kept only if one rerun still fails (an oracle that judges at the end may need them); no
/// rerun when there is nothing to cut.
fn cut_after_failure(capsule: Capsule, trials: &mut Trials) -> Capsule {
    let Some(failed_at_ms) = trials.seen(&capsule).and_then(|seen| seen.failed_at_ms) else {
        return capsule;
    };
    let steps = steps_of(&capsule);
    let earlier = |step: &&Step| !matches!(step, Step::Disruption(d) if d.at_ms() > failed_at_ms);
    let kept_steps: Vec<Step> = steps.iter().filter(earlier).cloned().collect();
    let kept_jobs: Vec<u32> = jobs_arriving(&capsule)
        .into_iter()
        .filter(|(_, at_ms)| *at_ms <= failed_at_ms)
        .map(|(n, _)| n)
        .collect();
    let cut = with_jobs(&with_steps(&capsule, &kept_steps), &kept_jobs);
    if cut != capsule && trials.test(&cut) == Outcome::Fails { cut } else { capsule }
}

/// The capsule with the plan's steps delta-debugged.
fn reduce_steps(capsule: Capsule, trials: &mut Trials) -> Capsule {
    let mut test = |subset: &[Step]| trials.test(&with_steps(&capsule, subset));
    let kept = ddmin(steps_of(&capsule), &mut test).items;
    with_steps(&capsule, &kept)
}

/// The capsule with the workload's jobs delta-debugged (all of them dropped first, if that fails).
fn reduce_jobs(capsule: Capsule, trials: &mut Trials) -> Capsule {
    let none = with_jobs(&capsule, &[]);
    if trials.test(&none) == Outcome::Fails {
        return none;
    }
    let mut test = |subset: &[u32]| trials.test(&with_jobs(&capsule, subset));
    let kept = ddmin(jobs_of(&capsule), &mut test).items;
    with_jobs(&capsule, &kept)
}

/// The capsule with each step replaced by its weakest form that still fails.
fn weaken_steps(capsule: Capsule, trials: &mut Trials) -> Capsule {
    let mut steps = steps_of(&capsule);
    for i in 0..steps.len() {
        'stronger: loop {
            for weaker in weaken::weakenings(&steps[i]) {
                let mut candidate = steps.clone();
                candidate[i] = weaker;
                match trials.test(&with_steps(&capsule, &candidate)) {
                    Outcome::Fails => {
                        steps = candidate;
                        continue 'stronger;
                    }
                    Outcome::Passes => {}
                    Outcome::OutOfBudget => return with_steps(&capsule, &steps),
                }
            }
            break;
        }
    }
    with_steps(&capsule, &steps)
}

/// Removes each remaining step and job in turn: one whose removal still fails goes, and the check
/// starts over. Returns the capsule and whether a full pass found every removal passing.
fn verify_one_minimal(capsule: Capsule, trials: &mut Trials) -> (Capsule, bool) {
    let mut current = capsule;
    'again: loop {
        for candidate in one_smaller(&current) {
            match trials.test(&candidate) {
                Outcome::Fails => {
                    current = candidate;
                    continue 'again;
                }
                Outcome::Passes => {}
                Outcome::OutOfBudget => return (current, false),
            }
        }
        return (current, true);
    }
}

/// Every capsule one step or one job smaller than `capsule`.
fn one_smaller(capsule: &Capsule) -> Vec<Capsule> {
    let steps = steps_of(capsule);
    let jobs = jobs_of(capsule);
    let without_step = (0..steps.len()).map(|i| {
        let rest: Vec<Step> =
            steps.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, s)| s.clone()).collect();
        with_steps(capsule, &rest)
    });
    let without_job = (0..jobs.len()).map(|i| {
        let rest: Vec<u32> = jobs.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, n)| *n).collect();
        with_jobs(capsule, &rest)
    });
    without_step.chain(without_job).collect()
}
