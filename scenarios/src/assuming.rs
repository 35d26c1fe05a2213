//! A scenario under other assumptions about GitHub (`--assume NAME=ALT`): the scenario's own worlds
//! (and twins) with the chosen alternatives set on the fake GitHub
//! ([`arc_sim::github::assumptions`]). Name, oracles, probes and control are the scenario's own; the
//! choices are part of a sweep's plan and of every replay line.

use arc_sim::Seed;
use arc_sim::github::Assumed;

use crate::reshape::Reshape;
use crate::scenario::{Scenario, WorldPlan};

/// `inner` under `assumed`.
pub struct Assuming<'a> {
    /// The scenario.
    pub inner: &'a dyn Scenario,
    /// The alternatives chosen.
    pub assumed: &'a Assumed,
}

impl<'a> Assuming<'a> {
    /// `inner` under `assumed`.
    pub fn new(inner: &'a dyn Scenario, assumed: &'a Assumed) -> Self {
        Assuming { inner, assumed }
    }
}

impl Reshape for Assuming<'_> {
    fn inner(&self) -> &dyn Scenario {
        self.inner
    }

    fn reshape(&self, _seed: Seed, mut plan: WorldPlan) -> WorldPlan {
        self.assumed.apply(&mut plan.config.github);
        plan
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::github::UnknownRunnerAnswer;

    use super::*;
    use crate::scenarios;
    use crate::variant::Variant;

    #[test]
    fn the_chosen_alternative_reaches_the_world_and_defaults_change_nothing() {
        let scenario = scenarios::find("kubectl-delete-runners").unwrap();
        let assumed = Assumed::parse(["unregistered-runner-removal=refuse-id-zero"]).unwrap();
        let plan = Assuming::new(scenario, &assumed).world(Seed(3), Variant::Fixed);
        assert_eq!(plan.config.github.remove_unknown_runner, UnknownRunnerAnswer::NotFoundForIdZero);
        let defaults = Assumed::defaults();
        let plain = Assuming::new(scenario, &defaults).world(Seed(3), Variant::Fixed);
        assert_eq!(plain.config, scenario.world(Seed(3), Variant::Fixed).config);
    }
}
