//! The kill table: which oracle must catch each historic bug, in which scenario, within how many seeds.
//! A bug variant that survives its bound fails the sweep, as does the fixed controller failing any seed.

use crate::variant::Variant;

/// One row: `variant` must fail `oracle` in `scenario` within its first `within_seeds` seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct KillExpectation {
    /// The bug variant.
    pub variant: Variant,
    /// The scenario that exposes it.
    pub scenario: &'static str,
    /// The oracle that must report it.
    pub oracle: &'static str,
    /// The bound, in seeds of the sweep.
    pub within_seeds: u32,
}

/// Every row; filled in as scenarios land.
pub const KILL_TABLE: &[KillExpectation] = &[];

/// The expectation for (variant, scenario), if the table has one.
pub fn expectation(variant: Variant, scenario: &str) -> Option<&'static KillExpectation> {
    KILL_TABLE.iter().find(|k| k.variant == variant && k.scenario == scenario)
}
