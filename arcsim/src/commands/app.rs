//! The `arcsim` command line: its subcommands and their arguments ([`Cli`]), parsed by clap, and
//! [`Cli::execute`], which runs one. The binary (`src/bin/arcsim.rs`) is `Cli::parse().execute()`;
//! tests parse the commands the docs show with the same [`Cli`].

use clap::{Parser, Subcommand};

use super as commands;

/// arcsim: a deterministic simulation harness for an actions-runner-controller re-implementation.
#[derive(Debug, Parser)]
#[command(name = "arcsim", version, about, after_help = commands::exit::SCHEME)]
pub struct Cli {
    #[command(subcommand)]
    /// The subcommand.
    pub command: Command,
}

/// A subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run scenarios × variants × seeds on all cores and print a table (the main job).
    #[command(after_help = commands::exit::SCHEME)]
    Sweep(commands::sweep::SweepArgs),
    /// Merge the JSON files of a sharded sweep (`sweep --shard I/N`) into one sweep's table, JSON and
    /// exit status.
    #[command(after_help = commands::exit::SCHEME)]
    Merge(commands::merge::MergeArgs),
    /// Run one scenario with one variant and one seed, and print its verdict.
    #[command(after_help = commands::exit::SCHEME)]
    Run(commands::run::RunArgs),
    /// Run generated perturbation plans (stale view, intermediate state, unobserved state) over a seed's
    /// fault-free run and report the failures, each as a capsule, and the coverage reached.
    #[command(after_help = commands::exit::SCHEME)]
    Explore(commands::explore::ExploreArgs),
    /// Shrink a failing seed (or capsule) to a 1-minimal failure capsule: fewer faults, disruptions and
    /// jobs, weaker faults, a shorter run, the same oracle failing.
    #[command(after_help = commands::exit::SCHEME)]
    Shrink(commands::shrink::ShrinkArgs),
    /// List the scenarios, variants, oracles, probes and kill rows, and the assumptions about GitHub
    /// (`arcsim list assumptions`: only those, with their evidence).
    #[command(after_help = commands::exit::SCHEME)]
    List(commands::list::ListArgs),
    /// Measure kill rates or probe rates on seeds of your choice (what the bounds derive from).
    #[command(after_help = commands::exit::SCHEME)]
    Measure(commands::measure::MeasureArgs),
    /// Serve the fake Kubernetes API server over TCP (for kubectl).
    #[command(after_help = commands::exit::SCHEME)]
    Apiserver(commands::apiserver::ApiServerArgs),
    /// Serve a staging world on wall-clock time (fake API server and fake GitHub over loopback TCP,
    /// kubelet, a small workload) for a controller started as its own process.
    #[command(after_help = commands::exit::SCHEME)]
    Stage(Box<commands::stage::StageArgs>),
    /// Run a scenario's world to a simulated time, pause it, serve it to kubectl and step it from stdin.
    #[command(after_help = commands::exit::SCHEME)]
    Serve(commands::serve::ServeArgs),
}

impl Cli {
    /// Runs the subcommand.
    pub fn execute(self) -> anyhow::Result<()> {
        match self.command {
            Command::Sweep(args) => commands::sweep::run(args),
            Command::Merge(args) => commands::merge::run(args),
            Command::Run(args) => commands::run::run(args),
            Command::Explore(args) => commands::explore::run(args),
            Command::Shrink(args) => commands::shrink::run(args),
            Command::List(args) => commands::list::run(args),
            Command::Measure(args) => commands::measure::run(args),
            Command::Apiserver(args) => commands::apiserver::run(args),
            Command::Stage(args) => commands::stage::run(*args),
            Command::Serve(args) => commands::serve::run(args),
        }
    }
}
