//! `arcsim sweep`: scenarios × variants × seeds on all cores, a table, and a non-zero exit when the fixed
//! controller fails any seed or a bug variant survives its bound.

use std::path::PathBuf;

use arc_controller::Profile;
use arc_sim::Seed;
use indicatif::{ProgressBar, ProgressStyle};

use crate::report::{probe_table, sweep_passed, sweep_table};
use crate::scenario::Scenario;
use crate::scenarios;
use crate::sweep::{SweepPlan, sweep};
use crate::variant::Variant;

/// Options of `arcsim sweep`.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    /// A scenario name, or `all`.
    #[arg(long, default_value = "all")]
    pub scenario: String,
    /// The profile (see `arcsim list`); the kill table applies to `arcsim`, and under any other
    /// profile `--variant all` runs the fixed controller only (name a variant, or `--matrix`, for more).
    #[arg(long, default_value = "arcsim", value_parser = crate::cli::parse_profile)]
    pub profile: Profile,
    /// A variant name, or `all`.
    #[arg(long, default_value = "all")]
    pub variant: String,
    /// Run seeds 1..=N.
    #[arg(long, conflicts_with_all = ["from", "count"])]
    pub seeds: Option<u64>,
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
}

/// Default number of seeds: a few hundred, minutes on two cores.
pub const DEFAULT_SEEDS: u64 = 200;

fn seeds(args: &SweepArgs) -> Vec<Seed> {
    match (args.from, args.count, args.seeds) {
        (Some(from), Some(count), _) => (0..count).map(|i| Seed(from.0.wrapping_add(i))).collect(),
        (_, _, n) => (1..=n.unwrap_or(DEFAULT_SEEDS)).map(Seed).collect(),
    }
}

fn chosen_scenarios(name: &str) -> anyhow::Result<Vec<&'static dyn Scenario>> {
    if name == "all" {
        return Ok(scenarios::all());
    }
    Ok(vec![scenarios::find(name).map_err(anyhow::Error::msg)?])
}

fn chosen_variants(name: &str, profile: Profile, matrix: bool) -> anyhow::Result<Vec<Variant>> {
    match name {
        "all" if profile == Profile::Arcsim || matrix => Ok(Variant::ALL.to_vec()),
        "all" => Ok(vec![Variant::Fixed]),
        _ => Ok(vec![name.parse::<Variant>()?]),
    }
}

/// Runs the sweep and prints its table.
pub fn run(args: SweepArgs) -> anyhow::Result<()> {
    let plan = SweepPlan {
        profile: args.profile,
        scenarios: chosen_scenarios(&args.scenario)?,
        variants: chosen_variants(&args.variant, args.profile, args.matrix)?,
        seeds: seeds(&args),
        jobs: args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        check_determinism: args.check_determinism,
        exhaustive: args.exhaustive,
        matrix: args.matrix || args.variant != "all",
    };
    anyhow::ensure!(!plan.seeds.is_empty(), "no seeds to run");
    let total = plan.scenarios.len() * plan.variants.len() * plan.seeds.len();
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} elapsed, eta {eta}")
            .expect("a valid template"),
    );
    let report = sweep(&plan, &|done, _| bar.set_position(done as u64));
    bar.finish_and_clear();
    print!("{}", sweep_table(&report));
    print!("{}", probe_table(&report));
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    anyhow::ensure!(sweep_passed(&report), "the sweep found problems (see the table above)");
    Ok(())
}
