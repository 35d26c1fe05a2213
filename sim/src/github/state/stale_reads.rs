//! [`ReadViews`]: the service's reads served from a view up to `service_read_staleness_ms` old
//! (assumption `service-reads`; actions/runner #4422 saw the REST view call a runner idle while the
//! broker had it busy). A view is taken on a read when it is older than the staleness, and serves the
//! reads after it until then: the statistics of each scale set (in sessions, messages and
//! GetRunnerScaleSet), and the runners GetRunner and GetRunnerByName find. With the staleness 0 every read is of the state now.
//! Simplification: one view per kind, renewed on read, so a read's age is between 0 and the staleness;
//! the scale set answered to a create, update or find by name carries the statistics now.

use std::collections::BTreeMap;

use super::super::model::Runner;
use super::super::wire::{RunnerReference, Statistics};
use super::World;

/// The views reads are served from.
#[derive(Debug, Default)]
pub(crate) struct ReadViews {
    /// Per scale set: when its statistics were taken, and what they were.
    statistics: BTreeMap<i64, (u64, Statistics)>,
    /// When the runner view was taken, and the live runners then.
    runners: Option<(u64, Vec<RunnerReference>)>,
}

impl World {
    /// Scale set `id`'s statistics as a read sees them.
    pub(crate) fn read_statistics(&mut self, id: i64) -> Statistics {
        let staleness = self.cfg.service_read_staleness_ms;
        if staleness == 0 {
            return self.statistics(id);
        }
        let now = self.now_ms();
        match self.views.statistics.get(&id) {
            Some(&(taken_ms, kept)) if now.saturating_sub(taken_ms) < staleness => kept,
            _ => {
                let fresh = self.statistics(id);
                self.views.statistics.insert(id, (now, fresh));
                fresh
            }
        }
    }

    /// The live runners as a read sees them, in id order.
    pub(crate) fn read_runners(&mut self) -> Vec<RunnerReference> {
        let staleness = self.cfg.service_read_staleness_ms;
        let now = self.now_ms();
        let fresh = |world: &World| world.live_runners().map(reference).collect::<Vec<_>>();
        if staleness == 0 {
            return fresh(self);
        }
        match &self.views.runners {
            Some((taken_ms, kept)) if now.saturating_sub(*taken_ms) < staleness => kept.clone(),
            _ => {
                let runners = fresh(self);
                self.views.runners = Some((now, runners.clone()));
                runners
            }
        }
    }

    fn live_runners(&self) -> impl Iterator<Item = &Runner> {
        self.index.live_runners.iter().map(|id| &self.runners[id])
    }
}

/// What GetRunner answers about `runner`.
pub(crate) fn reference(runner: &Runner) -> RunnerReference {
    RunnerReference {
        id: runner.id,
        name: runner.name.clone(),
        runner_scale_set_id: runner.scale_set_id.unwrap_or(0),
    }
}
