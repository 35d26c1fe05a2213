//! `arc-controller`: the controller binary.

use clap::Parser;

/// The actions-runner-controller re-implementation that arcsim tests.
#[derive(Debug, Parser)]
#[command(name = "arc-controller", version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
