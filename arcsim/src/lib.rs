//! # arcsim
//!
//! The `arcsim` command and what it does with the catalog (`arc-scenarios`) and the judges
//! (`arc-judging`): run one world, sweep many, shard and merge, report, replay and shrink a failure,
//! explore perturbations, draw a run, serve a paused world to kubectl.
//!
//! - [`runner`]: one (scenario, variant, seed) on its own paused runtime → a verdict;
//!   [`failure_story`]: a failure as `arcsim run` tells it.
//! - [`sweep`]: many runs on all cores, tallied per scenario × variant ([`tally`], from each seed's
//!   [`seed_result`]; [`sweep_plan`]: what it runs); [`shard`]: a deterministic share of a sweep, and
//!   [`merge`]: shards back into one sweep (by the [`plan_record`] each file carries); [`coverage`]:
//!   which probes a sweep's seeds hit; [`report`]: tables and pass/fail; [`review`]: one run as a
//!   reviewer reads it (the canonical-trace snapshots).
//! - [`visual`]: the run as a timeline page (HTML) and as a Mermaid sequence diagram.
//! - [`serve`]: a world paused at a simulated instant, served to kubectl and stepped on from stdin.
//! - [`capsule`]: one failing run as data, replayed by `arcsim run --capsule`; [`shrink`]: a failing
//!   capsule cut down to what its failure needs (`arcsim shrink`).
//! - [`explore`]: generated perturbation plans (stale view, intermediate state, unobserved state) over a
//!   seed's fault-free run (`arcsim explore`).
//! - [`cli`]: argument parsing shared by the subcommands; [`commands`]: one module per subcommand.

pub mod capsule;
pub mod cli;
pub mod commands;
pub mod coverage;
pub mod explore;
pub mod failure_story;
pub mod merge;
pub mod plan_record;
pub mod report;
pub mod review;
pub mod runner;
pub mod seed_result;
pub mod serve;
pub mod shard;
pub mod shrink;
pub mod sweep;
pub mod sweep_plan;
pub mod tally;
pub mod visual;
