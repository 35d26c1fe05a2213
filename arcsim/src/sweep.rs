//! Sweeps: many (scenario, variant, seed) runs on all cores, tallied per scenario × variant, for one
//! profile. The kill table applies to the default (`arcsim`) profile; under another profile a sweep
//! runs the fixed controller (and any variant asked for) and reports what fails.
//!
//! A fixed-controller cell runs every seed; a bug-variant cell stops once every oracle its kill rows
//! name has reported it (the variant is killed, and further seeds would only repeat it) unless
//! `exhaustive` is set. Unless the
//! plan asks for the whole `matrix`, a bug variant runs only in the scenarios the kill table names for
//! it, and only over the seeds of its bound: past the bound a survivor has already failed the sweep.
//! A plan may be one [`Shard`](crate::shard::Shard) of a sweep: it runs only its share of each cell's seeds, and
//! [`crate::merge`] puts the shards back together ([`crate::tally`] says why early stops agree).
//! Each worker thread takes the next run from a shared counter and runs it on its own runtime; results
//! are gathered in plan order, so the report does not depend on thread timing.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use arc_sim::{Seed, TraceMode};
use serde::Serialize;

use crate::coverage::{self, reached_at};
use crate::plan_record::PlanRecord;
use crate::runner::{RunError, run_build_to_answer};
use crate::seed_result::SeedResult;
pub use crate::sweep_plan::SweepPlan;
pub use crate::tally::{Cell, FirstFailure};
use crate::tally::{FirstViolations, Kills, Stops, tally};
use arc_scenarios::assuming::Assuming;
use arc_scenarios::on_network::OnNetwork;
use arc_scenarios::on_schedule::OnSchedule;
use arc_scenarios::scaled::Scaled;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::variant::Build;
use arc_scenarios::verdict::Violation;

/// Every cell, in plan order, and the plan they came from.
#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    /// The plan (what `arcsim merge` checks shards against).
    pub plan: PlanRecord,
    /// The cells.
    pub cells: Vec<Cell>,
}

/// One run to make: the cell, the seed's position among the cell's seeds, the seed.
type Task = (usize, usize, Seed);

/// Runs the plan; `progress(done, total)` is called after every run (or skipped run).
pub fn sweep(plan: &SweepPlan<'_>, progress: &(dyn Fn(usize, usize) + Sync)) -> SweepReport {
    let cells = plan.cells();
    let tasks: Vec<Task> = cells
        .iter()
        .enumerate()
        .flat_map(|(c, (scenario, variant))| {
            let mine = plan.seeds_of(*scenario, *variant).iter().enumerate();
            mine.filter(|(at, _)| plan.shard.owns(*at)).map(move |(at, seed)| (c, at, *seed))
        })
        .collect();
    let results: Mutex<Vec<BTreeMap<usize, SeedResult>>> = Mutex::new(vec![BTreeMap::new(); cells.len()]);
    let firsts: Mutex<Vec<FirstViolations>> = Mutex::new(vec![None; cells.len()]);
    let killed: Mutex<Vec<Kills>> = Mutex::new(cells.iter().map(|_| Kills::default()).collect());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..plan.jobs.max(1) {
            scope.spawn(|| {
                while let Some(&(cell, at, seed)) = tasks.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let (scenario, variant) = cells[cell];
                    let killed_by =
                        || killed.lock().expect("killed")[cell].complete_at(&plan.rows(scenario, variant));
                    let covered_by = |k| {
                        reached_at(&results.lock().expect("results")[cell], &coverage::awaited(scenario), k)
                    };
                    let skip = (plan.stops_early(variant) && killed_by().is_some_and(|cut| cut < at))
                        || plan.until_probes(variant).and_then(covered_by).is_some_and(|cut| cut < at);
                    if !skip {
                        let build = Build::new(plan.profile, variant);
                        let check = plan.check_determinism;
                        let on = |inner| OnNetwork::new(inner, plan.network);
                        let assumed = plan.assumed_for(seed);
                        let run = |inner: &dyn Scenario| {
                            let assuming = Assuming::new(inner, &assumed);
                            run_checked(&OnSchedule::new(&assuming, plan.schedule), build, at, seed, check)
                        };
                        let (result, violations) = match plan.runners.map(|n| Scaled::new(scenario, n)) {
                            Some(Ok(scaled)) => run(&on(&scaled)),
                            Some(Err(e)) => (SeedResult::not_run(at, seed, e.to_string()), Vec::new()),
                            None => run(&on(scenario)),
                        };
                        killed.lock().expect("killed")[cell].saw(at, &result);
                        keep_first(&mut firsts.lock().expect("firsts")[cell], at, violations);
                        results.lock().expect("results")[cell].insert(at, result);
                    }
                    progress(done.fetch_add(1, Ordering::SeqCst) + 1, tasks.len());
                }
            });
        }
    });
    let results = results.into_inner().expect("results");
    let firsts = firsts.into_inner().expect("firsts");
    let cells = cells
        .iter()
        .zip(results.iter().zip(&firsts))
        .map(|((scenario, variant), (mine, first))| {
            let build = Build::new(plan.profile, *variant);
            let stops =
                Stops { early: plan.stops_early(*variant), until_probes: plan.until_probes(*variant) };
            tally(*scenario, build, &plan.rows(*scenario, *variant), mine, first, stops)
        })
        .collect();
    let record = PlanRecord::of(plan);
    SweepReport { cells: with_plan_flags(cells, &record), plan: record }
}

/// `cells` with the plan's `--runners`, `--network`, `--schedule` and `--assume` on their replay
/// lines, when it has them.
pub fn with_plan_flags(mut cells: Vec<Cell>, plan: &PlanRecord) -> Vec<Cell> {
    for first in cells.iter_mut().filter_map(|c| c.first_failure.as_mut()) {
        if let Some(n) = plan.runners {
            first.replay = format!("{} --runners {n}", first.replay);
        }
        if !plan.network.is_in_process() {
            first.replay = format!("{} --network {}", first.replay, plan.network);
        }
        if !plan.schedule.is_fifo() {
            first.replay = format!("{} --schedule {}", first.replay, plan.schedule);
        }
        first.replay = format!("{}{}", first.replay, plan.assumed_for(first.seed).flags());
    }
    cells
}

/// Keeps the violations of the earliest failing seed seen so far.
fn keep_first(first: &mut FirstViolations, at: usize, violations: Vec<Violation>) {
    let earlier = first.as_ref().is_none_or(|(known, _)| at < *known);
    if !violations.is_empty() && earlier {
        *first = Some((at, violations));
    }
}

/// Runs the seed at position `at` (twice with `check_determinism`) until it has answered (a bug
/// variant's run stops once every oracle it must fail has fired): its result and its violations.
/// Only the determinism check compares traces, so without it no trace line is rendered.
fn run_checked(
    scenario: &dyn Scenario,
    build: Build,
    at: usize,
    seed: Seed,
    check_determinism: bool,
) -> (SeedResult, Vec<Violation>) {
    let mode = if check_determinism { TraceMode::HashOnly } else { TraceMode::Off };
    let first = match run_build_to_answer(scenario, build, seed, mode) {
        Ok((verdict, _)) => verdict,
        Err(e) => return (SeedResult::not_run(at, seed, e.to_string()), Vec::new()),
    };
    if !check_determinism {
        return (SeedResult::ran(at, &first, true), first.violations);
    }
    let again: Result<_, RunError> = run_build_to_answer(scenario, build, seed, TraceMode::HashOnly);
    match again {
        Ok((second, _)) => {
            let deterministic =
                second.trace_hash == first.trace_hash && second.trace_lines == first.trace_lines;
            (SeedResult::ran(at, &first, deterministic), first.violations)
        }
        Err(e) => (SeedResult::not_run(at, seed, e.to_string()), Vec::new()),
    }
}
