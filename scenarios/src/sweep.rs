//! Sweeps: many (scenario, variant, seed) runs on all cores, tallied per scenario × variant, for one
//! profile. The kill table applies to the default (`arcsim`) profile; under another profile a sweep
//! runs the fixed controller (and any variant asked for) and reports what fails.
//!
//! A fixed-controller cell runs every seed; a bug-variant cell stops at its first failing seed (the
//! variant is killed, and further seeds would only repeat it) unless `exhaustive` is set. Unless the
//! plan asks for the whole `matrix`, a bug variant runs only in the scenarios the kill table names for
//! it, and only over the seeds of its bound: past the bound a survivor has already failed the sweep.
//! Each worker thread takes the next run from a shared counter and runs it on its own runtime; results
//! are gathered in plan order, so the report does not depend on thread timing.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use arc_controller::Profile;
use arc_sim::{Seed, TraceMode};
use serde::Serialize;

use crate::kill_table::expectation;
use crate::kill_table::KillExpectation;
use crate::runner::{RunError, run_build};
use crate::scenario::Scenario;
use crate::variant::{Build, Variant};
use crate::verdict::{Verdict, Violation, replay_line};

/// What to run.
pub struct SweepPlan<'a> {
    /// The profile every variant is a variant of.
    pub profile: Profile,
    /// The scenarios.
    pub scenarios: Vec<&'a dyn Scenario>,
    /// The variants, each run against every scenario.
    pub variants: Vec<Variant>,
    /// The seeds.
    pub seeds: Vec<Seed>,
    /// Worker threads.
    pub jobs: usize,
    /// Run each seed twice and fail on any trace difference.
    pub check_determinism: bool,
    /// Run every seed of bug variants too, instead of stopping at the first failure (or the bound).
    pub exhaustive: bool,
    /// Run every variant in every scenario, not only where the kill table expects a kill.
    pub matrix: bool,
}

impl SweepPlan<'_> {
    /// The kill-table row for `variant` in `scenario`, under this plan's profile (rows apply to
    /// `arcsim` only).
    fn expectation(&self, scenario: &dyn Scenario, variant: Variant) -> Option<&'static KillExpectation> {
        expectation_in(self.profile, variant, scenario.name())
    }

    /// Whether `variant` runs in `scenario` at all.
    fn runs(&self, scenario: &dyn Scenario, variant: Variant) -> bool {
        self.matrix || variant.is_fixed() || self.expectation(scenario, variant).is_some()
    }

    /// The seeds a cell runs: all of them, or a bug variant's first `within_seeds`.
    fn seeds_of(&self, scenario: &dyn Scenario, variant: Variant) -> &[Seed] {
        match self.expectation(scenario, variant) {
            Some(e) if !self.exhaustive && !variant.is_fixed() => {
                &self.seeds[..self.seeds.len().min(e.within_seeds as usize)]
            }
            _ => &self.seeds,
        }
    }
}

/// The kill-table row for `variant` in `scenario` under `profile`: the table is `arcsim`'s.
pub fn expectation_in(profile: Profile, variant: Variant, scenario: &str) -> Option<&'static KillExpectation> {
    (profile == Profile::Arcsim).then(|| expectation(variant, scenario)).flatten()
}

/// The tally of one scenario × variant.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// Scenario name.
    pub scenario: &'static str,
    /// Profile.
    pub profile: Profile,
    /// Variant.
    pub variant: Variant,
    /// Seeds run.
    pub runs: u32,
    /// Seeds with a violation.
    pub failures: u32,
    /// The first failing seed (in plan order), its position among the seeds, and its violations.
    pub first_failure: Option<FirstFailure>,
    /// Seeds whose two runs gave different traces (with `check_determinism`).
    pub nondeterministic: Vec<Seed>,
    /// Seeds that could not be run, with why.
    pub errors: Vec<(Seed, String)>,
    /// Per probe: seeds in which it fired.
    pub probe_seeds: BTreeMap<&'static str, u32>,
    /// The scenario's declared probes and their minimum shares.
    pub probe_goals: Vec<(&'static str, f64)>,
    /// Total simulated ms.
    pub sim_ms: u64,
    /// Total wall ms (summed over threads).
    pub wall_ms: u64,
}

/// The first failure of a cell.
#[derive(Debug, Clone, Serialize)]
pub struct FirstFailure {
    /// The seed.
    pub seed: Seed,
    /// How many seeds of the plan it took (1-based).
    pub nth: u32,
    /// What the oracles found.
    pub violations: Vec<Violation>,
    /// The command that replays it.
    pub replay: String,
}

/// Every cell, in plan order.
#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    /// The cells.
    pub cells: Vec<Cell>,
}

enum Outcome {
    Ran { verdict: Verdict, deterministic: bool },
    Failed(String),
}

/// Runs the plan; `progress(done, total)` is called after every run.
pub fn sweep(plan: &SweepPlan<'_>, progress: &(dyn Fn(usize, usize) + Sync)) -> SweepReport {
    let cells: Vec<(&dyn Scenario, Variant)> = plan
        .scenarios
        .iter()
        .flat_map(|s| plan.variants.iter().filter(|v| plan.runs(*s, **v)).map(move |v| (*s, *v)))
        .collect();
    let tasks: Vec<(usize, Seed)> = cells
        .iter()
        .enumerate()
        .flat_map(|(c, (scenario, variant))| plan.seeds_of(*scenario, *variant).iter().map(move |s| (c, *s)))
        .collect();
    let results: Mutex<BTreeMap<usize, Outcome>> = Mutex::new(BTreeMap::new());
    let killed: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..plan.jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&(cell, seed)) = tasks.get(i) else { break };
                    let (scenario, variant) = cells[cell];
                    let skip = !plan.exhaustive
                        && !variant.is_fixed()
                        && killed.lock().expect("killed").get(&cell).is_some_and(|first| *first < i);
                    if !skip {
                        let build = Build::new(plan.profile, variant);
                        let outcome = run_checked(scenario, build, seed, plan.check_determinism);
                        if matches!(&outcome, Outcome::Ran { verdict, .. } if !verdict.passed()) {
                            killed
                                .lock()
                                .expect("killed")
                                .entry(cell)
                                .and_modify(|f| *f = (*f).min(i))
                                .or_insert(i);
                        }
                        results.lock().expect("results").insert(i, outcome);
                    }
                    progress(done.fetch_add(1, Ordering::SeqCst) + 1, tasks.len());
                }
            });
        }
    });
    let results = results.into_inner().expect("results");
    let killed = killed.into_inner().expect("killed");
    let cells = cells
        .iter()
        .enumerate()
        .map(|(c, (scenario, variant))| tally(c, *scenario, *variant, &tasks, &results, killed.get(&c), plan))
        .collect();
    SweepReport { cells }
}

fn run_checked(scenario: &dyn Scenario, build: Build, seed: Seed, check_determinism: bool) -> Outcome {
    let first = match run_build(scenario, build, seed, TraceMode::HashOnly) {
        Ok((verdict, _)) => verdict,
        Err(e) => return Outcome::Failed(e.to_string()),
    };
    if !check_determinism {
        return Outcome::Ran { verdict: first, deterministic: true };
    }
    let again: Result<_, RunError> = run_build(scenario, build, seed, TraceMode::HashOnly);
    match again {
        Ok((second, _)) => {
            let deterministic =
                second.trace_hash == first.trace_hash && second.trace_lines == first.trace_lines;
            Outcome::Ran { verdict: first, deterministic }
        }
        Err(e) => Outcome::Failed(e.to_string()),
    }
}

fn tally(
    cell: usize,
    scenario: &dyn Scenario,
    variant: Variant,
    tasks: &[(usize, Seed)],
    results: &BTreeMap<usize, Outcome>,
    killed_at: Option<&usize>,
    plan: &SweepPlan<'_>,
) -> Cell {
    let mut out = Cell {
        scenario: scenario.name(),
        profile: plan.profile,
        variant,
        runs: 0,
        failures: 0,
        first_failure: None,
        nondeterministic: Vec::new(),
        errors: Vec::new(),
        probe_seeds: BTreeMap::new(),
        probe_goals: scenario.probe_goals().iter().map(|g| (g.probe.name, g.min_share)).collect(),
        sim_ms: 0,
        wall_ms: 0,
    };
    let mine = tasks.iter().enumerate().filter(|(_, (c, _))| *c == cell);
    for (nth, (i, (_, seed))) in mine.enumerate() {
        let stop_here = !plan.exhaustive && !variant.is_fixed() && killed_at.is_some_and(|k| i > *k);
        match results.get(&i) {
            _ if stop_here => break,
            None => {}
            Some(Outcome::Failed(e)) => out.errors.push((*seed, e.clone())),
            Some(Outcome::Ran { verdict, deterministic }) => {
                out.runs += 1;
                out.sim_ms += verdict.sim_ms;
                out.wall_ms += verdict.wall_ms;
                for probe in verdict.probes.keys() {
                    *out.probe_seeds.entry(*probe).or_insert(0) += 1;
                }
                if !deterministic {
                    out.nondeterministic.push(*seed);
                }
                if !verdict.passed() {
                    out.failures += 1;
                    if out.first_failure.is_none() {
                        out.first_failure = Some(FirstFailure {
                            seed: *seed,
                            nth: u32::try_from(nth + 1).unwrap_or(u32::MAX),
                            violations: verdict.violations.clone(),
                            replay: replay_line(scenario.name(), Build::new(plan.profile, variant), *seed),
                        });
                    }
                }
            }
        }
    }
    out
}
