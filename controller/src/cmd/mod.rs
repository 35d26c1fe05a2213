//! The subcommands of the `arc-controller` binary that need more than a few lines.

pub(crate) mod run;
pub(crate) mod switch_args;
