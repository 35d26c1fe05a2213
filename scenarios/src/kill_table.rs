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

const fn row(
    variant: Variant,
    scenario: &'static str,
    oracle: &'static str,
    within_seeds: u32,
) -> KillExpectation {
    KillExpectation { variant, scenario, oracle, within_seeds }
}

/// Every row. `bug-4647-jobid` has none: in this model a JobID-only runner update is always followed
/// by the listener's runner-set patch (a started job marks the scaler dirty), which wakes the ERS
/// anyway, so dropping the update changes no decision; the equivalence scenario runs it to show that.
pub const KILL_TABLE: &[KillExpectation] = &[
    row(Variant::Bug4201, "watch-lag-duplicate-create", "no-already-exists-reconcile-errors", 3),
    row(Variant::BugSecretsCached, "watch-lag-duplicate-create", "jit-config-once-per-runner", 3),
    row(Variant::Bug4580Finalizer, "watch-lag-duplicate-create", "finalizers-in-one-write", 3),
    row(Variant::Bug1087, "token-refresh-recreation", "no-expired-token-registration", 5),
    row(Variant::Bug1125, "token-refresh-recreation", "no-job-lost-to-controller-kill", 5),
    row(Variant::BugUnlistedRunnerGone, "token-refresh-recreation", "no-job-lost-to-controller-kill", 70),
    row(Variant::BugScaleDownNoRemove, "assign-during-delete", "no-busy-runner-deleted", 5),
    row(Variant::Bug3371, "assign-during-delete", "scale-down-only-on-patch-zero", 3),
    row(Variant::BugRunningOverwritesTerminal, "assign-during-delete", "no-running-while-deleting", 5),
    row(Variant::BugArsPredicateCounts, "optimisation-equivalence", "same-mutating-calls-and-final-state", 3),
    row(Variant::BugStaleRemovalSnapshot, "assign-during-delete", "no-busy-runner-deleted", 10),
];

/// The expectation for (variant, scenario), if the table has one.
pub fn expectation(variant: Variant, scenario: &str) -> Option<&'static KillExpectation> {
    KILL_TABLE.iter().find(|k| k.variant == variant && k.scenario == scenario)
}
