//! A scenario whose controller and listener clients limit their QPS and burst as ARC's do (20/30 for
//! the manager, 5/10 for a listener; `WorldConfig::client_rate_limits`, off by default): `arcsim run
//! --client-rate-limits`, to see whether a run's verdict holds under ARC's own client limit.

use arc_sim::Seed;

use crate::reshape::Reshape;
use crate::scenario::{Scenario, WorldPlan};

/// `inner` with the controller's client limits on.
pub struct WithClientLimits<'a> {
    /// The scenario.
    pub inner: &'a dyn Scenario,
}

impl Reshape for WithClientLimits<'_> {
    fn inner(&self) -> &dyn Scenario {
        self.inner
    }

    fn reshape(&self, _seed: Seed, mut plan: WorldPlan) -> WorldPlan {
        plan.config.client_rate_limits = true;
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    #[test]
    fn it_turns_the_limits_on_and_nothing_else() {
        let standard = crate::scenarios::find("standard").unwrap();
        let plain = standard.world(Seed(3), Variant::Fixed);
        let limited = WithClientLimits { inner: standard }.world(Seed(3), Variant::Fixed);
        assert!(!plain.config.client_rate_limits && limited.config.client_rate_limits);
        let mut back = limited.config.clone();
        back.client_rate_limits = false;
        assert_eq!(back, plain.config);
    }
}
