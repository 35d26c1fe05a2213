//! Sweeps: many (scenario, variant, seed) runs on all cores, tallied per scenario × variant, for one
//! profile. The kill table applies to the default (`arcsim`) profile; under another profile a sweep
//! runs the fixed controller (and any variant asked for) and reports what fails.
//!
//! A fixed-controller cell runs every seed; a bug-variant cell stops once every oracle its kill rows
//! name has reported it (the variant is killed, and further seeds would only repeat it) unless
//! `exhaustive` is set. Unless the
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

use crate::kill_table::{KillExpectation, expectations};
use crate::probes::ProbeBound;
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
    /// Whether `variant` runs in `scenario` at all.
    fn runs(&self, scenario: &dyn Scenario, variant: Variant) -> bool {
        self.matrix || variant.is_fixed() || cell_bound_in(self.profile, variant, scenario.name()).is_some()
    }

    /// The seeds a cell runs: all of them, or a bug variant's first (its largest row bound).
    fn seeds_of(&self, scenario: &dyn Scenario, variant: Variant) -> &[Seed] {
        match cell_bound_in(self.profile, variant, scenario.name()) {
            Some(bound) if !self.exhaustive && !variant.is_fixed() => {
                &self.seeds[..self.seeds.len().min(bound as usize)]
            }
            _ => &self.seeds,
        }
    }

    /// Whether a bug-variant cell stops early once its kill rows are met.
    fn stops_early(&self, variant: Variant) -> bool {
        !self.exhaustive && !variant.is_fixed()
    }
}

/// The kill-table rows for `variant` in `scenario` under `profile`: the table is `arcsim`'s, so under
/// any other profile there are none.
pub fn expectations_in(profile: Profile, variant: Variant, scenario: &str) -> Vec<&'static KillExpectation> {
    if profile == Profile::Arcsim { expectations(variant, scenario) } else { Vec::new() }
}

/// How many seeds a sweep must run of `variant` in `scenario` under `profile`: the largest bound of
/// its rows (`None` without rows).
pub fn cell_bound_in(profile: Profile, variant: Variant, scenario: &str) -> Option<u32> {
    expectations_in(profile, variant, scenario).iter().map(|k| k.within_seeds()).max()
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
    /// Per oracle: seeds in which it reported a violation.
    pub oracle_seeds: BTreeMap<&'static str, u32>,
    /// Per oracle: the position among the cell's seeds (1-based) of its first violation.
    pub first_kills: BTreeMap<&'static str, u32>,
    /// The first failing seed (in plan order), its position among the seeds, and its violations.
    pub first_failure: Option<FirstFailure>,
    /// Seeds whose two runs gave different traces (with `check_determinism`).
    pub nondeterministic: Vec<Seed>,
    /// Seeds that could not be run, with why.
    pub errors: Vec<(Seed, String)>,
    /// Per probe: seeds in which it fired.
    pub probe_seeds: BTreeMap<&'static str, u32>,
    /// The scenario's declared probes and their bounds.
    pub probe_goals: Vec<(&'static str, ProbeBound)>,
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

/// Per oracle, the first task (in plan order) of a cell whose run it failed, as seen so far.
#[derive(Default)]
struct Kills(BTreeMap<&'static str, usize>);

impl Kills {
    fn saw(&mut self, task: usize, verdict: &Verdict) {
        for v in &verdict.violations {
            self.0.entry(v.oracle).and_modify(|first| *first = (*first).min(task)).or_insert(task);
        }
    }

    /// The task by which every oracle of the cell's kill rows has fired, if all have. Kills seen
    /// out of order only make it later, never earlier, so stopping past it is safe.
    fn complete_at(&self, rows: &[&KillExpectation]) -> Option<usize> {
        if rows.is_empty() {
            return self.0.values().min().copied();
        }
        rows.iter()
            .map(|row| self.0.get(row.oracle.name()).copied())
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max()
    }
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
    let killed: Mutex<BTreeMap<usize, Kills>> = Mutex::new(BTreeMap::new());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..plan.jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&(cell, seed)) = tasks.get(i) else { break };
                    let (scenario, variant) = cells[cell];
                    let skip = plan.stops_early(variant)
                        && killed
                            .lock()
                            .expect("killed")
                            .get(&cell)
                            .and_then(|k| {
                                k.complete_at(&expectations_in(plan.profile, variant, scenario.name()))
                            })
                            .is_some_and(|at| at < i);
                    if !skip {
                        let build = Build::new(plan.profile, variant);
                        let outcome = run_checked(scenario, build, seed, plan.check_determinism);
                        if let Outcome::Ran { verdict, .. } = &outcome {
                            killed.lock().expect("killed").entry(cell).or_default().saw(i, verdict);
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
        .map(|(c, (scenario, variant))| {
            let complete_at = killed
                .get(&c)
                .and_then(|k| k.complete_at(&expectations_in(plan.profile, *variant, scenario.name())));
            tally(c, *scenario, *variant, &tasks, &results, complete_at, plan)
        })
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
    complete_at: Option<usize>,
    plan: &SweepPlan<'_>,
) -> Cell {
    let mut out = Cell {
        scenario: scenario.name(),
        profile: plan.profile,
        variant,
        runs: 0,
        failures: 0,
        oracle_seeds: BTreeMap::new(),
        first_kills: BTreeMap::new(),
        first_failure: None,
        nondeterministic: Vec::new(),
        errors: Vec::new(),
        probe_seeds: BTreeMap::new(),
        probe_goals: scenario.probe_goals().iter().map(|g| (g.probe.name, g.bound)).collect(),
        sim_ms: 0,
        wall_ms: 0,
    };
    let mine = tasks.iter().enumerate().filter(|(_, (c, _))| *c == cell);
    for (nth, (i, (_, seed))) in mine.enumerate() {
        let stop_here = plan.stops_early(variant) && complete_at.is_some_and(|k| i > k);
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
                let nth = u32::try_from(nth + 1).unwrap_or(u32::MAX);
                let mut oracles: Vec<&'static str> = verdict.violations.iter().map(|v| v.oracle).collect();
                oracles.sort_unstable();
                oracles.dedup();
                for oracle in oracles {
                    *out.oracle_seeds.entry(oracle).or_insert(0) += 1;
                    out.first_kills.entry(oracle).or_insert(nth);
                }
                if !verdict.passed() {
                    out.failures += 1;
                    if out.first_failure.is_none() {
                        out.first_failure = Some(FirstFailure {
                            seed: *seed,
                            nth,
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
