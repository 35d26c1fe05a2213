//! # arc-scenarios
//!
//! The worlds arcsim builds around the controller, the judges of their runs, and the `arcsim` command.
//!
//! - [`scenario`]: a scenario = a seeded world plan + its oracles + its probe goals; [`scenarios`] holds them.
//! - [`variant`]: the fixed controller and one variant per historic bug.
//! - [`oracles`]: named judges of a run's record; [`probes`]: named race windows a run hit or not;
//!   [`probe_hits`]: where a probe first fired.
//! - [`runner`]: one (scenario, variant, seed) on its own paused runtime → a [`verdict::Verdict`];
//!   [`scaled`]: a scenario at another number of runners (`--runners`); [`on_network`]: on another
//!   network backend (`--network`); [`on_schedule`]: under a schedule (`--schedule`).
//! - [`sweep`]: many runs on all cores, tallied per scenario × variant ([`tally`], from each seed's
//!   [`seed_result`]); [`shard`]: a deterministic share of a sweep, and [`merge`]: shards back into
//!   one sweep (by the [`plan_record`] each file carries, [`names`] read back); [`kill_table`]: which
//!   oracle must kill each bug variant within how many seeds; [`report`]: tables and pass/fail;
//!   [`review`]: one run as a reviewer reads it (the canonical-trace snapshots).
//! - [`story`]: what a violation is about and the events that led to it; [`visual`]: the run as a
//!   timeline page (HTML) and as a Mermaid sequence diagram.
//! - [`serve`]: a world paused at a simulated instant, served to kubectl and stepped on from stdin.
//! - [`capsule`]: one failing run as data, replayed by `arcsim run --capsule`; [`shrink`]: a failing
//!   capsule cut down to what its failure needs (`arcsim shrink`).
//! - [`explore`]: generated perturbation plans (stale view, intermediate state, unobserved state) over a
//!   seed's fault-free run (`arcsim explore`).
//! - [`cli`]: argument parsing shared by the subcommands; [`commands`]: one module per subcommand.

pub mod assuming;
pub mod capsule;
pub mod cli;
pub mod commands;
pub mod coverage;
pub mod explore;
pub mod failure_story;
pub mod kill_rates;
pub mod kill_table;
pub mod merge;
pub mod names;
pub mod on_network;
pub mod on_schedule;
pub mod oracles;
pub mod plan_record;
pub mod probe_hits;
pub mod probes;
pub mod rates;
pub mod report;
pub mod reshape;
pub mod review;
pub mod runner;
pub mod scaled;
pub mod scenario;
pub mod scenarios;
pub mod seed_result;
pub mod serve;
pub mod shard;
pub mod shrink;
pub mod story;
pub mod sweep;
pub mod sweep_plan;
pub mod tally;
pub mod variant;
pub mod verdict;
pub mod view;
pub mod visual;
