//! The kill table: which oracle must catch each historic bug, in which scenario, within how many seeds.
//! A bug variant that survives its bound fails the sweep, as does the fixed controller failing any seed.
//!
//! Rows name their scenario and oracle by value (the scenario and oracle types themselves), so a row
//! cannot name a scenario or oracle that does not exist.

use serde::ser::SerializeStruct;

use crate::oracles::{Oracle, TwinOracle, deletion, equivalence, gate, jobs, pods, registrations, tokens};
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

/// One row: `variant` must fail `oracle` in `scenario` within its first `within_seeds` seeds.
#[derive(Clone, Copy)]
pub struct KillExpectation {
    /// The bug variant.
    pub variant: Variant,
    /// The scenario that exposes it.
    pub scenario: &'static dyn Scenario,
    /// The oracle that must report it.
    pub oracle: Judge,
    /// The bound, in seeds of the sweep.
    pub within_seeds: u32,
}

impl std::fmt::Debug for KillExpectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KillExpectation")
            .field("variant", &self.variant)
            .field("scenario", &self.scenario.name())
            .field("oracle", &self.oracle)
            .field("within_seeds", &self.within_seeds)
            .finish()
    }
}

impl serde::Serialize for KillExpectation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_struct("KillExpectation", 4)?;
        row.serialize_field("variant", &self.variant)?;
        row.serialize_field("scenario", self.scenario.name())?;
        row.serialize_field("oracle", self.oracle.name())?;
        row.serialize_field("within_seeds", &self.within_seeds)?;
        row.end()
    }
}

const fn row(
    variant: Variant,
    scenario: &'static dyn Scenario,
    oracle: &'static dyn Oracle,
    within_seeds: u32,
) -> KillExpectation {
    KillExpectation { variant, scenario, oracle: Judge::Run(oracle), within_seeds }
}

/// Every row. `bug-4647-jobid` has none: in this model a JobID-only runner update is always followed
/// by the listener's runner-set patch (a started job marks the scaler dirty), which wakes the ERS
/// anyway, so dropping the update changes no decision; the equivalence scenario runs it to show that.
pub const KILL_TABLE: &[KillExpectation] = &[
    row(Variant::Bug4201, &WatchLagDuplicateCreate, &pods::NoAlreadyExistsErrors, 3),
    row(Variant::BugSecretsCached, &WatchLagDuplicateCreate, &registrations::JitConfigOncePerRunner, 3),
    row(Variant::Bug4580Finalizer, &WatchLagDuplicateCreate, &deletion::FinalizersInOneWrite, 3),
    row(
        Variant::Bug4580ShortCircuit,
        &AssignDuringDelete,
        &registrations::RegistrationRemovedBeforeRunnerGone,
        10,
    ),
    row(Variant::Bug1087, &TokenRefreshRecreation, &tokens::NoExpiredTokenRegistration, 5),
    row(Variant::Bug1125, &TokenRefreshRecreation, &jobs::NoJobLostToControllerKill, 5),
    row(Variant::BugUnlistedRunnerGone, &TokenRefreshRecreation, &jobs::NoJobLostToControllerKill, 70),
    row(Variant::BugScaleDownNoRemove, &AssignDuringDelete, &deletion::NoBusyRunnerDeleted, 5),
    row(Variant::Bug3371, &AssignDuringDelete, &gate::ScaleDownOnlyOnPatchZero, 3),
    row(Variant::BugRunningOverwritesTerminal, &AssignDuringDelete, &deletion::NoRunningWhileDeleting, 5),
    KillExpectation {
        variant: Variant::BugArsPredicateCounts,
        scenario: &OptimisationEquivalence,
        oracle: Judge::Twin(&equivalence::SameCallsAndFinalState),
        within_seeds: 3,
    },
    row(Variant::BugStaleRemovalSnapshot, &AssignDuringDelete, &deletion::NoBusyRunnerDeleted, 10),
];

/// The expectation for `variant` in the scenario named `scenario`, if the table has one.
pub fn expectation(variant: Variant, scenario: &str) -> Option<&'static KillExpectation> {
    KILL_TABLE.iter().find(|k| k.variant == variant && k.scenario.name() == scenario)
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
            assert!(!row.variant.is_fixed() && row.within_seeds > 0, "{row:?}");
            let same_cell = KILL_TABLE
                .iter()
                .filter(|k| k.variant == row.variant && k.scenario.name() == row.scenario.name());
            assert_eq!(same_cell.count(), 1, "{row:?}");
        }
        let names: Vec<&str> = oracles::all().iter().map(|o| o.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "oracle names are unique: {names:?}");
    }
}
