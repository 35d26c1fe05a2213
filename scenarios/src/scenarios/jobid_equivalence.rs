//! `jobid-predicate-equivalence` (#4647's review, `452febd4`): does leaving `status.jobId` out of the
//! ERS←ER update predicate change a decision? Every seed runs twice: as is (predicates on) and with
//! `fixes.predicate_includes_job_id` flipped, in the quiet race-3 world of `optimisation-equivalence`, but with the
//! EphemeralRunner watch lagging 0.2–2 s behind the API server and with the Running phase taken from
//! the pod (`optimisations.running_from_listener` off), so that a JobStarted write changes only the
//! job fields of a runner whose phase is already Running — the one update the JobID-less predicate
//! drops. The two runs must make the same mutating calls and end alike.
//!
//! The variant `bug-4647-jobid` runs it with the JobID left out. A predicate only decides whether an
//! update enqueues a reconcile; every reconcile reads the cache, which has the JobID either way; and
//! the ERS reads `HasJob()` only to *skip* a runner, so a JobID can never be what calls for an action.

use arc_sim::Seed;
use arc_sim::apiserver::LagRange;

use super::equivalence::quiet_world;
use super::refresh::refreshes_in_controller_form;
use crate::scenario::{Scenario, Twin, WorldPlan};
use crate::variant::{Build, Variant};
use arc_judging::oracles::{self, Oracle};

/// The JobID predicate under watch lag, with Running from the pod.
pub struct JobIdPredicateEquivalence;

/// The world: quiet race 3, a lagging runner watch, Running from the pod, switches of `build`.
fn lagged_world(seed: Seed, build: Build) -> WorldPlan {
    let mut plan = quiet_world(seed, build.variant);
    plan.config
        .apiserver
        .watch_lag
        .per_resource
        .insert("ephemeralrunners".into(), LagRange::between(200, 2_000));
    plan.config.switches = build.switches();
    plan.config.switches.optimisations.running_from_listener = false;
    refreshes_in_controller_form(&mut plan);
    plan
}

impl Scenario for JobIdPredicateEquivalence {
    fn name(&self) -> &'static str {
        "jobid-predicate-equivalence"
    }

    fn describe(&self) -> &'static str {
        "predicates on vs off under a lagging runner watch, Running from the pod (#4647's JobID)"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        lagged_world(seed, Build::arcsim(variant))
    }

    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        lagged_world(seed, build)
    }

    fn twins(&self, seed: Seed, variant: Variant) -> Vec<Twin> {
        self.twins_for(seed, Build::arcsim(variant))
    }

    fn twins_for(&self, seed: Seed, build: Build) -> Vec<Twin> {
        let mut flipped = lagged_world(seed, build);
        let job_id = &mut flipped.config.switches.fixes.predicate_includes_job_id;
        *job_id = !*job_id;
        vec![Twin {
            name: "jobid-predicate-flipped",
            plan: flipped,
            oracles: vec![&oracles::equivalence::SameCallsAndFinalState],
        }]
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        vec![&oracles::convergence::ConvergesAfterHeal]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_world_lags_the_runner_watch_and_takes_running_from_the_pod() {
        let plan = JobIdPredicateEquivalence.world(Seed(1), Variant::Bug4647JobId);
        assert!(!plan.config.switches.optimisations.running_from_listener);
        assert!(!plan.config.switches.fixes.predicate_includes_job_id);
        assert!(plan.config.switches.optimisations.predicates);
        let twins = JobIdPredicateEquivalence.twins(Seed(1), Variant::Fixed);
        assert_eq!(twins.len(), 1);
        assert!(twins[0].plan.config.switches.optimisations.predicates);
        assert!(!twins[0].plan.config.switches.fixes.predicate_includes_job_id);
        assert!(!twins[0].plan.config.switches.optimisations.running_from_listener);
    }
}
