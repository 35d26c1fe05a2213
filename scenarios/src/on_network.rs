//! A scenario on another network backend (`--network turmoil`): the scenario's own worlds (and twins)
//! with [`WorldConfig::network`](arc_world::WorldConfig) set. Name, oracles, probes and control
//! are the scenario's own.

use arc_sim::Seed;
use arc_sim::net::Network;

use crate::reshape::Reshape;
use crate::scenario::{Scenario, WorldPlan};

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

impl Reshape for OnNetwork<'_> {
    fn inner(&self) -> &dyn Scenario {
        self.inner
    }

    fn reshape(&self, seed: Seed, plan: WorldPlan) -> WorldPlan {
        self.on(seed, plan)
    }
}
