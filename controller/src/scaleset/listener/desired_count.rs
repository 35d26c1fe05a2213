//! HandleDesiredRunnerCount's write (ARC-MODEL §4.3 step 5): the scaler's decision sent to the
//! EphemeralRunnerSet as a merge patch on the main resource, `{"spec": {"replicas", "patchID"}}`,
//! with a plain (uncached, unlocked) client call. The decision is the \[SS\] [`Scaler`]'s, or the
//! 0.13 [`WorkerScaler`]'s when the `releases.scaleset_listener` switch is off.

use serde_json::{Value, json};

use super::error::ListenerError;
use super::scaler::{DesiredState, Scaler};
use super::worker_scaler::WorkerScaler;
use crate::crd::EphemeralRunnerSet;
use crate::runtime::api::KubeApi;

/// Which listener decides the desired count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decider {
    /// `actions/scaleset`'s scaler (0.14.0 on): a dirty flag set by job events.
    ScaleSet(Scaler),
    /// `ghalistener`'s worker (0.13): empty batches and completion counts.
    Worker(WorkerScaler),
}

impl Decider {
    /// The decider of the listener the switch selects, between `min_runners` and `max_runners`.
    pub fn new(scaleset_listener: bool, min_runners: i32, max_runners: i32) -> Self {
        if scaleset_listener {
            Decider::ScaleSet(Scaler::new(min_runners, max_runners))
        } else {
            Decider::Worker(WorkerScaler::new(min_runners, max_runners))
        }
    }

    fn decide(&mut self, total_assigned_jobs: i64, jobs_completed: usize) -> DesiredState {
        match self {
            Decider::ScaleSet(scaler) => scaler.desired_state(total_assigned_jobs),
            Decider::Worker(worker) => worker.desired_state(total_assigned_jobs, jobs_completed),
        }
    }
}

/// The decider and the EphemeralRunnerSet it scales.
#[derive(Debug, Clone)]
pub struct DesiredCount {
    decider: Decider,
    api: KubeApi,
    namespace: String,
    name: String,
}

impl DesiredCount {
    /// Scales `namespace/name` through `api` with `decider`'s decisions.
    pub fn new(
        decider: Decider,
        api: KubeApi,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        DesiredCount { decider, api, namespace: namespace.into(), name: name.into() }
    }

    /// A job event was handled since the last decision (the \[SS\] scaler's dirty flag; the 0.13
    /// worker counts completions instead).
    pub fn mark_dirty(&mut self) {
        if let Decider::ScaleSet(scaler) = &mut self.decider {
            scaler.mark_dirty();
        }
    }

    /// Whether this is the 0.13 worker.
    pub fn is_worker(&self) -> bool {
        matches!(self.decider, Decider::Worker(_))
    }

    /// HandleDesiredRunnerCount: decides for `total_assigned_jobs` (and, for the 0.13 worker,
    /// `jobs_completed` in the message) and patches the ERS. Returns what was asked.
    pub async fn handle(
        &mut self,
        total_assigned_jobs: i64,
        jobs_completed: usize,
    ) -> Result<DesiredState, ListenerError> {
        let desired = self.decider.decide(total_assigned_jobs, jobs_completed);
        tracing::info!(
            assigned_jobs = total_assigned_jobs,
            replicas = desired.replicas,
            patch_id = desired.patch_id,
            runner_set = %format!("{}/{}", self.namespace, self.name),
            "scaling the runner set"
        );
        self.api
            .patch_merge::<EphemeralRunnerSet>(&self.namespace, &self.name, &runner_set_patch(desired))
            .await
            .map_err(|source| ListenerError::PatchRunnerSet {
                namespace: self.namespace.clone(),
                name: self.name.clone(),
                source,
            })?;
        Ok(desired)
    }
}

/// The ERS merge patch for `desired`.
pub fn runner_set_patch(desired: DesiredState) -> Value {
    json!({"spec": {"replicas": desired.replicas, "patchID": desired.patch_id}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_sets_replicas_and_patch_id_even_when_zero() {
        let patch = runner_set_patch(DesiredState { replicas: 0, patch_id: 0 });
        assert_eq!(patch, json!({"spec": {"replicas": 0, "patchID": 0}}));
        let patch = runner_set_patch(DesiredState { replicas: 3, patch_id: 12 });
        assert_eq!(patch, json!({"spec": {"replicas": 3, "patchID": 12}}));
    }
}
