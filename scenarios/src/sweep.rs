//! Sweeps: many (scenario, variant, seed) runs on all cores, tallied per scenario × variant, for one
//! profile. The kill table applies to the default (`arcsim`) profile; under another profile a sweep
//! runs the fixed controller (and any variant asked for) and reports what fails.
//!
//! A fixed-controller cell runs every seed; a bug-variant cell stops once every oracle its kill rows
//! name has reported it (the variant is killed, and further seeds would only repeat it) unless
//! `exhaustive` is set. Unless the
//! plan asks for the whole `matrix`, a bug variant runs only in the scenarios the kill table names for
//! it, and only over the seeds of its bound: past the bound a survivor has already failed the sweep.
//! A plan may be one [`Shard`] of a sweep: it runs only its share of each cell's seeds, and
//! [`crate::merge`] puts the shards back together ([`crate::tally`] says why early stops agree).
//! Each worker thread takes the next run from a shared counter and runs it on its own runtime; results
//! are gathered in plan order, so the report does not depend on thread timing.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use arc_controller::Profile;
use arc_sim::{Seed, TraceMode};
use serde::Serialize;

use crate::assuming::Assuming;
use crate::coverage::{self, reached_at};
use crate::kill_table::{KillExpectation, expectations};
use crate::on_network::OnNetwork;
use crate::on_schedule::OnSchedule;
use crate::plan_record::PlanRecord;
use crate::runner::{RunError, run_build_to_answer};
use crate::scaled::Scaled;
use crate::scenario::Scenario;
use crate::seed_result::SeedResult;
use crate::shard::Shard;
pub use crate::tally::{Cell, FirstFailure};
use crate::tally::{FirstViolations, Kills, Stops, tally};
use crate::variant::{Build, Variant};
use crate::verdict::Violation;
use arc_sim::github::Assumed;
use arc_sim::net::Network;
use arc_sim::schedule::Schedule;

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
    /// The fixed controller runs only the first this many of `seeds` (a preset's plan: its bug
    /// variants run further, up to their bounds); `None`: every seed.
    pub fixed_seeds: Option<u64>,
    /// Worker threads.
    pub jobs: usize,
    /// Run each seed twice and fail on any trace difference.
    pub check_determinism: bool,
    /// Run every seed of bug variants too, instead of stopping at the first failure (or the bound).
    pub exhaustive: bool,
    /// Run every variant in every scenario, not only where the kill table expects a kill.
    pub matrix: bool,
    /// The share of each cell's seeds to run ([`Shard::WHOLE`]: all of them).
    pub shard: Shard,
    /// Run every scenario at this many runners ([`Scaled`]) instead of its own size.
    pub runners: Option<u32>,
    /// The network backend every run uses.
    pub network: Network,
    /// The order the sim's tasks take same-instant work in, in every run.
    pub schedule: Schedule,
    /// The alternatives assumed about GitHub in every run (`--assume`).
    pub assumed: Assumed,
    /// Draw the alternatives per seed instead ([`Assumed::drawn`], `--assumptions drawn`).
    pub draws_assumptions: bool,
    /// Stop a fixed-controller cell once every probe its scenario has a floor for has fired in this
    /// many seeds ([`crate::coverage`]).
    pub until_probes: Option<u32>,
}

impl<'a> SweepPlan<'a> {
    /// The alternatives the run of `seed` assumes.
    pub fn assumed_for(&self, seed: Seed) -> Assumed {
        if self.draws_assumptions { Assumed::drawn(seed) } else { self.assumed.clone() }
    }

    /// The alternatives kill rows are judged under: the plan's, or none when each seed draws its own.
    pub fn row_assumptions(&self) -> Option<&Assumed> {
        (!self.draws_assumptions).then_some(&self.assumed)
    }

    /// The largest bound of `variant`'s rows in `scenario` that hold under this plan's assumptions.
    fn bound(&self, variant: Variant, scenario: &dyn Scenario) -> Option<u32> {
        cell_bound_in(self.profile, variant, scenario.name(), self.row_assumptions())
    }

    /// Whether `variant` runs in `scenario` at all.
    fn runs(&self, scenario: &dyn Scenario, variant: Variant) -> bool {
        self.matrix || variant.is_fixed() || self.bound(variant, scenario).is_some()
    }

    /// The cells, in plan order.
    pub fn cells(&self) -> Vec<(&'a dyn Scenario, Variant)> {
        self.scenarios
            .iter()
            .flat_map(|s| self.variants.iter().filter(|v| self.runs(*s, **v)).map(move |v| (*s, *v)))
            .collect()
    }

    /// The seeds a cell runs (before sharding): all of them, a bug variant's first (its largest
    /// row bound), or the fixed controller's first [`Self::fixed_seeds`].
    pub fn seeds_of(&self, scenario: &dyn Scenario, variant: Variant) -> &[Seed] {
        let first = |n: u64| &self.seeds[..self.seeds.len().min(usize::try_from(n).unwrap_or(usize::MAX))];
        match self.bound(variant, scenario) {
            Some(bound) if !self.exhaustive && !variant.is_fixed() => first(u64::from(bound)),
            _ if variant.is_fixed() => self.fixed_seeds.map_or(&self.seeds[..], first),
            _ => &self.seeds,
        }
    }

    /// The most seeds any bug-variant cell of this plan needs to judge its rows: its largest bound.
    pub fn widest_bound(&self) -> u64 {
        let cells = self.cells();
        let bounds = cells.iter().filter(|(_, v)| !v.is_fixed());
        bounds.filter_map(|(s, v)| self.bound(*v, *s)).map(u64::from).max().unwrap_or(0)
    }

    /// Whether a bug-variant cell stops early once its kill rows are met.
    pub fn stops_early(&self, variant: Variant) -> bool {
        !self.exhaustive && !variant.is_fixed()
    }

    /// The `--until-probes` count for a cell of `variant`: only the fixed controller stops on coverage.
    pub fn until_probes(&self, variant: Variant) -> Option<u32> {
        self.until_probes.filter(|_| variant.is_fixed())
    }

    /// The kill-table rows of a cell under this plan's profile.
    pub fn rows(&self, scenario: &dyn Scenario, variant: Variant) -> Vec<&'static KillExpectation> {
        expectations_under(self.profile, variant, scenario.name(), self.row_assumptions())
    }
}

/// The kill-table rows for `variant` in `scenario` under `profile`: the table is `arcsim`'s, so under
/// any other profile there are none.
pub fn expectations_in(profile: Profile, variant: Variant, scenario: &str) -> Vec<&'static KillExpectation> {
    if profile == Profile::Arcsim { expectations(variant, scenario) } else { Vec::new() }
}

/// The rows of [`expectations_in`] that hold under `assumed` ([`KillExpectation::holds_under`]).
pub fn expectations_under(
    profile: Profile,
    variant: Variant,
    scenario: &str,
    assumed: Option<&Assumed>,
) -> Vec<&'static KillExpectation> {
    expectations_in(profile, variant, scenario).into_iter().filter(|k| k.holds_under(assumed)).collect()
}

/// How many seeds a sweep must run of `variant` in `scenario` under `profile` and `assumed`: the
/// largest bound of its rows that hold there (`None` without rows).
pub fn cell_bound_in(
    profile: Profile,
    variant: Variant,
    scenario: &str,
    assumed: Option<&Assumed>,
) -> Option<u32> {
    expectations_under(profile, variant, scenario, assumed).iter().map(|k| k.within_seeds()).max()
}

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
fn run_checked(
    scenario: &dyn Scenario,
    build: Build,
    at: usize,
    seed: Seed,
    check_determinism: bool,
) -> (SeedResult, Vec<Violation>) {
    let first = match run_build_to_answer(scenario, build, seed, TraceMode::HashOnly) {
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
