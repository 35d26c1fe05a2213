//! [`Reshape`]: a scenario that is another one with each world plan reshaped. `--network`
//! ([`OnNetwork`](crate::on_network::OnNetwork)), `--schedule` ([`OnSchedule`](crate::on_schedule::OnSchedule))
//! and `--runners` ([`Scaled`](crate::scaled::Scaled)) each change only the plans (the world's and its
//! twins'), so each implements [`Reshape`] and gets [`Scenario`] from the blanket impl here: name,
//! oracles, probes, control and network faults are the inner scenario's.

use arc_sim::Seed;

use crate::scenario::{Scenario, Twin, WorldPlan};
use crate::variant::{Build, Variant};
use arc_judging::oracles::Oracle;
use arc_judging::probes::ProbeGoal;

/// A scenario that is `inner()` with every plan passed through `reshape`.
pub trait Reshape: Send + Sync {
    /// The scenario reshaped.
    fn inner(&self) -> &dyn Scenario;

    /// The plan for `seed`, reshaped.
    fn reshape(&self, seed: Seed, plan: WorldPlan) -> WorldPlan;
}

impl<T: Reshape> Scenario for T {
    fn name(&self) -> &'static str {
        self.inner().name()
    }

    fn describe(&self) -> &'static str {
        self.inner().describe()
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        self.reshape(seed, self.inner().world(seed, variant))
    }

    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        self.reshape(seed, self.inner().world_for(seed, build))
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        self.inner().oracles()
    }

    fn twins(&self, seed: Seed, variant: Variant) -> Vec<Twin> {
        let twins = self.inner().twins(seed, variant);
        twins.into_iter().map(|t| Twin { plan: self.reshape(seed, t.plan), ..t }).collect()
    }

    fn twins_for(&self, seed: Seed, build: Build) -> Vec<Twin> {
        let twins = self.inner().twins_for(seed, build);
        twins.into_iter().map(|t| Twin { plan: self.reshape(seed, t.plan), ..t }).collect()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        self.inner().probe_goals()
    }

    fn control(&self) -> Option<&'static dyn Scenario> {
        self.inner().control()
    }

    fn network_faults(&self, seed: Seed) -> Vec<arc_sim::net::NetFault> {
        self.inner().network_faults(seed)
    }
}
