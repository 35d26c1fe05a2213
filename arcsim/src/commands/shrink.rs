//! `arcsim shrink`: a failing seed (or capsule) cut down to what its failure needs, written as a
//! failure capsule with the line that replays it.

use super::exit;
use std::path::PathBuf;

use arc_sim::github::Assumed;
use arc_sim::net::Network;
use arc_sim::schedule::Schedule;
use arc_sim::{Seed, TraceMode};

use crate::capsule::{Capsule, CapsuleError};
use crate::commands::build_args::BuildArgs;
use crate::runner::run_build;
use crate::shrink::{DEFAULT_BUDGET, Minimality, Shrunk, shrink_reporting};
use arc_scenarios::assuming::Assuming;
use arc_scenarios::on_network::OnNetwork;
use arc_scenarios::on_schedule::OnSchedule;
use arc_scenarios::scaled::Scaled;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios;

/// Options of `arcsim shrink`.
#[derive(Debug, Clone, clap::Args)]
pub struct ShrinkArgs {
    /// Scenario (see `arcsim list`).
    #[arg(long, value_parser = crate::cli::parse_scenario, required_unless_present = "capsule")]
    pub scenario: Option<String>,
    /// Profile and variant.
    #[command(flatten)]
    pub build: BuildArgs,
    /// The failing seed.
    #[arg(long, value_parser = crate::cli::parse_seed, required_unless_present = "capsule")]
    pub seed: Option<Seed>,
    /// The network between the clients and the fakes.
    #[arg(long, default_value = "in-process")]
    pub network: Network,
    /// The order the sim's tasks take same-instant work in (`fifo`, `random`, `pct:D`); kept in the
    /// capsule.
    #[arg(long, default_value = "fifo", conflicts_with = "capsule")]
    pub schedule: Schedule,
    /// Assume this alternative about GitHub, `NAME=ALT` (repeatable; `arcsim list assumptions`); kept
    /// in the capsule.
    #[arg(long = "assume", value_name = "NAME=ALT", conflicts_with = "capsule")]
    pub assume: Vec<String>,
    /// Run at N runners (`arcsim run --runners`); kept in the capsule.
    #[arg(long, value_name = "N", conflicts_with = "capsule")]
    pub runners: Option<u32>,
    /// The oracle to keep failing (default: the seed's first violation's).
    #[arg(long)]
    pub oracle: Option<String>,
    /// Shrink this capsule instead of a seed's run.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "seed", "oracle"])]
    pub capsule: Option<PathBuf>,
    /// Reruns the shrink may spend.
    #[arg(long, default_value_t = DEFAULT_BUDGET)]
    pub budget: u32,
    /// Where to write the capsule (default: `capsule-SCENARIO-VARIANT-SEED.json` here).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Shrinks, writes the capsule and prints the before and after and the replay line.
pub fn run(args: ShrinkArgs) -> anyhow::Result<()> {
    let original = match &args.capsule {
        Some(path) => Capsule::load(path)?,
        None => seed_capsule(&args)?,
    };
    let out = args.out.clone().unwrap_or_else(|| default_path(&original));
    eprintln!("shrink: running the seed, then up to {} reruns of it", args.budget);
    let shrunk = shrink_reporting(original, args.budget, |rerun, budget| {
        eprint!("\rshrink: rerun {rerun} of at most {budget}");
    })?;
    eprintln!();
    shrunk.capsule.save(&out)?;
    print!("{}", report(&shrunk, args.budget));
    println!("  capsule written to {}", out.display());
    println!("  replay with: {}", Capsule::replay_line(&out));
    Ok(())
}

/// The capsule of the seed's run, expecting the oracle asked for or its first violation's.
fn seed_capsule(args: &ShrinkArgs) -> anyhow::Result<Capsule> {
    let name = args.scenario.as_deref().ok_or_else(|| exit::usage("--scenario or --capsule is required"))?;
    let seed = args.seed.ok_or_else(|| exit::usage("--seed or --capsule is required"))?;
    let scenario = scenarios::find(name).map_err(exit::usage)?;
    let build = args.build.build();
    let assumed = Assumed::parse(args.assume.iter().map(String::as_str))?;
    let oracle = match &args.oracle {
        Some(oracle) => oracle.clone(),
        None => {
            let scaled = args.runners.map(|n| Scaled::new(scenario, n)).transpose()?;
            let sized: &dyn Scenario = match &scaled {
                Some(scaled) => scaled,
                None => scenario,
            };
            let on_network = OnNetwork::new(sized, args.network);
            let assuming = Assuming::new(&on_network, &assumed);
            let on_schedule = OnSchedule::new(&assuming, args.schedule);
            let (verdict, _) = run_build(&on_schedule, build, seed, TraceMode::HashOnly)?;
            let first = verdict.violations.first().ok_or_else(|| {
                exit::usage(format!(
                    "seed {seed} of {} in {name} passes every oracle: nothing to shrink",
                    build.variant
                ))
            })?;
            first.oracle.to_string()
        }
    };
    let taken = match args.runners {
        Some(runners) => Capsule::of_sized_run(scenario, runners, build, seed, args.network, &oracle)?,
        None => Capsule::of_run(scenario, build, seed, args.network, &oracle),
    };
    let capsule = Capsule { schedule: args.schedule, assumed, ..taken };
    capsule.check().map_err(|error| match (&args.oracle, error) {
        // The capsule was made from the command line: name the flag, not a capsule nobody gave.
        (Some(_), CapsuleError::Invalid(problem)) => exit::usage(format!("--oracle: {problem}")),
        (_, error) => error.into(),
    })?;
    Ok(capsule)
}

fn default_path(capsule: &Capsule) -> PathBuf {
    PathBuf::from(format!("capsule-{}-{}-{}.json", capsule.scenario, capsule.variant, capsule.seed))
}

/// The before and after, the reruns, the 1-minimality and the steps kept.
pub fn report(shrunk: &Shrunk, budget: u32) -> String {
    let mut out = format!(
        "shrunk {} of {} in {} ({}) to keep {} failing, in {} reruns of {budget}\n",
        shrunk.capsule.seed,
        shrunk.capsule.variant,
        shrunk.capsule.scenario,
        shrunk.capsule.profile,
        shrunk.capsule.expected_oracle,
        shrunk.reruns
    );
    out += &format!("  before: {}\n  after:  {}\n", shrunk.before, shrunk.after);
    out += match shrunk.minimality {
        Minimality::StepsAndJobs => {
            "  1-minimal: removing any one remaining step or job makes the oracle pass (each checked)\n"
        }
        Minimality::Steps => {
            "  1-minimal in its steps: removing any one remaining step makes the oracle pass (each checked); \
             the budget ran out before every job was\n"
        }
        Minimality::Unchecked => "  1-minimal: not verified (the budget ran out first)\n",
    };
    for step in shrunk.steps() {
        out += &format!("  kept: {step}\n");
    }
    out
}
