//! The ARS's EphemeralRunnerSet (ARC-MODEL §3.3 step 9, #4516, and the \[V\] revision of §5.4):
//! created when missing; retired when it went Outdated under a Running ARS; when the runner spec
//! changed, either drained first (busy runners: delete the listener so no new jobs arrive, look again
//! in 1 s) or patched in place with `spec.actionableRevision` bumped to
//! `max(spec.actionableRevision, status.appliedActionableRevision) + 1`; when only metadata drifted,
//! patched. The Outdated-ARS path (step 6) zeroes it instead.

use std::ops::ControlFlow;
use std::sync::Arc;

use super::{AutoscalingRunnerSetReconciler, CLEANUP_REQUEUE, DRAIN_REQUEUE, Step, patch_object};
use crate::crd::constants::ANNOTATION_INTEGRITY_HASH;
use crate::crd::{
    AutoscalingRunnerSet, AutoscalingRunnerSetPhase, EphemeralRunnerSet, EphemeralRunnerSetPhase,
};
use crate::kit::error::Result;
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::outcome::Outcome;
use crate::scaleset::resource_builder::{annotations_of, labels_of, merge_annotations};

impl AutoscalingRunnerSetReconciler {
    /// Step 9: the runner set as the ARS wants it; continues with the cached runner set once it is.
    pub(super) async fn reconcile_runner_set(
        &self,
        ars: &AutoscalingRunnerSet,
    ) -> Step<Arc<EphemeralRunnerSet>> {
        let Some(current) = self.ephemeral_runner_sets.get(&Self::runner_set_key(ars)) else {
            return self.create_runner_set(ars).await.map(ControlFlow::Break);
        };
        let outdated =
            current.status.as_ref().and_then(|s| s.phase) == Some(EphemeralRunnerSetPhase::Outdated);
        if outdated && super::phase_of(ars) == Some(AutoscalingRunnerSetPhase::Running) {
            return self.retire_outdated_runner_set(ars).await.map(ControlFlow::Break);
        }
        let desired = self.ctx.builder.ephemeral_runner_set(ars)?;
        if integrity_hash(&current) != integrity_hash(&desired) {
            return self.update_runner_spec(ars, &current, &desired).await.map(ControlFlow::Break);
        }
        if self.update_runner_set_metadata(&current, &desired).await? {
            return Ok(ControlFlow::Break(Outcome::Done));
        }
        Ok(ControlFlow::Continue(current))
    }

    async fn create_runner_set(&self, ars: &AutoscalingRunnerSet) -> Result<Outcome> {
        let runner_set = self.ctx.builder.ephemeral_runner_set(ars)?;
        let namespace = runner_set.metadata.namespace.as_deref().unwrap_or_default();
        tracing::info!(%namespace, name = ?runner_set.metadata.name, "creating the EphemeralRunnerSet");
        self.ctx.api.create(namespace, &runner_set).await?;
        Ok(Outcome::Done)
    }

    /// Runners are outdated: stop the listener so no jobs arrive, then delete the runner set so its
    /// runners go. The ARS stays (and keeps its scale set) until its spec changes or it is deleted.
    async fn retire_outdated_runner_set(&self, ars: &AutoscalingRunnerSet) -> Result<Outcome> {
        tracing::info!("EphemeralRunnerSet is outdated; removing the listener and the runner set");
        if !self.cleanup_listener(ars).await? || !self.cleanup_runner_set(ars).await? {
            return Ok(Outcome::RequeueAfter(CLEANUP_REQUEUE));
        }
        Ok(Outcome::Done)
    }

    /// A new runner spec: drain while runners are pending or running, otherwise patch it in place
    /// with the merged labels and annotations and (with `scaling.actionable_revision`) the next
    /// actionable revision.
    async fn update_runner_spec(
        &self,
        ars: &AutoscalingRunnerSet,
        current: &Arc<EphemeralRunnerSet>,
        desired: &EphemeralRunnerSet,
    ) -> Result<Outcome> {
        let status = current.status.clone().unwrap_or_default();
        if status.running_ephemeral_runners + status.pending_ephemeral_runners > 0 {
            tracing::info!("runner spec changed while runners are active; deleting the listener to drain");
            self.cleanup_listener(ars).await?;
            return Ok(Outcome::RequeueAfter(DRAIN_REQUEUE));
        }
        let revision = if self.ctx.switches.scaling.actionable_revision {
            current.next_actionable_revision()
        } else {
            current.spec.actionable_revision
        };
        let mut runner_set = LazyCopy::new(Arc::clone(current), self.ctx.copy_mode(), &self.ctx.metrics);
        let (labels, annotations) = self.merged_metadata(current, desired);
        let live = runner_set.mutate();
        live.spec.ephemeral_runner_spec = desired.spec.ephemeral_runner_spec.clone();
        live.spec.ephemeral_runner_metadata = desired.spec.ephemeral_runner_metadata.clone();
        live.spec.actionable_revision = revision;
        live.metadata.labels = Some(labels);
        live.metadata.annotations = Some(annotations);
        tracing::info!(revision, "updating the EphemeralRunnerSet runner spec in place");
        patch_object(&self.ctx.api, &runner_set).await?;
        Ok(Outcome::Done)
    }

    /// Patches labels, annotations and runner metadata when merging in the desired ones changes
    /// them; true when it wrote (the pass then ends). With `departures.ars_metadata_compare_merged`
    /// off, ARC's comparison of the current maps with the desired ones, which ends the pass after a
    /// no-op patch on every reconcile when the runner set carries a label of its own.
    async fn update_runner_set_metadata(
        &self,
        current: &Arc<EphemeralRunnerSet>,
        desired: &EphemeralRunnerSet,
    ) -> Result<bool> {
        let (labels, annotations) = self.merged_metadata(current, desired);
        let (compared_labels, compared_annotations) =
            if self.ctx.switches.departures.ars_metadata_compare_merged {
                (labels.clone(), annotations.clone())
            } else {
                (labels_of(desired), annotations_of(desired))
            };
        let unchanged = compared_labels == labels_of(current.as_ref())
            && compared_annotations == annotations_of(current.as_ref())
            && current.spec.ephemeral_runner_metadata == desired.spec.ephemeral_runner_metadata;
        if unchanged {
            return Ok(false);
        }
        let mut runner_set = LazyCopy::new(Arc::clone(current), self.ctx.copy_mode(), &self.ctx.metrics);
        let live = runner_set.mutate();
        live.metadata.labels = Some(labels);
        live.metadata.annotations = Some(annotations);
        live.spec.ephemeral_runner_metadata = desired.spec.ephemeral_runner_metadata.clone();
        tracing::info!("updating the EphemeralRunnerSet metadata");
        patch_object(&self.ctx.api, &runner_set).await?;
        Ok(true)
    }

    /// The current labels and annotations with the desired ones merged over them.
    fn merged_metadata(
        &self,
        current: &EphemeralRunnerSet,
        desired: &EphemeralRunnerSet,
    ) -> (std::collections::BTreeMap<String, String>, std::collections::BTreeMap<String, String>) {
        let labels = self.ctx.builder.filter_and_merge_labels(&labels_of(current), &labels_of(desired));
        let annotations = merge_annotations(&annotations_of(current), &annotations_of(desired));
        (labels, annotations)
    }

    /// Step 6: an Outdated ARS stops its listener and asks its runner set for nothing
    /// (`replicas: 0, patchID: 0`), until its spec changes.
    pub(super) async fn switch_off_outdated(&self, ars: &AutoscalingRunnerSet) -> Result<Outcome> {
        tracing::info!("AutoscalingRunnerSet is outdated; removing the listener");
        if !self.cleanup_listener(ars).await? {
            return Ok(Outcome::RequeueAfter(CLEANUP_REQUEUE));
        }
        let Some(current) = self.ephemeral_runner_sets.get(&Self::runner_set_key(ars)) else {
            tracing::info!("no EphemeralRunnerSet for the outdated runner set; waiting for a spec change");
            return Ok(Outcome::Done);
        };
        let idle = current.spec.replicas == 0 && current.spec.patch_id == 0;
        if current.metadata.deletion_timestamp.is_some() || idle {
            return Ok(Outcome::Done);
        }
        let mut runner_set = LazyCopy::new(current, self.ctx.copy_mode(), &self.ctx.metrics);
        let live = runner_set.mutate();
        live.spec.replicas = 0;
        live.spec.patch_id = 0;
        patch_object(&self.ctx.api, &runner_set).await?;
        Ok(Outcome::Done)
    }
}

/// The `actions.github.com/integrity-hash` annotation of a runner set.
fn integrity_hash(runner_set: &EphemeralRunnerSet) -> Option<&str> {
    runner_set.metadata.annotations.as_ref()?.get(ANNOTATION_INTEGRITY_HASH).map(String::as_str)
}
