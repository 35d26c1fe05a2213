//! `arc-controller`: the controller binary.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The actions-runner-controller re-implementation that arcsim tests.
#[derive(Debug, Parser)]
#[command(name = "arc-controller", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the five CustomResourceDefinitions as multi-document YAML (`kubectl apply -f -`).
    Crds,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Crds) => print_crds(),
        None => ExitCode::SUCCESS,
    }
}

fn print_crds() -> ExitCode {
    match arc_controller::crd::definitions_yaml() {
        Ok(yaml) => {
            print!("{yaml}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("arc-controller: cannot render the CRDs: {err}");
            ExitCode::FAILURE
        }
    }
}
