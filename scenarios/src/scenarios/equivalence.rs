//! `optimisation-equivalence` (§5.1, §5.3): every seed runs three times: with all optimisations, with
//! the update predicates off, and with lazy copy off. The three runs must make the same successful
//! mutating API calls, object by object, and end in the same state; only no-op reconciles may differ.
//!
//! The world is race 3's (runner refreshes while jobs arrive, scale-downs racing assignment), which is
//! where a reconciler that reads a field outside its predicate's projection behaves differently, but
//! with requests that take no simulated time (API server and GitHub), watches without lag and no
//! client-side QPS limit (a limiter would make a no-op reconcile's reads delay later writes): then a
//! no-op reconcile can shift nothing, and any difference is a decision the optimisation changed.

use arc_sim::Seed;
use arc_sim::apiserver::{LagRange, WatchLag};
use arc_sim::github::ServiceLatency;

use super::assign_during_delete::assign_during_delete_world;
use super::refresh::refreshes_in_controller_form;
use crate::scenario::{Scenario, Twin, WorldPlan, rebased};
use crate::variant::{Build, Variant};
use arc_judging::oracles::{self, Oracle};

/// The equivalence checks.
pub struct OptimisationEquivalence;

/// The race-3 world with requests that take no simulated time, watches without lag, clients without a
/// QPS limit and no GitHub faults.
pub fn quiet_world(seed: Seed, variant: Variant) -> WorldPlan {
    let mut plan = assign_during_delete_world(seed, variant);
    plan.config.apiserver.request_latency = LagRange::fixed(0);
    plan.config.apiserver.watch_lag = WatchLag::default();
    plan.config.apiserver.watch_cache_lag = WatchLag::default();
    plan.config.github.latency = ServiceLatency::ZERO;
    plan.config.faults.github.clear();
    plan.config.client_rate_limits = false;
    plan
}

impl Scenario for OptimisationEquivalence {
    fn name(&self) -> &'static str {
        "optimisation-equivalence"
    }

    fn describe(&self) -> &'static str {
        "predicates on vs off and lazy copy on vs off make the same mutating calls and end alike (§5.1, §5.3)"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        quiet_world(seed, variant)
    }

    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        let mut plan = quiet_world(seed, build.variant);
        plan.config.switches = build.switches();
        refreshes_in_controller_form(&mut plan);
        plan
    }

    fn twins_for(&self, seed: Seed, build: Build) -> Vec<Twin> {
        let base = build.variant.switches(arc_controller::Profile::Arcsim);
        let mut twins = self.twins(seed, build.variant);
        for twin in &mut twins {
            twin.plan.config.switches = rebased(twin.plan.config.switches, base, build.switches());
            refreshes_in_controller_form(&mut twin.plan);
        }
        twins
    }

    fn twins(&self, seed: Seed, variant: Variant) -> Vec<Twin> {
        let mut no_predicates = quiet_world(seed, variant);
        no_predicates.config.switches.optimisations.predicates = false;
        let mut eager = quiet_world(seed, variant);
        eager.config.switches.optimisations.lazy_copy = false;
        vec![
            Twin {
                name: "predicates-off",
                plan: no_predicates,
                oracles: vec![&oracles::equivalence::SameCallsAndFinalState],
            },
            Twin {
                name: "lazy-copy-off",
                plan: eager,
                oracles: vec![&oracles::equivalence::SameCallsAndFinalState],
            },
        ]
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        vec![&oracles::convergence::ConvergesAfterHeal]
    }
}
