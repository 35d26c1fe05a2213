//! Oracles: named judges of a finished run, each reporting the sim time and the objects of every
//! violation it finds. They read only the run's record (API audit, GitHub events, kubelet events,
//! metrics, final objects), never the fakes' internals, and are kept apart from the fakes.

pub mod convergence;
pub mod jobs;
pub mod phases;
pub mod pods;
pub mod registrations;
pub mod tokens;
pub mod view;

use arc_sim::world::RunRecord;

use crate::verdict::Violation;

/// A judge of runs.
pub trait Oracle: Send + Sync {
    /// Its name, as violations and the kill table cite it.
    fn name(&self) -> &'static str;

    /// One line on the invariant it checks.
    fn describe(&self) -> &'static str;

    /// Every violation in `run`.
    fn check(&self, run: &RunRecord) -> Vec<Violation>;
}

/// Every oracle, for `arcsim list`.
pub fn all() -> Vec<&'static dyn Oracle> {
    vec![
        &jobs::NoJobLostToControllerKill,
        &convergence::NoJobLost,
        &registrations::NoOrphanRegistration,
        &registrations::JitConfigOncePerRunner,
        &pods::PodOwnedByItsRunner,
        &pods::NoAlreadyExistsErrors,
        &pods::BoundedPodCreates,
        &tokens::NoExpiredTokenRegistration,
        &phases::TerminalPhaseIsFinal,
        &phases::RunningOnlyAfterJobStarted,
        &convergence::ConvergesAfterHeal,
    ]
}
