//! HandleDesiredRunnerCount's write (ARC-MODEL §4.3 step 5): the [`Scaler`]'s decision sent to the
//! EphemeralRunnerSet as a merge patch on the main resource, `{"spec": {"replicas", "patchID"}}`,
//! with a plain (uncached, unlocked) client call.

use serde_json::{Value, json};

use super::error::ListenerError;
use super::scaler::{DesiredState, Scaler};
use crate::crd::EphemeralRunnerSet;
use crate::runtime::api::KubeApi;

/// The scaler and the EphemeralRunnerSet it scales.
#[derive(Debug, Clone)]
pub struct DesiredCount {
    scaler: Scaler,
    api: KubeApi,
    namespace: String,
    name: String,
}

impl DesiredCount {
    /// Scales `namespace/name` through `api` with `scaler`'s decisions.
    pub fn new(scaler: Scaler, api: KubeApi, namespace: impl Into<String>, name: impl Into<String>) -> Self {
        DesiredCount { scaler, api, namespace: namespace.into(), name: name.into() }
    }

    /// A job event was handled since the last decision.
    pub fn mark_dirty(&mut self) {
        self.scaler.mark_dirty();
    }

    /// The scaler's state, for inspection.
    pub fn scaler(&self) -> &Scaler {
        &self.scaler
    }

    /// HandleDesiredRunnerCount: decides for `total_assigned_jobs` and patches the ERS. Returns what
    /// was asked.
    pub async fn handle(&mut self, total_assigned_jobs: i64) -> Result<DesiredState, ListenerError> {
        let desired = self.scaler.desired_state(total_assigned_jobs);
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
