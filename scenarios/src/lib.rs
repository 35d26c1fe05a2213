//! # arc-scenarios
//!
//! The catalog: the worlds arcsim builds around the controller, the builds it runs in them, and what
//! each must show. The judges are `arc-judging`'s; running, sweeping and the `arcsim` command are
//! `arcsim`'s.
//!
//! - [`scenario`]: a scenario = a seeded world plan + its oracles + its probe goals; [`scenarios`] holds
//!   them (the race worlds, the field reports, the steady states).
//! - [`variant`]: the fixed controller and one variant per historic bug, per profile.
//! - [`kill_table`]: which oracle must kill each bug variant within how many seeds, derived from the
//!   measured rates in [`kill_rates`] (`scenarios/kill-rates.tsv`).
//! - [`scaled`]: a scenario at another number of runners (`--runners`); [`on_network`]: on another
//!   network backend (`--network`); [`on_schedule`]: under a schedule (`--schedule`); [`assuming`]:
//!   under other assumptions about GitHub (`--assume`); [`client_limits`]: with the controller's client
//!   QPS limits off (`--unlimited-clients`); [`reshape`]: the wrapper they share.
//! - [`names`]: every oracle and probe of the catalog by name, and names read back from a sweep's JSON.
//! - [`verdict`]: everything a sweep reports about one seed, and the command that replays it.

pub mod assuming;
pub mod client_limits;
pub mod kill_rates;
pub mod kill_table;
pub mod names;
pub mod on_network;
pub mod on_schedule;
pub mod reshape;
pub mod scaled;
pub mod scenario;
pub mod scenarios;
pub mod variant;
pub mod verdict;
