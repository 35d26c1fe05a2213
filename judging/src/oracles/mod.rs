//! Oracles: named judges of a finished run, each reporting the sim time and the objects of every
//! violation it finds. They read only the run's record (API audit, GitHub events, kubelet events,
//! metrics, final objects), never the fakes' internals, and are kept apart from the fakes.

pub mod convergence;
pub mod deletion;
pub mod equivalence;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod gate;
pub mod jobs;
pub mod leadership;
pub mod phases;
pub mod pods;
pub mod registrations;
pub mod removals;
pub mod symptoms;
pub mod tokens;

use arc_sim::record::Interest;
use arc_world::RunRecord;

use crate::story::Evidence;
use crate::violation::Violation;

/// A judge of runs.
pub trait Oracle: Send + Sync {
    /// Its name, as violations and the kill table cite it.
    fn name(&self) -> &'static str;

    /// One line on the invariant it checks.
    fn describe(&self) -> &'static str;

    /// The events it reads from the run's record (the run keeps exactly what its judges need).
    fn needs(&self) -> Interest;

    /// Every violation in `run`.
    fn check(&self, run: &RunRecord) -> Vec<Violation>;

    /// Whether this oracle can judge a run before its end: every violation it finds on a record so
    /// far (cut at an instant mid-run, [`RunRecord::before`]) it finds, the same, on the whole run,
    /// because no later event can retract it. Such an oracle can stop a bug variant's run early
    /// (the runner's early answer); one that judges the end state (convergence, what is
    /// left registered) cannot, and says `false` (the default).
    fn judges_so_far(&self) -> bool {
        false
    }

    /// Whether the invariant is one a profile with `switches` promises at all: an oracle of a
    /// change-set property (say, Running only from the listener) does not judge a profile without
    /// that change, but does judge a bug variant that turns it off in a profile that has it. Every
    /// oracle applies unless it says otherwise.
    fn applies(&self, switches: &arc_controller::Switches) -> bool {
        let _ = switches;
        true
    }

    /// What `violation` (one of this oracle's) rests on: its window, its subjects and the events this
    /// oracle used. By default the events of the kinds it reads ([`Oracle::needs`]) on the subjects the
    /// violation names, in the window of their last events; an oracle that knows better says so.
    fn evidence(&self, run: &RunRecord, violation: &Violation) -> Evidence {
        Evidence::around(run, violation, &self.needs())
    }
}

/// A judge of two runs of the same seed that should behave alike.
pub trait TwinOracle: Send + Sync {
    /// Its name.
    fn name(&self) -> &'static str;

    /// One line on what must agree.
    fn describe(&self) -> &'static str;

    /// The events it reads from both runs' records.
    fn needs(&self) -> Interest;

    /// Every difference between `base` and `twin` that matters.
    fn compare(&self, base: &RunRecord, twin: &RunRecord) -> Vec<Violation>;
}
