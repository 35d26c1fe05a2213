//! The tally of one scenario × variant from its seeds' results, and where a bug cell's early stop cuts
//! them off. A sweep tallies the seeds it ran; `arcsim merge` tallies the union of its shards' seeds
//! with the same functions, so the cut-off and every count come out as one unsharded sweep's.
//!
//! The cut-off of a bug cell is the position by which every oracle of its kill rows has fired (with
//! no rows, the first failure). It is a function of the seeds' results alone: per oracle the first
//! position where it fired, then the latest of those. A sweep that has seen only some results can
//! only compute a later cut-off than the true one (a first kill not yet seen makes it later, never
//! earlier), so skipping seeds past the cut-off it knows never skips a seed the tally needs; the same
//! holds for a shard, which sees only its own seeds.

use std::collections::BTreeMap;

use arc_controller::Profile;
use arc_sim::Seed;
use serde::{Deserialize, Serialize};

use crate::coverage::{awaited, reached_at};
use crate::seed_result::{SeedOutcome, SeedResult};
use arc_judging::probes::ProbeBound;
use arc_scenarios::kill_table::KillExpectation;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::variant::{Build, Variant};
use arc_scenarios::verdict::{Violation, replay_line};

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
    /// Total wall ms of the cell's seeds (summed over worker threads and shards).
    pub wall_ms: u64,
    /// Every seed tallied, in order: what `arcsim merge` reads back.
    pub seeds: Vec<SeedResult>,
    /// With `--until-probes`: how many seeds it took until every awaited probe had fired often enough
    /// (`None`: not reached, or not asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probes_reached_at: Option<u32>,
}

/// When a cell stops before its last seed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stops {
    /// A bug cell stops once its kill rows are met.
    pub early: bool,
    /// A fixed cell stops once every awaited probe fired in this many seeds.
    pub until_probes: Option<u32>,
}

/// The first failure of a cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FirstFailure {
    /// The seed.
    pub seed: Seed,
    /// How many seeds of the plan it took (1-based).
    pub nth: u32,
    /// What the oracles found (read back by the catalog's oracle names).
    #[serde(deserialize_with = "arc_scenarios::names::violations")]
    pub violations: Vec<Violation>,
    /// The command that replays it.
    pub replay: String,
}

/// Per oracle, the first position (0-based, among a cell's seeds) of a seed it failed, as seen so far.
#[derive(Debug, Default)]
pub struct Kills(BTreeMap<&'static str, usize>);

impl Kills {
    /// The kills of `results` (by position).
    pub fn of(results: &BTreeMap<usize, SeedResult>) -> Kills {
        let mut kills = Kills::default();
        for (position, result) in results {
            kills.saw(*position, result);
        }
        kills
    }

    /// Records the result of the seed at `position`.
    pub fn saw(&mut self, position: usize, result: &SeedResult) {
        for oracle in result.oracles() {
            self.0.entry(oracle).and_modify(|first| *first = (*first).min(position)).or_insert(position);
        }
    }

    /// The position by which every oracle of the cell's kill rows has fired, if all have (with no
    /// rows, the first failure).
    pub fn complete_at(&self, rows: &[&KillExpectation]) -> Option<usize> {
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

/// The last position a cell tallies: its cut-off if it stops early and is complete, else none.
pub fn cut_off(
    rows: &[&KillExpectation],
    results: &BTreeMap<usize, SeedResult>,
    stops_early: bool,
) -> Option<usize> {
    if !stops_early {
        return None;
    }
    Kills::of(results).complete_at(rows)
}

/// The first failure among `results` and its violations, as the sweep (or a shard's file) kept it.
pub type FirstViolations = Option<(usize, Vec<Violation>)>;

/// Tallies `results` (by 0-based position among the cell's seeds) up to the cut-off. `first` holds
/// the violations of the first failing seed (the only ones a cell reports).
pub fn tally(
    scenario: &dyn Scenario,
    build: Build,
    rows: &[&KillExpectation],
    results: &BTreeMap<usize, SeedResult>,
    first: &FirstViolations,
    stops: Stops,
) -> Cell {
    let mut out = Cell {
        scenario: scenario.name(),
        profile: build.profile,
        variant: build.variant,
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
        seeds: Vec::new(),
        probes_reached_at: None,
    };
    let covered = stops.until_probes.and_then(|k| reached_at(results, &awaited(scenario), k));
    out.probes_reached_at = covered.map(|at| at as u32 + 1);
    let killed = cut_off(rows, results, stops.early);
    let last = killed.into_iter().chain(covered).min().unwrap_or(usize::MAX);
    for result in results.range(..=last).map(|(_, r)| r) {
        count(&mut out, result);
        out.seeds.push(result.clone());
    }
    out.first_failure = first_failure(scenario, build, &out.seeds, first);
    out
}

/// The first failing seed of `seeds`, with its violations from `first`.
fn first_failure(
    scenario: &dyn Scenario,
    build: Build,
    seeds: &[SeedResult],
    first: &FirstViolations,
) -> Option<FirstFailure> {
    let result = seeds.iter().find(|r| r.is_failure())?;
    let violations = match first {
        Some((at, violations)) if at + 1 == result.nth as usize => violations.clone(),
        _ => Vec::new(),
    };
    Some(FirstFailure {
        seed: result.seed,
        nth: result.nth,
        violations,
        replay: replay_line(scenario.name(), build, result.seed),
    })
}

/// Adds one seed's result to the cell.
fn count(out: &mut Cell, result: &SeedResult) {
    let (oracles, probes, sim_ms, wall_ms, deterministic) = match &result.outcome {
        SeedOutcome::Failed { error } => {
            out.errors.push((result.seed, error.clone()));
            return;
        }
        SeedOutcome::Ran { oracles, probes, sim_ms, wall_ms, deterministic } => {
            (oracles, probes, sim_ms, wall_ms, deterministic)
        }
    };
    out.runs += 1;
    out.sim_ms += sim_ms;
    out.wall_ms += wall_ms;
    for probe in &probes.0 {
        *out.probe_seeds.entry(*probe).or_insert(0) += 1;
    }
    if !deterministic {
        out.nondeterministic.push(result.seed);
    }
    for oracle in &oracles.0 {
        *out.oracle_seeds.entry(*oracle).or_insert(0) += 1;
        out.first_kills.entry(*oracle).or_insert(result.nth);
    }
    if !oracles.0.is_empty() {
        out.failures += 1;
    }
}
