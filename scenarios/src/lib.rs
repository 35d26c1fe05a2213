//! # arc-scenarios
//!
//! The worlds arcsim builds around the controller, and the `arcsim` command that runs them.
//!
//! - [`cli`]: argument parsing shared by the subcommands (seeds, fault plans).
//! - [`commands`]: one module per `arcsim` subcommand.

pub mod cli;
pub mod commands;
