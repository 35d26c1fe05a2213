//! \[V\] Applying a new runner spec (ARC-MODEL §5.4, "ERS step 4 in \[V\]"): the ARS bumps
//! `spec.actionableRevision` with every change of `ephemeralRunnerSpec`, and while it is above
//! `status.appliedActionableRevision` the reconciler cleans up the idle and pending runners (so that
//! their replacements get the new spec), reconciles the proxy secret, and records the revision as
//! applied.
//!
//! The record (`patchAppliedActionableRevisionStatus`) runs under RetryOnConflict on a fresh read of
//! the set and a fresh list of its runners, both straight from the API server. It clears
//! `finishedRunnerCleanupPatchID` (a restarted listener counts patch IDs from 0 again and could hit a
//! stale marker) and re-derives the phase: Outdated only if a runner created for the applied
//! revision or a later one is Outdated, so an Outdated phase caused by an old runner version ends
//! with the new spec. The write carries the read's resourceVersion.

use kube::api::ListParams;

use super::EphemeralRunnerSetReconciler;
use super::annotations::revision_of;
use super::status::retry_on_conflict;
use crate::crd::constants::SCALESET_API_VERSION;
use crate::crd::{EphemeralRunner, EphemeralRunnerPhase, EphemeralRunnerSet, EphemeralRunnerSetPhase};
use crate::kit::error::Result;
use crate::kit::meta::namespace_and_name;
use crate::runtime::controller_ref::{controller_of, refers_to};
use crate::runtime::outcome::Outcome;

impl EphemeralRunnerSetReconciler {
    /// Cleans up for the revision in `ers.spec`, then records it as applied. The status write wakes
    /// the next reconcile, which scales with the new spec.
    pub(crate) async fn apply_actionable_revision(&self, ers: &EphemeralRunnerSet) -> Result<Outcome> {
        let target = ers.spec.actionable_revision;
        tracing::info!(revision = target, "Runner spec changed: cleaning up idle runners to apply it");
        self.clean_up_runners(ers).await?;
        self.reconcile_proxy_secret(ers).await?;
        retry_on_conflict(|| self.patch_applied_actionable_revision(ers, target)).await?;
        Ok(Outcome::Done)
    }

    /// One attempt of `patchAppliedActionableRevisionStatus`. `target` is the revision this reconcile
    /// cleaned up for; a newer one seen in the fresh read is left to the next reconcile.
    async fn patch_applied_actionable_revision(&self, ers: &EphemeralRunnerSet, target: i64) -> Result<()> {
        let (namespace, name) = namespace_and_name(ers);
        let Some(latest) = self.ctx.api.get::<EphemeralRunnerSet>(namespace, name).await? else {
            return Ok(());
        };
        let mut status = latest.status.clone().unwrap_or_default();
        if status.applied_actionable_revision < target {
            status.applied_actionable_revision = target;
            status.finished_runner_cleanup_patch_id = 0;
        }
        let runners = self.list_owned_runners_uncached(namespace, name).await?;
        status.phase = Some(phase_at_revision(&runners, status.applied_actionable_revision));
        self.patch_status_locked(latest, status).await
    }

    /// The set's runners as the API server has them now, picked by controller ownerReference.
    async fn list_owned_runners_uncached(&self, namespace: &str, name: &str) -> Result<Vec<EphemeralRunner>> {
        let listed = self.ctx.api.list::<EphemeralRunner>(namespace, &ListParams::default()).await?;
        let owned = |runner: &EphemeralRunner| {
            controller_of(runner).is_some_and(|owner| {
                refers_to(owner, SCALESET_API_VERSION, super::OWNER_KIND) && owner.name == name
            })
        };
        Ok(listed.items.into_iter().filter(owned).collect())
    }
}

/// Outdated when some runner that is not being deleted is Outdated at `applied` or later; Running
/// otherwise.
pub(crate) fn phase_at_revision(runners: &[EphemeralRunner], applied: i64) -> EphemeralRunnerSetPhase {
    let outdated_now = runners.iter().any(|runner| {
        runner.metadata.deletion_timestamp.is_none()
            && runner.phase() == EphemeralRunnerPhase::Outdated
            && revision_of(runner) >= applied
    });
    if outdated_now { EphemeralRunnerSetPhase::Outdated } else { EphemeralRunnerSetPhase::Running }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::crd::EphemeralRunnerStatus;
    use crate::crd::constants::ANNOTATION_ACTIONABLE_REVISION;

    fn runner(phase: EphemeralRunnerPhase, revision: i64) -> EphemeralRunner {
        let mut runner = EphemeralRunner::new("r", Default::default());
        runner.metadata.annotations =
            Some(BTreeMap::from([(ANNOTATION_ACTIONABLE_REVISION.to_string(), revision.to_string())]));
        runner.status = Some(EphemeralRunnerStatus { phase: Some(phase), ..Default::default() });
        runner
    }

    #[test]
    fn only_an_outdated_runner_at_the_applied_revision_or_later_keeps_the_set_outdated() {
        use EphemeralRunnerPhase::{Outdated, Pending};
        assert_eq!(
            phase_at_revision(&[runner(Outdated, 1), runner(Pending, 2)], 2),
            EphemeralRunnerSetPhase::Running
        );
        assert_eq!(phase_at_revision(&[runner(Outdated, 2)], 2), EphemeralRunnerSetPhase::Outdated);
        assert_eq!(phase_at_revision(&[runner(Outdated, 3)], 2), EphemeralRunnerSetPhase::Outdated);
        assert_eq!(phase_at_revision(&[], 2), EphemeralRunnerSetPhase::Running);
    }

    #[test]
    fn a_deleting_outdated_runner_does_not_keep_the_set_outdated() {
        let mut deleting = runner(EphemeralRunnerPhase::Outdated, 5);
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH));
        assert_eq!(phase_at_revision(&[deleting], 5), EphemeralRunnerSetPhase::Running);
    }
}
