//! `arcsim explore`: generated perturbation plans over a seed's fault-free run; each failing run is
//! written as a capsule and printed with the line that replays it, then the coverage reached; the
//! reference run is written as a capsule too (add a perturbation to it to try a plan by hand).

use super::exit;
use std::path::PathBuf;

use arc_sim::Seed;
use arc_sim::github::Assumed;
use arc_sim::net::Network;
use arc_sim::schedule::Schedule;

use crate::capsule::Capsule;
use crate::commands::build_args::BuildArgs;
use crate::explore::{Exploration, explore};
use arc_scenarios::scenarios;

/// Options of `arcsim explore`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExploreArgs {
    /// Scenario (see `arcsim list`); its faults, disruptions and per-resource lags are removed.
    #[arg(long, value_parser = crate::cli::parse_scenario, default_value = "standard")]
    pub scenario: String,
    /// Profile and variant.
    #[command(flatten)]
    pub build: BuildArgs,
    /// The seed of the reference run.
    #[arg(long, default_value = "1", value_parser = crate::cli::parse_seed)]
    pub seed: Seed,
    /// Perturbed runs to make.
    #[arg(long, default_value_t = 30)]
    pub budget: usize,
    /// The network between the clients and the fakes.
    #[arg(long, default_value = "in-process")]
    pub network: Network,
    /// The order the sim's tasks take same-instant work in (`fifo`, `random`, `pct:D`), in the
    /// reference run and every perturbed one.
    #[arg(long, default_value = "fifo")]
    pub schedule: Schedule,
    /// Assume this alternative about GitHub, `NAME=ALT` (repeatable; `arcsim list assumptions`), in the
    /// reference run and every perturbed one (kept in their capsules).
    #[arg(long = "assume", value_name = "NAME=ALT")]
    pub assume: Vec<String>,
    /// Directory the reference run's and the failing runs' capsules are written to (created if missing).
    #[arg(long, default_value = "explore")]
    pub out: PathBuf,
}

/// Explores, writes a capsule per failing run, prints findings and coverage; an error when a run failed.
pub fn run(args: ExploreArgs) -> anyhow::Result<()> {
    let scenario = scenarios::find(&args.scenario).map_err(exit::usage)?;
    let build = args.build.build();
    let assumed = Assumed::parse(args.assume.iter().map(String::as_str))?;
    eprintln!(
        "explore: running seed {}'s fault-free reference, then {} perturbed plans of it",
        args.seed, args.budget
    );
    let found = explore(scenario, build, args.seed, (args.network, args.schedule, &assumed), args.budget)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| exit::usage(format!("cannot create {}: {e}", args.out.display())))?;
    let reference =
        args.out.join(format!("{}-{}-{}-reference.json", args.scenario, args.build.variant, args.seed));
    found.reference.save(&reference)?;
    for (i, finding) in found.findings.iter().enumerate() {
        let path =
            args.out.join(format!("{}-{}-{}-{}.json", args.scenario, args.build.variant, args.seed, i + 1));
        finding.capsule.save(&path)?;
        let mut perturbation = serde_json::to_string(&finding.plan.perturbations)?;
        if !finding.capsule.plan.disruptions.is_empty() {
            perturbation += &format!(" after {}", serde_json::to_string(&finding.capsule.plan.disruptions)?);
        }
        println!(
            "FAIL run {} of {}: {} with {perturbation}",
            finding.run,
            found.runs,
            finding.oracles.join(", ")
        );
        println!("  replay with: {}", Capsule::replay_line(&path));
    }
    print!("{}", coverage(&found));
    println!("  the fault-free reference run: {}", reference.display());
    if !found.findings.is_empty() {
        return Err(exit::found(format!("{} of {} perturbed runs failed", found.findings.len(), found.runs)));
    }
    Ok(())
}

/// The runs, the reference's own failures and the coverage, one line each.
pub fn coverage(found: &Exploration) -> String {
    let mut out = format!("{} perturbed runs, {} failed\n", found.runs, found.findings.len());
    if !found.reference_failures.is_empty() {
        out += &format!(
            "  the unperturbed reference run itself fails {}\n",
            found.reference_failures.join(", ")
        );
    }
    out += &format!(
        "  coverage: {} of {} read points and {} of {} write points perturbed\n",
        found.reads_perturbed, found.reads, found.writes_perturbed, found.writes
    );
    out += &format!(
        "  GitHub coverage: {} of {} assignments delayed and {} of {} requests held ({})\n",
        found.assignments_perturbed,
        found.assignments,
        found.requests_perturbed,
        found.requests,
        crate::explore::github_points::HELD_OPERATIONS.join(", ")
    );
    out += &format!(
        "  workload coverage: an extra job before {} of {} deletes of live runners\n",
        found.runner_deletes_perturbed, found.runner_deletes
    );
    out += &format!(
        "  rollout coverage: a runner-spec change after {} of {} runner creates\n",
        found.runner_creates_perturbed, found.runner_creates
    );
    out
}
