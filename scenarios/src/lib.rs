//! # arc-scenarios
//!
//! The worlds arcsim builds around the controller, the judges of their runs, and the `arcsim` command.
//!
//! - [`scenario`]: a scenario = a seeded world plan + its oracles + its probe goals; [`scenarios`] holds them.
//! - [`variant`]: the fixed controller and one variant per historic bug.
//! - [`oracles`]: named judges of a run's record; [`probes`]: named race windows a run hit or not.
//! - [`runner`]: one (scenario, variant, seed) on its own paused runtime → a [`verdict::Verdict`].
//! - [`sweep`]: many runs on all cores, tallied per scenario × variant; [`kill_table`]: which oracle
//!   must kill each bug variant within how many seeds; [`report`]: tables and pass/fail.
//! - [`cli`]: argument parsing shared by the subcommands; [`commands`]: one module per subcommand.

pub mod cli;
pub mod commands;
pub mod kill_table;
pub mod oracles;
pub mod probes;
pub mod rates;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod scenarios;
pub mod sweep;
pub mod variant;
pub mod verdict;
