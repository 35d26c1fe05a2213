//! A scenario on another network backend (`--network turmoil`): the scenario's own worlds (and twins)
//! with [`WorldConfig::network`](arc_sim::world::WorldConfig) set. Name, oracles, probes and control
//! are the scenario's own.

use arc_sim::Seed;
use arc_sim::net::Network;

use crate::oracles::Oracle;
use crate::probes::ProbeGoal;
use crate::scenario::{Scenario, Twin, WorldPlan};
use crate::variant::{Build, Variant};

/// `inner` on `network`.
pub struct OnNetwork<'a> {
    /// The scenario.
    pub inner: &'a dyn Scenario,
    /// The backend its worlds run on.
    pub network: Network,
}

impl<'a> OnNetwork<'a> {
    /// `inner` on `network`.
    pub fn new(inner: &'a dyn Scenario, network: Network) -> Self {
        OnNetwork { inner, network }
    }

    /// `plan` on turmoil, with the network faults the scenario adds there, when asked; `in-process`
    /// keeps the scenario's own network (a scenario whose faults are network faults runs on turmoil
    /// whatever the flag).
    fn on(&self, seed: Seed, mut plan: WorldPlan) -> WorldPlan {
        if self.network == Network::Turmoil {
            plan.config.network = Network::Turmoil;
            plan.config.faults.network.extend(self.inner.network_faults(seed));
        }
        plan
    }
}

impl Scenario for OnNetwork<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn describe(&self) -> &'static str {
        self.inner.describe()
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        self.on(seed, self.inner.world(seed, variant))
    }

    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        self.on(seed, self.inner.world_for(seed, build))
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        self.inner.oracles()
    }

    fn twins(&self, seed: Seed, variant: Variant) -> Vec<Twin> {
        self.inner
            .twins(seed, variant)
            .into_iter()
            .map(|t| Twin { plan: self.on(seed, t.plan), ..t })
            .collect()
    }

    fn twins_for(&self, seed: Seed, build: Build) -> Vec<Twin> {
        self.inner
            .twins_for(seed, build)
            .into_iter()
            .map(|t| Twin { plan: self.on(seed, t.plan), ..t })
            .collect()
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
