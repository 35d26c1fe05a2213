//! `arcsim`: run the simulated world.

use clap::Parser;

/// arcsim: a deterministic simulation harness for an actions-runner-controller re-implementation.
#[derive(Debug, Parser)]
#[command(name = "arcsim", version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
