//! # arc-judging
//!
//! The judges of a run: what they read and what they say. They read a run's record (the events the
//! fakes emitted), never the controller's code or state, and know nothing of the scenarios that use
//! them (the catalog, `arc-scenarios`, gives each scenario its judges).
//!
//! - [`oracles`]: named invariants of a run's record, each reporting [`violation::Violation`]s, and
//!   twin oracles comparing two runs.
//! - [`probes`]: named race windows a run hit or not; [`probe_hits`]: where a probe first fired.
//! - [`view`]: the record readers oracles and probes share; [`pauses`]: the controller processes
//!   stopped and when (time a promptness deadline does not count); [`story`]: what a violation is about and the
//!   events that led to it (the evidence an oracle gives).
//! - [`rates`]: measured rates and the bounds derived from them (kill rows, probe floors and
//!   ceilings).

pub mod oracles;
pub mod pauses;
pub mod probe_hits;
pub mod probes;
pub mod rates;
pub mod story;
pub mod view;
pub mod violation;

pub use violation::Violation;
