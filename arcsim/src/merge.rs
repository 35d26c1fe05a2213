//! Merging the shards of a sweep: the JSON files that `arcsim sweep --shard I/N --json FILE` wrote, one
//! per shard, become the report one unsharded sweep would have made. The files must be the N shards
//! of one plan, each once. Every cell's seeds are gathered from all shards and tallied again
//! ([`crate::tally`]): the cut-off of a bug cell is recomputed from the per-seed results, so it is the
//! unsharded one, and every seed up to it must be in some file (a shard only ever stops later than
//! the whole sweep would).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::plan_record::PlanRecord;
use crate::seed_result::SeedResult;
use crate::shard::Shard;
use crate::sweep::{SweepPlan, SweepReport, with_plan_flags};
use crate::tally::{Cell, FirstFailure, FirstViolations, Stops, cut_off, tally};
use arc_scenarios::scenario::Scenario;
use arc_scenarios::variant::{Build, Variant};

/// A sweep's JSON, as merge reads it (the tallies are recomputed, so only the seeds are read).
#[derive(Debug, Deserialize)]
pub struct ShardFile {
    /// The plan.
    pub plan: PlanRecord,
    /// The cells' seeds.
    pub cells: Vec<ShardCell>,
}

/// One cell of a shard's file.
#[derive(Debug, Deserialize)]
pub struct ShardCell {
    /// Scenario name.
    pub scenario: String,
    /// Variant.
    pub variant: Variant,
    /// The seeds this shard tallied.
    pub seeds: Vec<SeedResult>,
    /// This shard's first failure of the cell, with its violations.
    pub first_failure: Option<FirstFailure>,
}

/// Why files cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No file given.
    #[error("nothing to merge: give the JSON files of every shard")]
    Nothing,
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not a sweep's JSON.
    #[error("{path} is not the JSON of an arcsim sweep: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// Two files are shards of different plans.
    #[error(
        "{a} and {b} are not shards of the same sweep (scenarios, variants, seeds, switches, network or schedule differ)"
    )]
    DifferentSweeps {
        /// One file.
        a: PathBuf,
        /// The other.
        b: PathBuf,
    },
    /// The files are not exactly the shards 0..N, each once.
    #[error("{path} is shard {shard}, but {given} file(s) were given: give each of the {count} shards once")]
    WrongShards {
        /// The file.
        path: PathBuf,
        /// Its shard.
        shard: Shard,
        /// How many files were given.
        given: usize,
        /// How many shards its sweep has.
        count: u32,
    },
    /// The plan names a scenario this build does not know.
    #[error("{path}: {why}")]
    Plan {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// A file holds a cell or seed its shard of the plan does not run.
    #[error("{path} (shard {shard}) holds {what}, which its shard of the plan does not run")]
    Foreign {
        /// The file.
        path: PathBuf,
        /// Its shard.
        shard: Shard,
        /// The cell or seed.
        what: String,
    },
    /// The first failure's violations are in no file.
    #[error("seed {seed} (#{nth}) of {scenario} / {variant} failed, but no file holds its violations")]
    NoViolations {
        /// The scenario.
        scenario: &'static str,
        /// The variant.
        variant: Variant,
        /// The seed.
        seed: arc_sim::Seed,
        /// Its position (1-based).
        nth: u32,
    },
    /// A seed the merged tally needs is in no file.
    #[error("seed {seed} (#{nth}) of {scenario} / {variant} is missing from shard {shard}'s file")]
    Missing {
        /// The scenario.
        scenario: &'static str,
        /// The variant.
        variant: Variant,
        /// The seed.
        seed: arc_sim::Seed,
        /// Its position (1-based).
        nth: usize,
        /// The shard that should have run it.
        shard: Shard,
    },
}

/// Reads and merges the files at `paths`.
pub fn merge_files(paths: &[PathBuf]) -> Result<SweepReport, MergeError> {
    let files =
        paths.iter().map(|path| read(path).map(|file| (path.clone(), file))).collect::<Result<_, _>>()?;
    merge(files)
}

fn read(path: &PathBuf) -> Result<ShardFile, MergeError> {
    let text = std::fs::read(path).map_err(|source| MergeError::Read { path: path.clone(), source })?;
    serde_json::from_slice(&text).map_err(|source| MergeError::Parse { path: path.clone(), source })
}

/// Merges shard files (with the paths they came from, for errors) into one sweep's report.
pub fn merge(mut files: Vec<(PathBuf, ShardFile)>) -> Result<SweepReport, MergeError> {
    let count = check_shards(&mut files)?;
    let (first_path, first) = &files[0];
    let whole = PlanRecord { shard: Shard::WHOLE, ..first.plan.clone() };
    let plan = whole.plan(1).map_err(|why| MergeError::Plan { path: first_path.clone(), why })?;
    let cells = plan.cells();
    let mut gathered: Vec<Gathered> = vec![Gathered::default(); cells.len()];
    for (path, file) in files {
        gather(&plan, &path, file, &mut gathered)?;
    }
    let mut tallied = Vec::with_capacity(cells.len());
    for ((scenario, variant), cell) in cells.into_iter().zip(&gathered) {
        check_complete(&plan, scenario, variant, &cell.results, count)?;
        let stops_early = plan.stops_early(variant);
        let build = Build::new(plan.profile, variant);
        let rows = plan.rows(scenario, variant);
        let stops = Stops { early: stops_early, until_probes: None };
        let merged = tally(scenario, build, &rows, &cell.results, &cell.first, stops);
        check_first_failure(&merged)?;
        tallied.push(merged);
    }
    let cells = with_plan_flags(tallied, &whole);
    Ok(SweepReport { plan: whole, cells })
}

/// One cell's seeds from all shards, by position, and the earliest of the shards' first failures.
#[derive(Debug, Clone, Default)]
struct Gathered {
    results: BTreeMap<usize, SeedResult>,
    first: FirstViolations,
}

/// Adds the seeds of one shard's file to `gathered` (per cell of `plan`).
fn gather(
    plan: &SweepPlan<'_>,
    path: &std::path::Path,
    file: ShardFile,
    gathered: &mut [Gathered],
) -> Result<(), MergeError> {
    let shard = file.plan.shard;
    let foreign = |what: String| MergeError::Foreign { path: path.to_path_buf(), shard, what };
    let cells = plan.cells();
    for cell in file.cells {
        let found = cells.iter().position(|(s, v)| s.name() == cell.scenario && *v == cell.variant);
        let c = found.ok_or_else(|| foreign(format!("cell {} / {}", cell.scenario, cell.variant)))?;
        let (scenario, variant) = cells[c];
        let seeds = plan.seeds_of(scenario, variant);
        for result in cell.seeds {
            let at = (result.nth as usize).wrapping_sub(1);
            let what =
                || format!("seed {} (#{}) of {} / {}", result.seed, result.nth, cell.scenario, variant);
            let planned = seeds.get(at) == Some(&result.seed) && shard.owns(at);
            if !planned || gathered[c].results.contains_key(&at) {
                return Err(foreign(what()));
            }
            gathered[c].results.insert(at, result);
        }
        if let Some(f) = cell.first_failure {
            let at = (f.nth as usize).wrapping_sub(1);
            if gathered[c].first.as_ref().is_none_or(|(known, _)| at < *known) {
                gathered[c].first = Some((at, f.violations));
            }
        }
    }
    Ok(())
}

/// Checks that the merged first failure has its violations (the shard that ran it kept them).
fn check_first_failure(cell: &Cell) -> Result<(), MergeError> {
    match &cell.first_failure {
        Some(f) if f.violations.is_empty() => Err(MergeError::NoViolations {
            scenario: cell.scenario,
            variant: cell.variant,
            seed: f.seed,
            nth: f.nth,
        }),
        _ => Ok(()),
    }
}

/// Checks that every seed of the cell up to its recomputed cut-off is there.
fn check_complete(
    plan: &SweepPlan<'_>,
    scenario: &'static dyn Scenario,
    variant: Variant,
    results: &BTreeMap<usize, SeedResult>,
    count: u32,
) -> Result<(), MergeError> {
    let rows = plan.rows(scenario, variant);
    let last = cut_off(&rows, results, plan.stops_early(variant)).unwrap_or(usize::MAX);
    let mut seeds = plan.seeds_of(scenario, variant).iter().enumerate().take_while(|(at, _)| *at <= last);
    match seeds.find(|(at, _)| !results.contains_key(at)) {
        Some((at, seed)) => {
            let shard = Shard { index: u32::try_from(at % count as usize).unwrap_or(0), count };
            Err(MergeError::Missing { scenario: scenario.name(), variant, seed: *seed, nth: at + 1, shard })
        }
        None => Ok(()),
    }
}

/// Checks that the files are shards 0..N of one plan, each once, sorts them by shard, and returns N.
fn check_shards(files: &mut [(PathBuf, ShardFile)]) -> Result<u32, MergeError> {
    let (first_path, first) = files.first().ok_or(MergeError::Nothing)?;
    let unsharded = |plan: &PlanRecord| PlanRecord { shard: Shard::WHOLE, ..plan.clone() };
    let base = unsharded(&first.plan);
    for (path, file) in files.iter() {
        if unsharded(&file.plan) != base {
            return Err(MergeError::DifferentSweeps { a: first_path.clone(), b: path.clone() });
        }
    }
    files.sort_by_key(|(_, file)| file.plan.shard.index);
    for (i, (path, file)) in files.iter().enumerate() {
        let shard = file.plan.shard;
        if shard.count as usize != files.len() || shard.index as usize != i {
            return Err(MergeError::WrongShards {
                path: path.clone(),
                shard,
                given: files.len(),
                count: shard.count,
            });
        }
    }
    Ok(files[0].1.plan.shard.count)
}

#[cfg(test)]
mod tests {
    use arc_controller::Profile;
    use arc_sim::Seed;
    use arc_sim::net::Network;
    use arc_sim::schedule::Schedule;

    use super::*;
    use crate::plan_record::SeedSpan;

    fn shard_of(index: u32, network: Network) -> (PathBuf, ShardFile) {
        let plan = PlanRecord {
            profile: Profile::Arcsim,
            scenarios: vec!["network-partition".into()],
            variants: vec![Variant::Fixed],
            seeds: vec![SeedSpan { from: Seed(1), count: 2 }],
            fixed_seeds: None,
            check_determinism: false,
            exhaustive: false,
            matrix: false,
            shard: Shard { index, count: 2 },
            runners: None,
            network,
            schedule: Schedule::Fifo,
            assumed: arc_sim::github::Assumed::defaults(),
            draws_assumptions: false,
        };
        (PathBuf::from(format!("shard-{index}-{network}.json")), ShardFile { plan, cells: Vec::new() })
    }

    #[test]
    fn shards_run_under_different_schedules_are_not_one_sweep() {
        let (path, mut pct) = shard_of(1, Network::InProcess);
        pct.plan.schedule = Schedule::Pct { depth: 3 };
        let error = merge(vec![shard_of(0, Network::InProcess), (path, pct)]).unwrap_err();
        assert!(matches!(error, MergeError::DifferentSweeps { .. }), "{error}");
        assert!(error.to_string().contains("network or schedule differ"), "{error}");
    }

    #[test]
    fn shards_run_on_different_networks_are_not_one_sweep() {
        let files = vec![shard_of(0, Network::Turmoil), shard_of(1, Network::InProcess)];
        let error = merge(files).unwrap_err();
        assert!(matches!(error, MergeError::DifferentSweeps { .. }), "{error}");
        assert!(error.to_string().contains("network or schedule differ"), "{error}");
    }

    /// A fixed-controller cell whose first failure is seed 2,000,013.
    fn failed_cell() -> Cell {
        let first = FirstFailure {
            seed: Seed(2_000_013),
            nth: 14,
            violations: Vec::new(),
            replay: "arcsim run --seed 2000013".into(),
        };
        Cell {
            scenario: "network-partition",
            profile: Profile::Arcsim,
            variant: Variant::Fixed,
            runs: 14,
            failures: 1,
            oracle_seeds: BTreeMap::new(),
            first_kills: BTreeMap::new(),
            first_failure: Some(first),
            nondeterministic: Vec::new(),
            errors: Vec::new(),
            probe_seeds: BTreeMap::new(),
            probe_goals: Vec::new(),
            sim_ms: 0,
            wall_ms: 0,
            seeds: Vec::new(),
            probes_reached_at: None,
        }
    }

    #[test]
    fn a_failure_replays_with_the_plans_runners_network_schedule_and_assumptions() {
        let cell = failed_cell();
        let plan = PlanRecord {
            runners: Some(20),
            schedule: Schedule::Pct { depth: 3 },
            assumed: arc_sim::github::Assumed::parse(["removal-vs-assignment=weak"]).unwrap(),
            ..shard_of(0, Network::Turmoil).1.plan
        };
        let cells = with_plan_flags(vec![cell], &plan);
        let replay = &cells[0].first_failure.as_ref().unwrap().replay;
        assert_eq!(
            replay,
            "arcsim run --seed 2000013 --runners 20 --network turmoil --schedule pct:3 --assume removal-vs-assignment=weak"
        );
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["assumed"], serde_json::json!({"removal-vs-assignment": "weak"}));
    }

    #[test]
    fn a_failure_of_a_drawn_sweep_replays_with_what_its_seed_drew() {
        let plan = PlanRecord { draws_assumptions: true, ..shard_of(0, Network::InProcess).1.plan };
        let cells = with_plan_flags(vec![failed_cell()], &plan);
        let replay = &cells[0].first_failure.as_ref().unwrap().replay;
        let drawn = arc_sim::github::Assumed::drawn(Seed(2_000_013));
        assert!(!drawn.is_default(), "seed 2,000,013 draws something other than the defaults");
        assert_eq!(replay, &format!("arcsim run --seed 2000013{}", drawn.flags()));
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["draws_assumptions"], serde_json::json!(true));
        assert_eq!(serde_json::from_value::<PlanRecord>(json).unwrap(), plan);
    }
}
