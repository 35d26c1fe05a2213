//! Scaling behind the patch-ID gate (ARC-MODEL §3.2 step 8 with the \[V\] changes of §5.4, §9 items
//! 5–6).
//!
//! The set acts on the listener's desired count only when `spec.patchID` is 0 (the listener's
//! "forced" state) or differs from the newest `patch-id` stamped on any of its runners (#3371): once
//! one runner of a patch is visible, the patch has been acted on. When the gate is open:
//! - finished runners are cleaned up first, and the pass ends there (\[V\], #4642; switch
//!   `scaling.cleanup_finished_first`): the set first records the patch ID as
//!   `finishedRunnerCleanupPatchID`, so that the gap the deletion leaves is not mistaken for demand
//!   under that same patch. Upstream before 0.15.0 scales first and deletes the finished runners in a
//!   deferred step of the same pass;
//! - too few runners (`total + deleting < replicas`, deleting runners still holding their
//!   registration; upstream and with `scaling.scale_up_counts_deleting` off, `total < replicas`)
//!   → create the missing ones, unless the fresh marker says the gap is the cleanup's own
//!   (`scaling.suppress_cleanup_scale_up`);
//! - too many on patch 0 → delete idle runners, RemoveRunner first. Scale-down on any other patch is
//!   ignored: runners finish their jobs and go away by themselves.

use std::sync::Arc;

use super::EphemeralRunnerSetReconciler;
use super::buckets::RunnerBuckets;
use super::cleanup::{Removal, combine};
use crate::crd::constants::ANNOTATION_ACTIONABLE_REVISION;
use crate::crd::{EphemeralRunner, EphemeralRunnerSet};
use crate::kit::error::Result;
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::object_key::ObjectKey;
use crate::switches::Switches;

/// What the gate lets through for one reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalingDecision {
    /// The gate is closed, or the count is right.
    Hold,
    /// Clean up the finished runners and stop (\[V\]).
    CleanUpFinished,
    /// Create this many runners.
    ScaleUp(i64),
    /// Delete this many idle runners (patch 0 only).
    ScaleDown(i64),
}

/// The switches the scaling decision reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScalingRules {
    /// `fixes.patch_id_gate` (off: no gate, and scale-down on any patch, as before #3371).
    pub gated: bool,
    /// `scaling.cleanup_finished_first` (off: scale, then delete the finished runners).
    pub cleanup_finished_first: bool,
    /// `scaling.scale_up_counts_deleting` (off: deleting runners do not count against scale-up).
    pub count_deleting: bool,
}

impl ScalingRules {
    /// The rules `switches` set.
    pub(super) fn of(switches: &Switches) -> Self {
        ScalingRules {
            gated: switches.fixes.patch_id_gate,
            cleanup_finished_first: switches.scaling.cleanup_finished_first,
            count_deleting: switches.scaling.scale_up_counts_deleting,
        }
    }
}

/// Whether the patch-ID gate lets `ers`'s current patch through.
pub(crate) fn gate_open(ers: &EphemeralRunnerSet, buckets: &RunnerBuckets, rules: ScalingRules) -> bool {
    let patch_id = ers.spec.patch_id;
    !(rules.gated && patch_id != 0 && patch_id == buckets.latest_patch_id)
}

/// The decision for `ers` with `buckets` under `rules`.
pub(crate) fn decide(
    ers: &EphemeralRunnerSet,
    buckets: &RunnerBuckets,
    rules: ScalingRules,
) -> ScalingDecision {
    let patch_id = ers.spec.patch_id;
    if !gate_open(ers, buckets, rules) {
        return ScalingDecision::Hold;
    }
    if rules.cleanup_finished_first && !buckets.finished.is_empty() {
        return ScalingDecision::CleanUpFinished;
    }
    let replicas = i64::from(ers.spec.replicas);
    let total = buckets.scale_total();
    let present = if rules.count_deleting { total + buckets.deleting_count() } else { total };
    if present < replicas {
        ScalingDecision::ScaleUp(replicas - present)
    } else if (patch_id == 0 || !rules.gated) && total > replicas {
        ScalingDecision::ScaleDown(total - replicas)
    } else {
        ScalingDecision::Hold
    }
}

impl EphemeralRunnerSetReconciler {
    /// \[V\] The finished-runner branch: record the marker, delete the finished runners, update the
    /// status, and leave scaling to the next reconcile (the deletions change the live count).
    pub(crate) async fn clean_up_finished(
        &self,
        ers: &mut LazyCopy<EphemeralRunnerSet>,
        buckets: &RunnerBuckets,
    ) -> Result<()> {
        let patch_id = ers.get().spec.patch_id;
        tracing::info!(patch_id, count = buckets.finished.len(), "Cleaning up finished ephemeral runners");
        self.record_finished_runner_cleanup(ers.get(), patch_id).await?;
        let deleted = self.delete_runners(&buckets.finished).await;
        let status = self.update_status(ers, buckets).await;
        deleted.and(status)
    }

    /// Upstream's deferred cleanup (`scaling.cleanup_finished_first` off): after the scaling step of
    /// an open gate, delete the finished runners; a failure is only logged, as ARC's `defer` does.
    pub(crate) async fn clean_up_finished_deferred(&self, buckets: &RunnerBuckets) {
        if let Err(error) = self.delete_runners(&buckets.finished).await {
            tracing::error!(error = %error, "failed to cleanup finished ephemeral runners");
        }
    }

    /// Creates `count` runners unless the fresh marker suppresses the scale-up (with
    /// `scaling.suppress_cleanup_scale_up`).
    pub(crate) async fn scale_up(&self, ers: &EphemeralRunnerSet, count: i64) -> Result<()> {
        let suppressing = self.ctx.switches.scaling.suppress_cleanup_scale_up;
        if suppressing && self.scale_up_suppressed(ers, ers.spec.patch_id).await? {
            return Ok(());
        }
        tracing::info!(count, replicas = ers.spec.replicas, "Creating new ephemeral runners (scale up)");
        let mut errors = Vec::new();
        for _ in 0..count {
            errors.extend(self.create_runner(ers).await.err());
        }
        combine(errors)
    }

    /// One new runner, built from the set: `generateName`, both finalizers (#4320; before it, and
    /// with either finalizer fix off, none: the ER controller adds them), patch-id and (with
    /// `scaling.actionable_revision`) the revision.
    async fn create_runner(&self, ers: &EphemeralRunnerSet) -> Result<()> {
        let mut runner = self.ctx.builder.ephemeral_runner(ers)?;
        if !self.ctx.switches.fixes.finalizers_at_creation() {
            runner.metadata.finalizers = None;
        }
        if !self.ctx.switches.scaling.actionable_revision
            && let Some(annotations) = runner.metadata.annotations.as_mut()
        {
            annotations.remove(ANNOTATION_ACTIONABLE_REVISION);
        }
        let namespace = ers.metadata.namespace.as_deref().unwrap_or_default();
        let created = self.ctx.api.create(namespace, &runner).await?;
        tracing::info!(
            runner = created.metadata.name.as_deref().unwrap_or_default(),
            "Created new ephemeral runner"
        );
        Ok(())
    }

    /// ARC's `deleteIdleEphemeralRunners`: walks pending then running runners, oldest first, skipping
    /// unregistered ones and ones with a job, and removes each (RemoveRunner first) until `count`
    /// are gone. A runner the service refuses to remove (JobStillRunning) does not count. Nor, in
    /// ARC, does one the service removed whose delete then failed, so the walk removes one more; with
    /// `fixes.delete_removed_runner_first` it counts (its removal mark has the next pass finish it).
    pub(crate) async fn scale_down(
        &self,
        ers: &EphemeralRunnerSet,
        buckets: &RunnerBuckets,
        count: i64,
    ) -> Result<()> {
        let candidates = buckets.scale_down_candidates();
        if count <= 0 || candidates.is_empty() {
            return Ok(());
        }
        tracing::info!(count, "Deleting idle ephemeral runners (scale down)");
        let client = self.removal_client(ers).await?;
        let marked = self.ctx.switches.fixes.delete_removed_runner_first;
        let set = ObjectKey::from_resource(ers);
        let (mut removed, mut errors) = (0, Vec::new());
        for runner in candidates.iter().filter(|runner| may_scale_down(runner)) {
            match self.remove_then_delete(&set, runner, client.as_ref()).await {
                Ok(Removal::Gone) => removed += 1,
                Ok(Removal::Kept) => {}
                Ok(Removal::RemovedNotDeleted(error)) if marked => {
                    removed += 1;
                    errors.push(error);
                }
                Ok(Removal::RemovedNotDeleted(error)) | Err(error) => errors.push(error),
            }
            if removed == count {
                break;
            }
        }
        combine(errors)
    }
}

/// Whether scale-down may take `runner`: a runner that is not done must be registered and have no
/// job.
fn may_scale_down(runner: &Arc<EphemeralRunner>) -> bool {
    let name = runner.metadata.name.as_deref().unwrap_or_default();
    if runner.is_done() {
        return true;
    }
    if runner.runner_id() == 0 {
        tracing::info!(runner = name, "Skipping ephemeral runner since it is not registered yet");
        return false;
    }
    if runner.has_job() {
        tracing::info!(runner = name, "Skipping ephemeral runner since it is running a job");
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::crd::constants::ANNOTATION_PATCH_ID;
    use crate::crd::{EphemeralRunnerPhase, EphemeralRunnerSetSpec, EphemeralRunnerStatus};

    fn set(replicas: i32, patch_id: i64) -> EphemeralRunnerSet {
        EphemeralRunnerSet::new("arc", EphemeralRunnerSetSpec { replicas, patch_id, ..Default::default() })
    }

    fn runner(phase: EphemeralRunnerPhase, patch_id: i64, deleting: bool) -> Arc<EphemeralRunner> {
        let mut runner = EphemeralRunner::new("r", Default::default());
        runner.metadata.annotations =
            Some(BTreeMap::from([(ANNOTATION_PATCH_ID.into(), patch_id.to_string())]));
        if deleting {
            runner.metadata.deletion_timestamp =
                Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH));
        }
        runner.status = Some(EphemeralRunnerStatus { phase: Some(phase), ..Default::default() });
        Arc::new(runner)
    }

    fn buckets(runners: Vec<Arc<EphemeralRunner>>) -> RunnerBuckets {
        RunnerBuckets::of(runners, 0)
    }

    use EphemeralRunnerPhase::{Pending, Running, Succeeded};

    const ARCSIM: ScalingRules =
        ScalingRules { gated: true, cleanup_finished_first: true, count_deleting: true };
    const UPSTREAM: ScalingRules =
        ScalingRules { gated: true, cleanup_finished_first: false, count_deleting: false };
    const UNGATED: ScalingRules = ScalingRules { gated: false, ..ARCSIM };

    #[test]
    fn the_gate_holds_while_the_patch_id_equals_the_newest_child_patch_id() {
        let two = buckets(vec![runner(Pending, 3, false), runner(Running, 3, false)]);
        assert_eq!(decide(&set(5, 3), &two, ARCSIM), ScalingDecision::Hold);
        assert_eq!(decide(&set(5, 4), &two, ARCSIM), ScalingDecision::ScaleUp(3));
        assert_eq!(
            decide(&set(5, 2), &two, ARCSIM),
            ScalingDecision::ScaleUp(3),
            "any other patch id opens it"
        );
    }

    #[test]
    fn patch_id_zero_always_opens_the_gate() {
        let zero_stamped = buckets(vec![runner(Pending, 0, false)]);
        assert_eq!(decide(&set(2, 0), &zero_stamped, ARCSIM), ScalingDecision::ScaleUp(1));
    }

    #[test]
    fn a_deleting_child_still_closes_the_gate_and_counts_against_scale_up() {
        let deleting = buckets(vec![runner(Running, 7, true), runner(Pending, 6, false)]);
        assert_eq!(decide(&set(3, 7), &deleting, ARCSIM), ScalingDecision::Hold);
        assert_eq!(
            decide(&set(3, 8), &deleting, ARCSIM),
            ScalingDecision::ScaleUp(1),
            "one live, one deleting"
        );
        assert_eq!(decide(&set(2, 8), &deleting, ARCSIM), ScalingDecision::Hold);
    }

    #[test]
    fn finished_runners_are_cleaned_up_before_any_scaling() {
        let finished = buckets(vec![runner(Succeeded, 1, false), runner(Running, 1, false)]);
        assert_eq!(decide(&set(4, 2), &finished, ARCSIM), ScalingDecision::CleanUpFinished);
        assert_eq!(
            decide(&set(4, 1), &finished, ARCSIM),
            ScalingDecision::Hold,
            "not while the gate is closed"
        );
    }

    #[test]
    fn scale_down_only_on_patch_zero() {
        let three =
            buckets(vec![runner(Pending, 1, false), runner(Pending, 1, false), runner(Running, 1, false)]);
        assert_eq!(decide(&set(1, 0), &three, ARCSIM), ScalingDecision::ScaleDown(2));
        assert_eq!(decide(&set(1, 2), &three, ARCSIM), ScalingDecision::Hold);
    }

    #[test]
    fn without_the_gate_every_patch_scales_both_ways() {
        let three =
            buckets(vec![runner(Pending, 1, false), runner(Pending, 1, false), runner(Running, 1, false)]);
        assert_eq!(decide(&set(5, 1), &three, UNGATED), ScalingDecision::ScaleUp(2), "same patch id");
        assert_eq!(decide(&set(1, 2), &three, UNGATED), ScalingDecision::ScaleDown(2), "non-zero patch");
    }

    #[test]
    fn upstream_scales_with_finished_runners_present_instead_of_cleaning_them_up_first() {
        let finished = buckets(vec![runner(Succeeded, 1, false), runner(Running, 1, false)]);
        assert_eq!(decide(&set(4, 2), &finished, UPSTREAM), ScalingDecision::ScaleUp(3));
        assert!(gate_open(&set(4, 2), &finished, UPSTREAM));
        assert!(!gate_open(&set(4, 1), &finished, UPSTREAM));
    }

    #[test]
    fn upstream_scale_up_does_not_count_deleting_runners() {
        let deleting = buckets(vec![runner(Running, 7, true), runner(Pending, 6, false)]);
        assert_eq!(decide(&set(2, 8), &deleting, UPSTREAM), ScalingDecision::ScaleUp(1));
        assert_eq!(decide(&set(2, 8), &deleting, ARCSIM), ScalingDecision::Hold);
    }

    #[test]
    fn the_rules_follow_the_switches() {
        assert_eq!(ScalingRules::of(&Switches::default()), ARCSIM);
        assert_eq!(ScalingRules::of(&crate::Profile::Arc0131.switches()), UPSTREAM);
    }
}
