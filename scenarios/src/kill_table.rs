//! The kill table: which oracle must catch each historic bug, in which scenario, within how many seeds.
//! A bug variant that survives its bound fails the sweep, as does the fixed controller failing any seed.
//!
//! A row holds the kill rate measured by `arcsim measure kills` on seeds no test uses; its bound is
//! derived from that rate ([`Rate::kill_bound`]), never chosen. A (variant, scenario) cell may have a
//! row per oracle expected to fire; each row must be met on its own.
//!
//! Rows name their scenario and oracle by value (the scenario and oracle types themselves), so a row
//! cannot name a scenario or oracle that does not exist.

use serde::ser::SerializeStruct;

use crate::oracles::{Oracle, TwinOracle, deletion, equivalence, gate, jobs, pods, registrations, tokens};
use crate::rates::Rate;
use crate::scenario::Scenario;
use crate::scenarios::assign_during_delete::AssignDuringDelete;
use crate::scenarios::equivalence::OptimisationEquivalence;
use crate::scenarios::token_refresh::TokenRefreshRecreation;
use crate::scenarios::watch_lag::WatchLagDuplicateCreate;
use crate::variant::Variant;

/// The judge a row expects: an oracle of single runs, or one that compares a run with its twin.
#[derive(Clone, Copy)]
pub enum Judge {
    /// Judges one run.
    Run(&'static dyn Oracle),
    /// Compares a run with its twin.
    Twin(&'static dyn TwinOracle),
}

impl Judge {
    /// The judge's name, as its violations carry it.
    pub fn name(self) -> &'static str {
        match self {
            Judge::Run(oracle) => oracle.name(),
            Judge::Twin(oracle) => oracle.name(),
        }
    }
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One row: `variant` must fail `oracle` in `scenario` within its first [`Self::within_seeds`] seeds.
#[derive(Clone, Copy)]
pub struct KillExpectation {
    /// The bug variant.
    pub variant: Variant,
    /// The scenario that exposes it.
    pub scenario: &'static dyn Scenario,
    /// The oracle that must report it.
    pub oracle: Judge,
    /// Seeds in which `oracle` reported it, measured.
    pub rate: Rate,
}

impl KillExpectation {
    /// The bound, in seeds of a sweep: derived from the measured rate.
    pub fn within_seeds(&self) -> u32 {
        self.rate.kill_bound().unwrap_or(u32::MAX)
    }
}

impl std::fmt::Debug for KillExpectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KillExpectation")
            .field("variant", &self.variant)
            .field("scenario", &self.scenario.name())
            .field("oracle", &self.oracle)
            .field("rate", &self.rate)
            .finish()
    }
}

impl serde::Serialize for KillExpectation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_struct("KillExpectation", 6)?;
        row.serialize_field("variant", &self.variant)?;
        row.serialize_field("scenario", self.scenario.name())?;
        row.serialize_field("oracle", self.oracle.name())?;
        row.serialize_field("rate", &self.rate)?;
        row.serialize_field("within_seeds", &self.within_seeds())?;
        row.serialize_field("median_seeds_to_kill", &self.rate.median_seeds_to_kill())?;
        row.end()
    }
}

const fn row(
    variant: Variant,
    scenario: &'static dyn Scenario,
    oracle: &'static dyn Oracle,
    (hits, seeds, from): (u32, u32, u64),
) -> KillExpectation {
    KillExpectation { variant, scenario, oracle: Judge::Run(oracle), rate: Rate::measured(hits, seeds, from) }
}

/// Every row. `bug-4647-jobid` has none: in this model a JobID-only runner update is always followed
/// by the listener's runner-set patch (a started job marks the scaler dirty), which wakes the ERS
/// anyway, so dropping the update changes no decision; the equivalence scenario runs it to show that.
pub const KILL_TABLE: &[KillExpectation] = &[
    row(Variant::Bug4201, &WatchLagDuplicateCreate, &pods::NoAlreadyExistsErrors, (0, 0, 0)),
    row(
        Variant::BugSecretsCached,
        &WatchLagDuplicateCreate,
        &registrations::JitConfigOncePerRunner,
        (0, 0, 0),
    ),
    row(Variant::Bug4580Finalizer, &WatchLagDuplicateCreate, &deletion::FinalizersInOneWrite, (0, 0, 0)),
    row(
        Variant::Bug4580ShortCircuit,
        &AssignDuringDelete,
        &registrations::RegistrationRemovedBeforeRunnerGone,
        (0, 0, 0),
    ),
    row(Variant::Bug1087, &TokenRefreshRecreation, &tokens::NoExpiredTokenRegistration, (0, 0, 0)),
    row(Variant::Bug1125, &TokenRefreshRecreation, &jobs::NoJobLostToControllerKill, (0, 0, 0)),
    row(Variant::BugUnlistedRunnerGone, &TokenRefreshRecreation, &jobs::NoJobLostToControllerKill, (0, 0, 0)),
    row(Variant::BugScaleDownNoRemove, &AssignDuringDelete, &deletion::NoBusyRunnerDeleted, (0, 0, 0)),
    row(Variant::Bug3371, &AssignDuringDelete, &gate::ScaleDownOnlyOnPatchZero, (0, 0, 0)),
    row(
        Variant::BugRunningOverwritesTerminal,
        &AssignDuringDelete,
        &deletion::NoRunningWhileDeleting,
        (0, 0, 0),
    ),
    KillExpectation {
        variant: Variant::BugArsPredicateCounts,
        scenario: &OptimisationEquivalence,
        oracle: Judge::Twin(&equivalence::SameCallsAndFinalState),
        rate: Rate::measured(0, 0, 0),
    },
    row(Variant::BugStaleRemovalSnapshot, &AssignDuringDelete, &deletion::NoBusyRunnerDeleted, (0, 0, 0)),
];

/// The rows for `variant` in the scenario named `scenario`.
pub fn expectations(variant: Variant, scenario: &str) -> Vec<&'static KillExpectation> {
    KILL_TABLE.iter().filter(|k| k.variant == variant && k.scenario.name() == scenario).collect()
}

/// How many seeds a sweep must run of `variant` in `scenario` to judge every row: the largest bound.
pub fn cell_bound(variant: Variant, scenario: &str) -> Option<u32> {
    expectations(variant, scenario).iter().map(|k| k.within_seeds()).max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracles;

    #[test]
    fn every_row_names_an_oracle_its_scenario_runs_and_one_row_per_cell() {
        for row in KILL_TABLE {
            let judged = match row.oracle {
                Judge::Run(oracle) => row.scenario.oracles().iter().any(|o| o.name() == oracle.name()),
                Judge::Twin(oracle) => row
                    .scenario
                    .twins(arc_sim::Seed(1), row.variant)
                    .iter()
                    .any(|t| t.oracles.iter().any(|o| o.name() == oracle.name())),
            };
            assert!(judged, "{row:?}: the scenario does not run that oracle");
            assert!(!row.variant.is_fixed() && row.rate.kill_bound().is_some(), "{row:?}");
            let same_row = KILL_TABLE.iter().filter(|k| {
                k.variant == row.variant
                    && k.scenario.name() == row.scenario.name()
                    && k.oracle.name() == row.oracle.name()
            });
            assert_eq!(same_row.count(), 1, "{row:?}");
        }
        let names: Vec<&str> = oracles::all().iter().map(|o| o.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "oracle names are unique: {names:?}");
    }
}
