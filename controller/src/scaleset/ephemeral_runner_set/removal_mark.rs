//! The removal mark (`fixes.delete_removed_runner_first`, arcsim's fix): before the set asks the
//! service to remove a live runner, it writes the runner id on the EphemeralRunner
//! (`actions.github.com/removing-runner-id`), so that a removal is never forgotten halfway.
//!
//! ARC removes the runner at the service and then deletes its EphemeralRunner. When the delete fails
//! (a 429, a 5xx) or the process dies between the two, nothing records the removal: the runner is live
//! in the cluster with no registration behind it, its set counts it against its replicas, and its pod
//! runs on until its runner process gives up (at once on `RunnerNotFound`; 6.6–16.5 minutes while
//! actions/runner retries "registration not found"). With the mark, any pass of any process sees the
//! runner in the `removing` bucket and finishes the removal first: RemoveRunner again (the service
//! answers 204 for a runner it removed already), then the delete. A removal the service refuses
//! (`JobStillRunning`: a job got there first) leaves the mark where it is and the runner stays: a
//! runner with a job is never in the `removing` bucket, and once its job is done it goes as every
//! finished runner does. (Taking the mark off would be a write that wakes the set, whose next pass
//! would ask again at once: a loop for as long as the job's id has not reached the runner's status.)
//! A process also remembers the removals it began ([`super::removals_begun`]), for passes whose cache
//! does not show the mark yet.

use serde_json::json;

use super::EphemeralRunnerSetReconciler;
use super::buckets::RunnerBuckets;
use super::cleanup::{Removal, combine};
use crate::crd::constants::ANNOTATION_REMOVING_RUNNER_ID;
use crate::crd::{EphemeralRunner, EphemeralRunnerSet};
use crate::kit::error::Result;
use crate::runtime::api::is_not_found;
use crate::runtime::object_key::ObjectKey;

impl EphemeralRunnerSetReconciler {
    /// Writes the removal mark for `runner_id` on `runner`; `false` when the runner is gone.
    pub(crate) async fn mark_removal(&self, runner: &EphemeralRunner, runner_id: i64) -> Result<bool> {
        let name = runner.metadata.name.as_deref().unwrap_or_default();
        let namespace = runner.metadata.namespace.as_deref().unwrap_or_default();
        let patch =
            json!({"metadata": {"annotations": {ANNOTATION_REMOVING_RUNNER_ID: runner_id.to_string()}}});
        match self.ctx.api.patch_merge::<EphemeralRunner>(namespace, name, &patch).await {
            Ok(_) => Ok(true),
            Err(error) if is_not_found(&error) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// Finishes every removal begun on the runners of `ers` and not finished (the `removing`
    /// bucket): each is removed at the service again and deleted, or kept if the service says a job
    /// is running on it. Errors are reported after every runner was tried.
    pub(crate) async fn finish_removals(
        &self,
        ers: &EphemeralRunnerSet,
        buckets: &RunnerBuckets,
    ) -> Result<()> {
        if buckets.removing.is_empty() {
            return Ok(());
        }
        let client = self.removal_client(ers).await?;
        let set = ObjectKey::from_resource(ers);
        let mut errors = Vec::new();
        for runner in &buckets.removing {
            tracing::info!(
                runner = runner.metadata.name.as_deref().unwrap_or_default(),
                runner_id = runner.runner_id(),
                "Finishing the removal of an ephemeral runner"
            );
            let removal = self.remove_then_delete(&set, runner, client.as_ref()).await;
            errors.extend(removal.and_then(Removal::into_result).err());
        }
        combine(errors)
    }
}
