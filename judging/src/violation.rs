//! [`Violation`]: one thing an oracle found wrong in a run. Oracles are named by `&'static str`; a
//! violation read back from a sweep's JSON gets its name from the catalog of oracles
//! (`arc_scenarios::names::violations`), which this crate does not know.

use serde::Serialize;

/// One thing an oracle found wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The oracle's name.
    pub oracle: &'static str,
    /// Sim ms of the offending event.
    pub at_ms: u64,
    /// The objects involved (`ephemeralrunners arc-runners/x`, `runner 17`, `job 4`…).
    pub objects: Vec<String>,
    /// What is wrong.
    pub message: String,
}
