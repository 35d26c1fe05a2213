//! `arcsim`: run the simulated world.

use std::process::ExitCode;

use arc_scenarios::commands;
use clap::{Parser, Subcommand};

/// A simulated run allocates and frees JSON trees all the time; mimalloc does that in about half the
/// CPU glibc's allocator takes (README, Performance).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// arcsim: a deterministic simulation harness for an actions-runner-controller re-implementation.
#[derive(Debug, Parser)]
#[command(name = "arcsim", version, about, after_help = commands::exit::SCHEME)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
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
    Stage(commands::stage::StageArgs),
    /// Run a scenario's world to a simulated time, pause it, serve it to kubectl and step it from stdin.
    #[command(after_help = commands::exit::SCHEME)]
    Serve(commands::serve::ServeArgs),
}

/// The exit status of a process that wrote to a pipe whose reader had gone (128 + SIGPIPE), as `cat`
/// or `yes` end under `| head`.
const CLOSED_STDOUT_EXIT: i32 = 141;

/// Ends the process quietly when standard output is a pipe its reader closed (`arcsim list | head -2`),
/// instead of the panic `print!` raises. Standard output only: the sockets `serve` and `stage` write to
/// keep Rust's EPIPE errors, which they handle.
fn quiet_on_closed_stdout() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(CLOSED_STDOUT_EXIT);
        }
        default_hook(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_closed_stdout();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sweep(args) => commands::sweep::run(args),
        Command::Merge(args) => commands::merge::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Explore(args) => commands::explore::run(args),
        Command::Shrink(args) => commands::shrink::run(args),
        Command::List(args) => commands::list::run(args),
        Command::Measure(args) => commands::measure::run(args),
        Command::Apiserver(args) => commands::apiserver::run(args),
        Command::Stage(args) => commands::stage::run(args),
        Command::Serve(args) => commands::serve::run(args),
    };
    match result {
        Ok(()) => ExitCode::from(commands::exit::PASSED),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(commands::exit::status_of(&e))
        }
    }
}
