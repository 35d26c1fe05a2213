//! The subcommands of the `arc-controller` binary that need more than a few lines.

pub mod run;
pub mod switch_args;
