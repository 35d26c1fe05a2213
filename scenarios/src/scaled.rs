//! A scenario at another size (`--runners N`): every AutoscalingRunnerSet's `maxRunners` is scaled so
//! that the first one's is N (in a legacy world, which has none: its persistent Runners become N
//! copies of the first, named as it is with another number), and the workload's job rate (and job cap,
//! if any) by the same factor, so the runners stay about as busy as in the scenario's own size. The name, oracles and probes are the
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
    /// No AutoscalingRunnerSet with a positive `maxRunners`, and no legacy Runner.
    #[error(
        "--runners: scenario {0} has no AutoscalingRunnerSet with a maxRunners and no legacy Runner to scale"
    )]
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
        base_size(&plan).ok_or(ScaleError::NoScaleSet(scenario.name()))?;
        Ok(Scaled { inner: scenario, runners })
    }

    fn scale(&self, mut plan: WorldPlan) -> WorldPlan {
        let Some(base) = base_size(&plan) else { return plan };
        let factor = f64::from(self.runners) / base as f64;
        if base_max(&plan).is_some() {
            scale_sets(&mut plan, factor);
        } else {
            copy_legacy_runners(&mut plan, self.runners);
        }
        let workload = &mut plan.config.workload;
        workload.arrivals_per_minute *= factor;
        workload.max_jobs = workload.max_jobs.map(|n| (f64::from(n) * factor).round().max(1.0) as u32);
        plan
    }
}

/// Scales every scale set's `maxRunners` (and caps its `minRunners`) by `factor`.
fn scale_sets(plan: &mut WorldPlan, factor: f64) {
    for set in plan.config.objects.iter_mut().filter(|o| is_scale_set(o)) {
        let max = set["spec"]["maxRunners"].as_u64().unwrap_or(0) as f64;
        let scaled = (max * factor).round().max(1.0) as u64;
        set["spec"]["maxRunners"] = scaled.into();
        let min = set["spec"]["minRunners"].as_u64().unwrap_or(0);
        set["spec"]["minRunners"] = min.min(scaled).into();
    }
}

/// Replaces the legacy Runners with `runners` copies of the first, numbered from 0 after its name's
/// prefix (`legacy-runner-3` → `legacy-runner-0` …).
fn copy_legacy_runners(plan: &mut WorldPlan, runners: u32) {
    let objects = &mut plan.config.objects;
    let Some(first) = objects.iter().find(|o| is_legacy_runner(o)).cloned() else { return };
    let name = first["metadata"]["name"].as_str().unwrap_or("runner");
    let prefix = name.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    objects.retain(|o| !is_legacy_runner(o));
    objects.extend((0..runners).map(|i| {
        let mut copy = first.clone();
        copy["metadata"]["name"] = format!("{prefix}{i}").into();
        copy
    }));
}

fn is_legacy_runner(object: &Value) -> bool {
    object["kind"] == "Runner"
}

/// The size `--runners` scales from: the first scale set's `maxRunners`, or the number of legacy
/// Runners.
fn base_size(plan: &WorldPlan) -> Option<u64> {
    let legacy = plan.config.objects.iter().filter(|o| is_legacy_runner(o)).count() as u64;
    base_max(plan).or((legacy > 0).then_some(legacy))
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

    #[test]
    fn runners_copy_a_legacy_worlds_runners_and_scale_its_job_rate() {
        let legacy = scenarios::find("legacy-standard").unwrap();
        let own = legacy.world(Seed(1), Variant::Fixed);
        let scaled = Scaled::new(legacy, 25).unwrap().world(Seed(1), Variant::Fixed);
        let names: Vec<&str> = scaled
            .config
            .objects
            .iter()
            .filter(|o| is_legacy_runner(o))
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!((names.len(), names[0], names[24]), (25, "legacy-runner-0", "legacy-runner-24"));
        let ratio = scaled.config.workload.arrivals_per_minute / own.config.workload.arrivals_per_minute;
        assert!((ratio - 2.5).abs() < 1e-9, "{ratio}");
    }
}
