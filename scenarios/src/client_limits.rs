//! A scenario whose controller and listener clients do not limit their QPS and burst
//! (`WorldConfig::client_rate_limits` off; every catalog world limits them as ARC's binaries do, 20/30
//! for the manager, 5/10 for a listener): `arcsim run --unlimited-clients`, to see whether a run's
//! verdict needs ARC's limiter raised (`--k8s-client-rate-limiter-qps`) or an idle controller.

use arc_sim::Seed;

use crate::reshape::Reshape;
use crate::scenario::{Scenario, WorldPlan};

/// `inner` with the controller's client limits off.
pub struct WithoutClientLimits<'a> {
    /// The scenario.
    pub inner: &'a dyn Scenario,
}

impl Reshape for WithoutClientLimits<'_> {
    fn inner(&self) -> &dyn Scenario {
        self.inner
    }

    fn reshape(&self, _seed: Seed, mut plan: WorldPlan) -> WorldPlan {
        plan.config.client_rate_limits = false;
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    #[test]
    fn it_turns_the_limits_off_and_nothing_else() {
        let standard = crate::scenarios::find("standard").unwrap();
        let limited = standard.world(Seed(3), Variant::Fixed);
        let unlimited = WithoutClientLimits { inner: standard }.world(Seed(3), Variant::Fixed);
        assert!(limited.config.client_rate_limits && !unlimited.config.client_rate_limits);
        let mut back = unlimited.config.clone();
        back.client_rate_limits = true;
        assert_eq!(back, limited.config);
    }
}
