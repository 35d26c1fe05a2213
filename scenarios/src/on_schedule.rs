//! A scenario under a schedule (`--schedule random|pct:D`): the scenario's own worlds (and twins) with
//! [`WorldConfig::schedule`](arc_world::WorldConfig) set, so the sim's tasks take same-instant
//! work in a seeded order. Name, oracles, probes and control are the scenario's own; under `fifo`
//! (the default) the worlds are the scenario's, untouched.

use arc_sim::Seed;
use arc_sim::schedule::Schedule;

use crate::reshape::Reshape;
use crate::scenario::{Scenario, WorldPlan};

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

impl Reshape for OnSchedule<'_> {
    fn inner(&self) -> &dyn Scenario {
        self.inner
    }

    fn reshape(&self, _seed: Seed, plan: WorldPlan) -> WorldPlan {
        self.on(plan)
    }
}
