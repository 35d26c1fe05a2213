//! The set's status: ARC's `updateStatus` (phase and counts from the buckets, written only when they
//! differ) and the two \[V\] fields the reconciler keeps with a re-read and an optimistic lock
//! (ARC-MODEL §5.4): the `finishedRunnerCleanupPatchID` marker, written when finished runners are
//! cleaned up and read before every scale-up, and the status patch of the applied revision.
//!
//! The \[V\] change set drops the counts from `updateStatus` (switch `scaling.status_without_counts`);
//! this project's controller keeps them, because ARC's own test ("Should update status on Ephemeral
//! Runner state changes") and the ARS drain (`status.running + status.pending > 0`, §3.3 step 9) read
//! them. Counts and phase go out as a plain merge patch of the changed fields only, so they never
//! overwrite the marker or the applied revision that were written from a fresher read.

use crate::kit::meta::namespace_and_name;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::EphemeralRunnerSetReconciler;
use super::buckets::RunnerBuckets;
use crate::crd::{EphemeralRunnerSet, EphemeralRunnerSetPhase, EphemeralRunnerSetStatus};
use crate::kit::error::{Error, Result};
use crate::runtime::api::is_conflict;
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::metrics::ERS_SCALE_UP_SUPPRESSED_TOTAL;

/// Attempts of [`retry_on_conflict`] (client-go's `retry.DefaultRetry`: 5 steps).
const CONFLICT_RETRY_ATTEMPTS: u32 = 5;
/// Wait between attempts (client-go's 10 ms, without its jitter: the controller draws no randomness).
const CONFLICT_RETRY_WAIT: Duration = Duration::from_millis(10);

impl EphemeralRunnerSetReconciler {
    /// ARC's `updateStatus`: writes phase and counts (the phase only, with
    /// `scaling.status_without_counts`) when they differ from the cached status.
    pub(crate) async fn update_status(
        &self,
        ers: &mut LazyCopy<EphemeralRunnerSet>,
        buckets: &RunnerBuckets,
    ) -> Result<()> {
        let current = ers.get().status.clone().unwrap_or_default();
        let with_counts = !self.ctx.switches.scaling.status_without_counts;
        let desired = desired_status(&current, buckets, with_counts);
        if ers.get().status.as_ref() == Some(&desired) {
            return Ok(());
        }
        ers.mutate().status = Some(desired);
        let patch = ers.merge_patch()?;
        let (namespace, name) = namespace_and_name(ers.get());
        self.ctx.api.patch_merge_status::<EphemeralRunnerSet>(namespace, name, &patch).await?;
        Ok(())
    }

    /// \[V\] Records `finishedRunnerCleanupPatchID = patch_id` on a fresh read of the set, under an
    /// optimistic lock, retried on Conflict. The marker only has to be *equal* to the patch ID later,
    /// so it is written whenever it differs, also backwards.
    pub(crate) async fn record_finished_runner_cleanup(
        &self,
        ers: &EphemeralRunnerSet,
        patch_id: i64,
    ) -> Result<()> {
        let (namespace, name) = namespace_and_name(ers);
        retry_on_conflict(|| async move {
            let Some(latest) = self.ctx.api.get::<EphemeralRunnerSet>(namespace, name).await? else {
                return Ok(());
            };
            let mut status = latest.status.clone().unwrap_or_default();
            status.finished_runner_cleanup_patch_id = patch_id;
            self.patch_status_locked(latest, status).await
        })
        .await
    }

    /// \[V\] Whether a scale-up under `patch_id` must be skipped: the set, read fresh, says its finished
    /// runners were cleaned up under this same non-zero patch, so the gap is not new demand. A set
    /// that is gone suppresses everything.
    pub(crate) async fn scale_up_suppressed(&self, ers: &EphemeralRunnerSet, patch_id: i64) -> Result<bool> {
        let (namespace, name) = namespace_and_name(ers);
        let Some(latest) = self.ctx.api.get::<EphemeralRunnerSet>(namespace, name).await? else {
            return Ok(true);
        };
        let marker = latest.status.as_ref().map_or(0, |s| s.finished_runner_cleanup_patch_id);
        let suppressed = patch_id != 0 && marker == patch_id;
        if suppressed {
            tracing::info!(patch_id, "Scale-up suppressed: the gap comes from cleaning up finished runners");
            let set = format!("{namespace}/{name}");
            self.ctx.metrics.inc(ERS_SCALE_UP_SUPPRESSED_TOTAL, &[("ephemeral_runner_set", &set)]);
        }
        Ok(suppressed)
    }

    /// Writes `status` over `latest` with a status merge patch carrying `latest`'s resourceVersion;
    /// nothing when it is already there.
    pub(crate) async fn patch_status_locked(
        &self,
        latest: EphemeralRunnerSet,
        status: EphemeralRunnerSetStatus,
    ) -> Result<()> {
        if latest.status.clone().unwrap_or_default() == status {
            return Ok(());
        }
        let mut copy = LazyCopy::new(Arc::new(latest), self.ctx.copy_mode(), &self.ctx.metrics);
        copy.mutate().status = Some(status);
        let patch = copy.merge_patch_with_optimistic_lock()?;
        let (namespace, name) = namespace_and_name(copy.get());
        self.ctx.api.patch_merge_status::<EphemeralRunnerSet>(namespace, name, &patch).await?;
        Ok(())
    }
}

/// Phase and (with `with_counts`) counts the buckets call for, the rest of `current` kept: Outdated
/// when a runner is Outdated at the applied revision, Running when no phase was set, otherwise
/// unchanged.
pub(crate) fn desired_status(
    current: &EphemeralRunnerSetStatus,
    buckets: &RunnerBuckets,
    with_counts: bool,
) -> EphemeralRunnerSetStatus {
    let phase = if buckets.outdated.is_empty() {
        current.phase.unwrap_or(EphemeralRunnerSetPhase::Running)
    } else {
        EphemeralRunnerSetPhase::Outdated
    };
    if !with_counts {
        return EphemeralRunnerSetStatus { phase: Some(phase), ..current.clone() };
    }
    let count = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    EphemeralRunnerSetStatus {
        current_replicas: i32::try_from(buckets.scale_total()).unwrap_or(i32::MAX),
        pending_ephemeral_runners: count(buckets.pending.len()),
        running_ephemeral_runners: count(buckets.running.len()),
        failed_ephemeral_runners: count(buckets.failed.len()),
        phase: Some(phase),
        ..current.clone()
    }
}

/// client-go's `retry.RetryOnConflict`: runs `attempt` again after a Conflict, at most
/// [`CONFLICT_RETRY_ATTEMPTS`] times in all; any other result is returned as it is.
pub(crate) async fn retry_on_conflict<F, Fut>(mut attempt: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<()>>,
{
    let mut attempts = 1;
    loop {
        match attempt().await {
            Err(Error::Kube(error)) if is_conflict(&error) && attempts < CONFLICT_RETRY_ATTEMPTS => {
                tracing::debug!(error = %error, attempts, "conflict; re-reading and retrying");
                attempts += 1;
                tokio::time::sleep(CONFLICT_RETRY_WAIT).await;
            }
            result => return result,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use kube::core::Status;

    use super::*;
    use crate::crd::{EphemeralRunner, EphemeralRunnerPhase, EphemeralRunnerStatus};

    fn runner(phase: EphemeralRunnerPhase) -> Arc<EphemeralRunner> {
        let mut runner = EphemeralRunner::new("r", Default::default());
        runner.status = Some(EphemeralRunnerStatus { phase: Some(phase), ..Default::default() });
        Arc::new(runner)
    }

    fn conflict() -> Error {
        Error::Kube(kube::Error::Api(Status::failure("modified", "Conflict").with_code(409).boxed()))
    }

    #[test]
    fn status_counts_follow_the_buckets_and_keep_the_v_fields() {
        use EphemeralRunnerPhase::*;
        let buckets = RunnerBuckets::of([Pending, Running, Running, Failed, Succeeded].map(runner), 0);
        let current = EphemeralRunnerSetStatus {
            applied_actionable_revision: 3,
            finished_runner_cleanup_patch_id: 7,
            ..Default::default()
        };
        let desired = desired_status(&current, &buckets, true);
        assert_eq!(
            desired,
            EphemeralRunnerSetStatus {
                current_replicas: 4,
                pending_ephemeral_runners: 1,
                running_ephemeral_runners: 2,
                failed_ephemeral_runners: 1,
                phase: Some(EphemeralRunnerSetPhase::Running),
                applied_actionable_revision: 3,
                finished_runner_cleanup_patch_id: 7,
            }
        );
    }

    #[test]
    fn an_outdated_runner_makes_the_set_outdated_and_outdated_is_sticky() {
        let outdated = RunnerBuckets::of([runner(EphemeralRunnerPhase::Outdated)], 0);
        let fresh = EphemeralRunnerSetStatus::default();
        assert_eq!(desired_status(&fresh, &outdated, true).phase, Some(EphemeralRunnerSetPhase::Outdated));
        let was_outdated =
            EphemeralRunnerSetStatus { phase: Some(EphemeralRunnerSetPhase::Outdated), ..Default::default() };
        let none = RunnerBuckets::default();
        assert_eq!(desired_status(&was_outdated, &none, true).phase, Some(EphemeralRunnerSetPhase::Outdated));
    }

    #[test]
    fn without_counts_only_the_phase_is_written_and_the_counts_are_left_as_they_were() {
        use EphemeralRunnerPhase::*;
        let buckets = RunnerBuckets::of([Pending, Running, Failed].map(runner), 0);
        let current = EphemeralRunnerSetStatus { current_replicas: 9, ..Default::default() };
        let desired = desired_status(&current, &buckets, false);
        assert_eq!(
            desired,
            EphemeralRunnerSetStatus {
                current_replicas: 9,
                phase: Some(EphemeralRunnerSetPhase::Running),
                ..Default::default()
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn conflicts_are_retried_five_times_in_all_ten_ms_apart() {
        let calls = AtomicU32::new(0);
        let started = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        let result = retry_on_conflict(|| async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(conflict())
        })
        .await;
        assert!(matches!(result, Err(Error::Kube(ref e)) if is_conflict(e)));
        assert_eq!(calls.load(Ordering::SeqCst), 5);
        assert_eq!(started.elapsed(), Duration::from_millis(40));
    }

    #[tokio::test(start_paused = true)]
    async fn a_success_after_a_conflict_ends_the_retries_and_other_errors_are_not_retried() {
        let calls = AtomicU32::new(0);
        let result = retry_on_conflict(|| async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0 => Err(conflict()),
                _ => Ok(()),
            }
        })
        .await;
        assert!(result.is_ok());
        assert_eq!(calls.load(Ordering::SeqCst), 2);

        let other = AtomicU32::new(0);
        let result = retry_on_conflict(|| async {
            other.fetch_add(1, Ordering::SeqCst);
            Err(Error::Other("boom".into()))
        })
        .await;
        assert!(matches!(result, Err(Error::Other(_))));
        assert_eq!(other.load(Ordering::SeqCst), 1);
    }
}
