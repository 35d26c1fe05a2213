//! Coverage probes: named race windows that a run either hit or did not, derived from the run's
//! record (API traffic, GitHub events, kubelet events, counters), never from the controller. A
//! scenario declares which probes it exists to hit and the minimum share of seeds that must hit each;
//! a sweep in which the window never opened proves nothing.

use std::collections::BTreeMap;

use arc_sim::world::RunRecord;

/// A probe a scenario must hit in at least `min_share` of its seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeGoal {
    /// The probe's name.
    pub probe: &'static str,
    /// Minimum share of seeds, in `[0, 1]`.
    pub min_share: f64,
}

/// A named race window.
pub trait Probe: Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;

    /// One line on the window.
    fn describe(&self) -> &'static str;

    /// How many times the window opened in `run`.
    fn count(&self, run: &RunRecord) -> u32;
}

/// Every probe.
pub fn all() -> Vec<&'static dyn Probe> {
    Vec::new()
}

/// The probes that fired in `run`, with their counts.
pub fn fired(run: &RunRecord) -> BTreeMap<&'static str, u32> {
    all().into_iter().map(|p| (p.name(), p.count(run))).filter(|(_, n)| *n > 0).collect()
}
