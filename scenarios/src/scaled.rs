//! A scenario at another size (`--runners N`): every AutoscalingRunnerSet's `maxRunners` is scaled so
//! that the first one's is N, and the workload's job rate (and job cap, if any) by the same factor, so
//! the runners stay about as busy as in the scenario's own size. The name, oracles and probes are the
//! scenario's own; the size is part of the sweep's plan, so shards of one size merge only with each other.

use arc_sim::Seed;
use serde_json::Value;

use crate::reshape::Reshape;
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;

/// `inner` with its scale sets' first maximum at `runners`.
pub struct Scaled<'a> {
    /// The scenario.
    pub inner: &'a dyn Scenario,
    /// The first scale set's maximum.
    pub runners: u32,
}

/// A scenario that `--runners` cannot scale.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScaleError {
    /// No AutoscalingRunnerSet with a positive `maxRunners`.
    #[error("--runners: scenario {0} has no AutoscalingRunnerSet with a maxRunners to scale")]
    NoScaleSet(&'static str),
    /// N is 0.
    #[error("--runners must be at least 1")]
    Zero,
}

impl<'a> Scaled<'a> {
    /// `scenario` at `runners`, or why it cannot be scaled.
    pub fn new(scenario: &'a dyn Scenario, runners: u32) -> Result<Scaled<'a>, ScaleError> {
        if runners == 0 {
            return Err(ScaleError::Zero);
        }
        let plan = scenario.world(Seed(1), Variant::Fixed);
        base_max(&plan).ok_or(ScaleError::NoScaleSet(scenario.name()))?;
        Ok(Scaled { inner: scenario, runners })
    }

    fn scale(&self, mut plan: WorldPlan) -> WorldPlan {
        let Some(base) = base_max(&plan) else { return plan };
        let factor = f64::from(self.runners) / base as f64;
        for set in plan.config.objects.iter_mut().filter(|o| is_scale_set(o)) {
            let max = set["spec"]["maxRunners"].as_u64().unwrap_or(0) as f64;
            let scaled = (max * factor).round().max(1.0) as u64;
            set["spec"]["maxRunners"] = scaled.into();
            let min = set["spec"]["minRunners"].as_u64().unwrap_or(0);
            set["spec"]["minRunners"] = min.min(scaled).into();
        }
        let workload = &mut plan.config.workload;
        workload.arrivals_per_minute *= factor;
        workload.max_jobs = workload.max_jobs.map(|n| (f64::from(n) * factor).round().max(1.0) as u32);
        plan
    }
}

fn is_scale_set(object: &Value) -> bool {
    object["kind"] == "AutoscalingRunnerSet"
}

/// The first scale set's `maxRunners`, if positive.
fn base_max(plan: &WorldPlan) -> Option<u64> {
    let first = plan.config.objects.iter().find(|o| is_scale_set(o))?;
    first["spec"]["maxRunners"].as_u64().filter(|max| *max > 0)
}

impl Reshape for Scaled<'_> {
    fn inner(&self) -> &dyn Scenario {
        self.inner
    }

    fn reshape(&self, _seed: Seed, plan: WorldPlan) -> WorldPlan {
        self.scale(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios;

    #[test]
    fn runners_scale_the_maximum_and_the_job_rate_together() {
        let standard = scenarios::find("standard").unwrap();
        let own = standard.world(Seed(1), Variant::Fixed);
        let scaled = Scaled::new(standard, 100).unwrap().world(Seed(1), Variant::Fixed);
        let set = scaled.config.objects.iter().find(|o| is_scale_set(o)).unwrap();
        assert_eq!(set["spec"]["maxRunners"], 100);
        let ratio = scaled.config.workload.arrivals_per_minute / own.config.workload.arrivals_per_minute;
        assert!((ratio - 10.0).abs() < 1e-9, "{ratio}");
        assert_eq!(Scaled::new(standard, 0).err(), Some(ScaleError::Zero));
    }
}
