//! A scenario under a schedule (`--schedule random|pct:D`): the scenario's own worlds (and twins) with
//! [`WorldConfig::schedule`](arc_sim::world::WorldConfig) set, so the sim's tasks take same-instant
//! work in a seeded order. Name, oracles, probes and control are the scenario's own; under `fifo`
//! (the default) the worlds are the scenario's, untouched.

use arc_sim::Seed;
use arc_sim::schedule::Schedule;

use crate::oracles::Oracle;
use crate::probes::ProbeGoal;
use crate::scenario::{Scenario, Twin, WorldPlan};
use crate::variant::{Build, Variant};

/// `inner` under `schedule`.
pub struct OnSchedule<'a> {
    /// The scenario.
    pub inner: &'a dyn Scenario,
    /// The order its worlds' tasks take same-instant work in.
    pub schedule: Schedule,
}

impl<'a> OnSchedule<'a> {
    /// `inner` under `schedule`.
    pub fn new(inner: &'a dyn Scenario, schedule: Schedule) -> Self {
        OnSchedule { inner, schedule }
    }

    fn on(&self, mut plan: WorldPlan) -> WorldPlan {
        if !self.schedule.is_fifo() {
            plan.config.schedule = self.schedule;
        }
        plan
    }
}

impl Scenario for OnSchedule<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn describe(&self) -> &'static str {
        self.inner.describe()
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        self.on(self.inner.world(seed, variant))
    }

    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        self.on(self.inner.world_for(seed, build))
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        self.inner.oracles()
    }

    fn twins(&self, seed: Seed, variant: Variant) -> Vec<Twin> {
        self.inner.twins(seed, variant).into_iter().map(|t| Twin { plan: self.on(t.plan), ..t }).collect()
    }

    fn twins_for(&self, seed: Seed, build: Build) -> Vec<Twin> {
        self.inner.twins_for(seed, build).into_iter().map(|t| Twin { plan: self.on(t.plan), ..t }).collect()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        self.inner.probe_goals()
    }

    fn control(&self) -> Option<&'static dyn Scenario> {
        self.inner.control()
    }

    fn network_faults(&self, seed: Seed) -> Vec<arc_sim::net::NetFault> {
        self.inner.network_faults(seed)
    }
}
