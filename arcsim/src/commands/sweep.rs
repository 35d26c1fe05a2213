//! `arcsim sweep`: scenarios × variants × seeds on all cores, a table, and a non-zero exit when the fixed
//! controller fails any seed or a bug variant survives its bound. With `--shard I/N` it runs one share
//! of the sweep and writes it for `arcsim merge`, which judges the whole.

use super::exit;
use std::path::{Path, PathBuf};

use arc_controller::Profile;
use arc_sim::Seed;
use arc_sim::github::{Assumed, assumptions};

use crate::commands::progress::Progress;
use crate::report::{probe_table, sweep_passed, sweep_table};
use crate::shard::Shard;
use crate::sweep::{SweepPlan, SweepReport, sweep};
use arc_scenarios::scaled::Scaled;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;

/// Options of `arcsim sweep`.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    /// A scenario name, or `all`.
    #[arg(long, value_parser = crate::cli::parse_scenario_or_all, default_value = "all")]
    pub scenario: String,
    /// The profile (see `arcsim list`); the kill table applies to `arcsim`, and under any other
    /// profile `--variant all` runs the fixed controller only (name a variant, or `--matrix`, for more).
    #[arg(long, default_value = "arcsim", value_parser = crate::cli::parse_profile)]
    pub profile: Profile,
    /// A variant name, several separated by commas, or `all`.
    #[arg(long, default_value = "all")]
    pub variant: String,
    /// Run seeds 1..=N in every cell (bug variants up to their bound, or N if smaller). Without
    /// `--seeds`, `--from` or `--nightly`: the quick sweep, the fixed controller on seeds
    /// 1..=10 and every bug variant up to its bound.
    #[arg(long, conflicts_with_all = ["from", "count", "nightly"])]
    pub seeds: Option<u64>,
    /// The full sweep: the fixed controller on seeds 1..=200, every bug variant up to its bound.
    #[arg(long, conflicts_with_all = ["from", "count"])]
    pub nightly: bool,
    /// First seed (with --count).
    #[arg(long, requires = "count", value_parser = crate::cli::parse_seed)]
    pub from: Option<Seed>,
    /// Number of seeds (with --from).
    #[arg(long, requires = "from")]
    pub count: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run every seed twice and fail on any trace difference.
    #[arg(long)]
    pub check_determinism: bool,
    /// Run every seed of bug variants too (by default a bug variant stops at its first failure or at
    /// its kill-table bound).
    #[arg(long)]
    pub exhaustive: bool,
    /// Run every variant in every scenario (by default, with `--variant all`, a bug variant runs only
    /// in the scenarios where the kill table expects it to be caught).
    #[arg(long)]
    pub matrix: bool,
    /// Run shard I of N (from 0): the seeds at positions I, I+N, … of every cell. Writes its JSON for
    /// `arcsim merge` and exits 0 once written; the merge judges the sweep.
    #[arg(long, value_name = "I/N", requires = "json", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Run every scenario at N runners: its scale set's maximum (a legacy world's Runners), with the job rate scaled to match.
    #[arg(long, value_name = "N")]
    pub runners: Option<u32>,
    /// The network between the clients and the fakes: `in-process` (fastest; each scenario's own) or
    /// `turmoil` (simulated TCP, network faults).
    #[arg(long, default_value = "in-process")]
    pub network: arc_sim::net::Network,
    /// The order the sim's tasks take same-instant work in: `fifo` (tokio's own, the default),
    /// `random`, or `pct:D` (PCT-like priorities with D − 1 change points), drawn from each seed.
    #[arg(long, default_value = "fifo")]
    pub schedule: arc_sim::schedule::Schedule,
    /// Assume this alternative of a behaviour of GitHub's that no public document fixes, `NAME=ALT`, in
    /// every run (repeatable; `arcsim list assumptions`).
    #[arg(long = "assume", value_name = "NAME=ALT")]
    pub assume: Vec<String>,
    /// `each`: run the whole sweep once under the assumptions as chosen (the defaults, or `--assume`),
    /// then once per other alternative of each assumption, one moved at a time, and print a verdict
    /// per alternative (`arcsim list assumptions`). `drawn`: every run draws an alternative of each
    /// assumption from its seed; a failure's replay line names what its seed drew.
    #[arg(long, value_enum, conflicts_with = "until_probes")]
    pub assumptions: Option<AssumptionsMode>,
    /// Stop each fixed-controller cell once every probe its scenario declares a floor for has fired in
    /// at least K seeds, and say how many seeds that took (not with `--shard`).
    #[arg(long, value_name = "K", conflicts_with = "shard", value_parser = clap::value_parser!(u32).range(1..))]
    pub until_probes: Option<u32>,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    text.parse().map_err(|e: crate::shard::ShardError| e.to_string())
}

/// The fixed controller's seeds in the quick sweep (no seed flags): every scenario runs and every
/// kill row is checked in minutes on two cores.
pub const QUICK_SEEDS: u64 = 10;

/// The fixed controller's seeds in the full sweep (`--nightly`).
pub const NIGHTLY_SEEDS: u64 = 200;

/// The seeds the flags ask for, and how many of them the fixed controller runs when that is fewer
/// (a preset, whose bug variants run on to their bounds).
fn seeds(args: &SweepArgs) -> (Vec<Seed>, Option<u64>) {
    let first = |n: u64| (1..=n).map(Seed).collect();
    match (args.from, args.count, args.seeds) {
        (Some(from), Some(count), _) => ((0..count).map(|i| Seed(from.0.wrapping_add(i))).collect(), None),
        (_, _, Some(n)) => (first(n), None),
        _ if args.nightly => (first(NIGHTLY_SEEDS), Some(NIGHTLY_SEEDS)),
        _ => (first(QUICK_SEEDS), Some(QUICK_SEEDS)),
    }
}

fn chosen_scenarios(name: &str) -> anyhow::Result<Vec<&'static dyn Scenario>> {
    if name == "all" {
        return Ok(scenarios::all());
    }
    Ok(vec![scenarios::find(name).map_err(exit::usage)?])
}

fn chosen_variants(names: &str, profile: Profile, matrix: bool) -> anyhow::Result<Vec<Variant>> {
    match names {
        "all" if profile == Profile::Arcsim || matrix => Ok(Variant::ALL.to_vec()),
        "all" => Ok(vec![Variant::Fixed]),
        _ => Ok(names.split(',').map(|name| name.trim().parse::<Variant>()).collect::<Result<_, _>>()?),
    }
}

/// Runs the sweep and prints its table.
pub fn run(args: SweepArgs) -> anyhow::Result<()> {
    let (seeds, fixed_seeds) = seeds(&args);
    let mut plan = SweepPlan {
        profile: args.profile,
        scenarios: chosen_scenarios(&args.scenario)?,
        variants: chosen_variants(&args.variant, args.profile, args.matrix)?,
        seeds,
        fixed_seeds,
        jobs: args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        check_determinism: args.check_determinism,
        exhaustive: args.exhaustive,
        matrix: args.matrix || args.variant != "all",
        shard: args.shard.unwrap_or(Shard::WHOLE),
        runners: args.runners,
        network: args.network,
        schedule: args.schedule,
        assumed: Assumed::parse(args.assume.iter().map(String::as_str))?,
        draws_assumptions: args.assumptions == Some(AssumptionsMode::Drawn),
        until_probes: args.until_probes,
    };
    if plan.seeds.is_empty() {
        return Err(exit::usage("no seeds to run"));
    }
    // A preset checks every kill row: its bug variants run on past the fixed controller's seeds to
    // their bounds (each stops at its kill).
    if let Some(fixed) = plan.fixed_seeds {
        let wanted = plan.widest_bound().max(fixed);
        plan.seeds = (1..=wanted).map(Seed).collect();
    }
    if let Some(n) = plan.runners {
        for scenario in &plan.scenarios {
            Scaled::new(*scenario, n)?;
        }
    }
    if args.assumptions == Some(AssumptionsMode::Each) && args.shard.is_some() {
        return Err(exit::usage(
            "--assumptions each runs whole sweeps, one per alternative: not with --shard",
        ));
    }
    anyhow::ensure!(
        !plan.draws_assumptions || plan.assumed.is_default(),
        "--assumptions drawn draws every assumption per seed: not with --assume"
    );
    if args.assumptions == Some(AssumptionsMode::Each) {
        return sweep_each_alternative(plan, args.json.as_deref());
    }
    let progress = Progress::start();
    let report = sweep(&plan, &|done, total| progress.update(done, total));
    progress.finish();
    if plan.shard.is_whole() {
        if let Some(k) = plan.until_probes {
            print!("{}", coverage_lines(&report, k));
        }
        return finish(&report, args.json.as_deref());
    }
    println!("shard {} of the sweep (a partial table: `arcsim merge` judges the whole)", plan.shard);
    print!("{}", sweep_table(&report));
    write_json(&report, args.json.as_deref())
}

/// One line per fixed-controller cell: how many seeds it took until every probe its scenario has a
/// floor for had fired in `k` seeds, or that it did not happen.
fn coverage_lines(report: &SweepReport, k: u32) -> String {
    let mut out = String::new();
    for cell in report.cells.iter().filter(|c| c.variant.is_fixed()) {
        let awaited = scenarios::find(cell.scenario).map(crate::coverage::awaited).unwrap_or_default();
        let line = match cell.probes_reached_at {
            _ if awaited.is_empty() => "declares no probe floors: ran every seed".to_string(),
            Some(n) => {
                format!("every awaited probe ({}) fired in {k} seeds after {n} seeds", awaited.join(", "))
            }
            None => {
                let short: Vec<String> = awaited
                    .iter()
                    .map(|p| (p, cell.probe_seeds.get(p).copied().unwrap_or(0)))
                    .filter(|(_, n)| *n < k)
                    .map(|(p, n)| format!("{p} {n}"))
                    .collect();
                format!("not reached in {} seeds (fired in fewer than {k}: {})", cell.runs, short.join(", "))
            }
        };
        out.push_str(&format!("until-probes {}: {line}\n", cell.scenario));
    }
    out
}

/// How `--assumptions` varies the assumptions about GitHub between sweeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AssumptionsMode {
    /// The chosen assumptions, then each other alternative of each assumption, one at a time.
    Each,
    /// Every run draws an alternative of each assumption from its seed (replay lines name them).
    Drawn,
}

/// The chosen assumptions, then each with one assumption moved to another of its alternatives.
fn each_alternative(chosen: &Assumed) -> Vec<Assumed> {
    let mut out = vec![chosen.clone()];
    for assumption in assumptions::all() {
        let others = assumption.alternatives.iter().filter(|a| a.name != chosen.of(assumption).name);
        for alternative in others {
            let moved = chosen.clone().with(&format!("{}={}", assumption.name, alternative.name));
            out.push(moved.expect("an alternative of a known assumption"));
        }
    }
    out
}

/// `--assumptions each`: the sweep once per alternative, each table under its heading, a verdict
/// per alternative at the end; the JSON file holds the reports, one per alternative, in that order.
fn sweep_each_alternative(mut plan: SweepPlan<'_>, json: Option<&Path>) -> anyhow::Result<()> {
    let mut reports = Vec::new();
    for assumed in each_alternative(&plan.assumed) {
        plan.assumed = assumed;
        println!("== under {}", plan.assumed);
        let progress = Progress::start();
        let report = sweep(&plan, &|done, total| progress.update(done, total));
        progress.finish();
        print!("{}", sweep_table(&report));
        print!("{}", probe_table(&report));
        reports.push(report);
    }
    println!("verdict per alternative:");
    for report in &reports {
        let verdict = if sweep_passed(report) { "ok" } else { "PROBLEMS (see its table)" };
        println!("  {:<50} {verdict}", report.plan.assumed.to_string());
    }
    write_json(&reports, json)?;
    if !reports.iter().all(sweep_passed) {
        return Err(exit::found("the sweep found problems under some alternative"));
    }
    Ok(())
}

/// Prints a whole sweep's tables, writes its JSON, and fails if the sweep found problems.
pub fn finish(report: &SweepReport, json: Option<&Path>) -> anyhow::Result<()> {
    print!("{}", sweep_table(report));
    print!("{}", probe_table(report));
    write_json(report, json)?;
    if !sweep_passed(report) {
        return Err(exit::found("the sweep found problems (see the table above)"));
    }
    Ok(())
}

fn write_json(value: &impl serde::Serialize, path: Option<&Path>) -> anyhow::Result<()> {
    if let Some(path) = path {
        let json = serde_json::to_string_pretty(value)?;
        std::fs::write(path, json)
            .map_err(|e| exit::usage(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_alternative_moves_one_assumption_at_a_time_from_the_chosen_ones() {
        let all = each_alternative(&Assumed::defaults());
        let others: usize = assumptions::all().iter().map(|a| a.alternatives.len() - 1).sum();
        assert_eq!(all.len(), 1 + others);
        assert!(all[0].is_default());
        assert!(all[1..].iter().all(|a| a.flags().matches("--assume").count() == 1), "{all:?}");
        let chosen = Assumed::parse(["capacity-header=advisory"]).unwrap();
        let from_chosen = each_alternative(&chosen);
        assert_eq!(from_chosen[0], chosen);
        let back = assumptions::find("capacity-header").unwrap().default_alternative().name;
        let moved_back = Assumed::parse([format!("capacity-header={back}").as_str()]).unwrap();
        assert!(from_chosen.contains(&moved_back), "capacity-header moved back to its default, pinned");
    }
}
