//! `arcsim shrink`'s engine: a failing capsule cut down to what its failure needs, keeping a
//! candidate only when the same oracle still fails. In order: the whole plan dropped at once (a bug
//! that needs no fault), the run shortened (arrivals stop earlier, the liveness phase kept), the
//! disruptions and jobs that come after the failure cut in one go (nothing later caused it), the
//! plan's steps delta-debugged ([`ddmin()`]), the workload's jobs delta-debugged, each remaining step
//! weakened ([`weaken`]), and last every remaining step and job removed one at a time to verify that
//! the result is 1-minimal (a removal that still fails is kept, and the check starts over). Every
//! rerun counts against one budget (200 by default); a stage that would leave the check too few
//! reruns stops early. The steps come first: the reduction of jobs (a workload of hundreds costs far
//! more reruns than a plan) stops in time for every remaining step to be checked, so a capsule whose
//! jobs ran the budget out is still 1-minimal in its steps, and says so.

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
    /// How far the check that removing any one remaining step or job makes the oracle pass got.
    pub minimality: Minimality,
}

impl Shrunk {
    /// The remaining steps, one per line.
    pub fn steps(&self) -> Vec<String> {
        steps_of(&self.capsule).iter().map(Step::to_string).collect()
    }
}

/// Shrinks `original` (which must fail its expected oracle) within `budget` reruns.
pub fn shrink(original: Capsule, budget: u32) -> Result<Shrunk, ShrinkError> {
    shrink_reporting(original, budget, |_, _| {})
}

/// [`shrink`], telling `progress` of each rerun as it starts (reruns so far, budget).
pub fn shrink_reporting(
    original: Capsule,
    budget: u32,
    progress: impl FnMut(u32, u32) + 'static,
) -> Result<Shrunk, ShrinkError> {
    let (verdict, _) = original.run(TraceMode::HashOnly, None)?;
    if !original.fails(&verdict) {
        let mut failed: Vec<&str> = verdict.violations.iter().map(|v| v.oracle).collect();
        failed.dedup();
        let failed = if failed.is_empty() { "none".to_string() } else { failed.join(", ") };
        return Err(ShrinkError::DoesNotFail { oracle: original.expected_oracle, failed });
    }
    let seen = Seen::of(&original, &verdict);
    Ok(reduce(original, seen, Trials::new(budget).reporting(progress)))
}

/// The shrinker's stages on `original`, whose run showed `seen`, spending `trials`.
fn reduce(original: Capsule, seen: Seen, mut trials: Trials) -> Shrunk {
    let budget = trials.budget();
    let before = size(&original, seen);
    trials.remember(&original, seen);
    let mut current = original;
    current = drop_all_steps(current, &mut trials);
    current = shorten(current, &mut trials);
    current = cut_after_failure(current, &mut trials);
    trials.cap_at(budget.saturating_sub(step_count(&current) + 30));
    current = reduce_steps(current, &mut trials);
    trials.cap_at(budget.saturating_sub(3 * step_count(&current) + 5));
    current = reduce_jobs(current, &mut trials);
    trials.cap_at(budget.saturating_sub(step_count(&current)));
    current = weaken_steps(current, &mut trials);
    trials.cap_at(budget);
    let (capsule, minimality) = verify_one_minimal(current, &mut trials);
    let after = size(&capsule, trials.seen(&capsule).unwrap_or(seen));
    Shrunk { capsule, before, after, reruns: trials.reruns(), minimality }
}

/// The capsule's fault steps, as a count of reruns.
fn step_count(capsule: &Capsule) -> u32 {
    u32::try_from(steps_of(capsule).len()).unwrap_or(u32::MAX)
}

/// How far the 1-minimality check got before the budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Minimality {
    /// Not even every step was checked.
    Unchecked,
    /// Every remaining step's removal passes; not every job's was checked.
    Steps,
    /// Every remaining step's and job's removal passes.
    StepsAndJobs,
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

/// Removes each remaining step and then each job in turn: one whose removal still fails goes, and
/// the check starts over. A job's removal is taken only while the budget can check the steps again,
/// so the steps of the capsule returned are checked whenever the first pass over them ended.
fn verify_one_minimal(capsule: Capsule, trials: &mut Trials) -> (Capsule, Minimality) {
    let mut current = capsule;
    'again: loop {
        for candidate in without_each_step(&current) {
            match trials.test(&candidate) {
                Outcome::Fails => {
                    current = candidate;
                    continue 'again;
                }
                Outcome::Passes => {}
                Outcome::OutOfBudget => return (current, Minimality::Unchecked),
            }
        }
        for candidate in without_each_job(&current) {
            match trials.test(&candidate) {
                Outcome::Fails if trials.remaining() >= step_count(&candidate) => {
                    current = candidate;
                    continue 'again;
                }
                Outcome::Passes => {}
                Outcome::Fails | Outcome::OutOfBudget => return (current, Minimality::Steps),
            }
        }
        return (current, Minimality::StepsAndJobs);
    }
}

/// Every capsule one step smaller than `capsule`.
fn without_each_step(capsule: &Capsule) -> Vec<Capsule> {
    without_each(&steps_of(capsule)).iter().map(|rest| with_steps(capsule, rest)).collect()
}

/// Every capsule one job smaller than `capsule`.
fn without_each_job(capsule: &Capsule) -> Vec<Capsule> {
    without_each(&jobs_of(capsule)).iter().map(|rest| with_jobs(capsule, rest)).collect()
}

/// `items` less one, for each item in turn.
fn without_each<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    (0..items.len())
        .map(|i| items.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, x)| x.clone()).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use arc_sim::Seed;
    use arc_sim::net::Network;

    use super::*;
    use arc_scenarios::scenarios;
    use arc_scenarios::variant::{Build, Variant};

    /// Steady-state seed 4's capsule judged to fail exactly when it keeps its third step and its
    /// first `jobs_needed` jobs, as a workload-bound failure does.
    fn shrink_needing(jobs_needed: usize, budget: u32) -> (Shrunk, Step, Vec<u32>) {
        let scenario = scenarios::find("steady-state").unwrap();
        let build = Build::arcsim(Variant::Fixed);
        let capsule = Capsule::of_run(scenario, build, Seed(4), Network::InProcess, "bounded-pod-creates");
        let step = steps_of(&capsule)[2].clone();
        let jobs: Vec<u32> = jobs_of(&capsule)[..jobs_needed].to_vec();
        let (needed_step, needed_jobs) = (step.clone(), jobs.clone());
        let judge = move |c: &Capsule| Seen {
            fails: steps_of(c).contains(&needed_step) && needed_jobs.iter().all(|j| jobs_of(c).contains(j)),
            sim_ms: 1,
            trace_lines: 1,
            failed_at_ms: None,
        };
        let seen = Seen { fails: true, sim_ms: 1, trace_lines: 1, failed_at_ms: None };
        (reduce(capsule, seen, Trials::judged_by(budget, judge)), step, jobs)
    }

    #[test]
    fn with_budget_enough_the_capsule_keeps_exactly_what_the_failure_needs() {
        let (shrunk, step, jobs) = shrink_needing(12, 2_000);
        assert_eq!(steps_of(&shrunk.capsule), vec![step]);
        assert_eq!(jobs_of(&shrunk.capsule), jobs);
        assert_eq!(shrunk.minimality, Minimality::StepsAndJobs, "{}", shrunk.reruns);
    }

    #[test]
    fn a_workload_that_spends_the_budget_still_leaves_every_step_checked() {
        let (shrunk, step, _) = shrink_needing(40, 60);
        assert!(shrunk.reruns <= 60, "{}", shrunk.reruns);
        assert_eq!(steps_of(&shrunk.capsule), vec![step]);
        // 40 needed jobs cannot all be checked in 60 reruns; every step can.
        assert_eq!(shrunk.minimality, Minimality::Steps, "{}", shrunk.reruns);
    }
}
