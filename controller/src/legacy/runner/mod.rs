//! The legacy summerwind Runner controller (ARC-MODEL §7; ARC's `runner_controller.go` at
//! `0b9bef2c`, with `79a31328`'s ephemeral stop): `For(Runner)`, `Owns(Pod)`, one pod per Runner,
//! of the same name.
//!
//! A reconcile runs ARC's steps in ARC's order, each a method below:
//! 1. a deleting Runner: unregister it from GitHub if a token was ever set, then drop the finalizer;
//! 2. add the finalizer (an `Update`);
//! 3. no pod: refresh the registration token if needed (then requeue), create the pod; AlreadyExists
//!    is informer-cache lag, logged at info, no requeue;
//! 4. a pod deleting for longer than the timeout: force-delete it (grace 0), look again in 3 s;
//! 5. a stopped pod: delete an ephemeral Runner, restart a persistent one;
//! 6. refresh the registration token if needed (then requeue);
//! 7. compare the pod's `pod-template-hash` with the desired one (the token counts with #1087); with
//!    `fixes.recreate_crashed_runner_with_stale_token`, while GitHub rations calls (a rate-limit
//!    refusal within the hour), a stale pod whose runner container crashed goes to step 9 at once
//!    and skips the unregistration;
//! 8. at most once per recheck interval, ask ListRunners whether the runner is registered and busy
//!    and decide ([`decision::RegistrationCheck`]);
//! 9. restart: with #1125 unregister first and keep the pod when that fails; then delete the pod,
//!    and the pod's delete event brings the Runner back to step 3.
//!
//! Two choices where ARC relied on its periodic resync: a Runner whose pod is fine is looked at again
//! just after its token expires, and one whose recreation was deferred (listed busy, or unregister
//! failed) after the recheck interval. A pod still deleting is looked at again when its deletion
//! timeout ends.

pub(crate) mod decision;
pub(crate) mod github;
pub(crate) mod scope;

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::DeleteParams;
use kube::runtime::watcher;

use self::decision::{
    CheckVerdict, RegistrationCheck, RestartReason, deferred_check, is_stopped, pod_template_stale,
    runner_container_crashed, runner_container_running,
};
use self::github::{RunnerGitHub, Unregistered};
use self::scope::RunnerScope;
use super::context::LegacyContext;
use super::pod_builder::{runner_pod, runner_pod_template_hash};
use crate::crd::constants::{LEGACY_API_VERSION, RUNNER_FINALIZER};
use crate::crd::{Runner, RunnerStatusRegistration};
use crate::kit::meta::has_finalizer;
use crate::runtime::api::{is_already_exists, is_not_found};
use crate::runtime::controller::{Controller, Reconciler};
use crate::runtime::lazy_copy::{CopyMode, LazyCopy};
use crate::runtime::manager::Manager;
use crate::runtime::metrics::{LEGACY_POD_RECREATIONS_TOTAL, LEGACY_RECREATIONS_DEFERRED_TOTAL};
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::{Outcome, ReconcileError};
use crate::runtime::store::Store;

pub(crate) use crate::kit::error::{Error, Result};

/// The controller's name: its queue, metric label and log field (ARC: `runner-controller`).
pub(crate) const CONTROLLER_NAME: &str = "runner-controller";
/// How long to leave GitHub alone after it answered with its rate limit (ARC: 30 s).
pub(crate) const RATE_LIMIT_RETRY_DELAY: Duration = Duration::from_secs(30);
/// How long to wait after force-deleting a stuck pod (ARC: 3 s).
pub(crate) const FORCE_DELETE_REQUEUE_DELAY: Duration = Duration::from_secs(3);
/// How long to wait before retrying to delete a stopped ephemeral Runner (ARC: 10 s).
pub(crate) const RUNNER_DELETE_RETRY_DELAY: Duration = Duration::from_secs(10);
/// A token counts as expired only once `expiresAt < now`, so look a second after it.
const AFTER_EXPIRY: Duration = Duration::from_secs(1);

/// Reconciles legacy Runners against their pods and GitHub.
pub(crate) struct RunnerReconciler {
    ctx: Arc<LegacyContext>,
    runners: Store<Runner>,
    pods: Store<Pod>,
}

impl std::fmt::Debug for RunnerReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunnerReconciler").field("ctx", &self.ctx).finish_non_exhaustive()
    }
}

/// The Runner controller on `manager`'s shared Runner and Pod informers: `For(Runner)`, `Owns(Pod)`.
/// Add it with [`Manager::add_controller`].
pub(crate) fn runner_controller(
    manager: &mut Manager,
    ctx: Arc<LegacyContext>,
) -> Controller<RunnerReconciler> {
    let runners = manager.informer(ctx.watched::<Runner>(), watcher::Config::default());
    let pods = manager.informer(ctx.watched::<Pod>(), watcher::Config::default());
    let reconciler = Arc::new(RunnerReconciler { ctx, runners: runners.store(), pods: pods.store() });
    Controller::new(CONTROLLER_NAME, reconciler, manager.metrics()).for_resource(&runners).owns(
        &pods,
        LEGACY_API_VERSION,
        "Runner",
        None,
    )
}

/// What the registration check left to do.
enum Checked {
    /// Recreate the pod.
    Restart(RestartReason),
    /// The reconcile is over with this outcome.
    Finished(Outcome),
}

impl Reconciler for RunnerReconciler {
    type Error = Error;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Outcome> {
        let Some(runner) = self.runners.get(key) else { return Ok(Outcome::Done) };
        let scope = match RunnerScope::of(&runner.spec) {
            Ok(scope) => scope,
            Err(problem) => {
                tracing::warn!(runner = %key, %problem, "Failed to validate runner spec; leaving it alone");
                return Ok(Outcome::Done);
            }
        };
        let github = RunnerGitHub::new(&self.ctx, &scope, &key.name);
        if runner.metadata.deletion_timestamp.is_some() {
            return self.process_runner_deletion(key, &runner, &github).await;
        }
        if !has_finalizer(&*runner, RUNNER_FINALIZER) {
            return self.add_finalizer(key, &runner).await;
        }
        let Some(pod) = self.pods.get(key) else {
            return self.process_runner_creation(key, &runner, &github).await;
        };
        if let Some(deleting_since) = &pod.metadata.deletion_timestamp {
            return self.process_pod_deletion(key, deleting_since.0).await;
        }
        self.reconcile_pod(key, &runner, &pod, &github).await
    }
}

impl RunnerReconciler {
    /// Steps 5 to 9 for a Runner whose pod exists and is not deleting.
    async fn reconcile_pod(
        &self,
        key: &ObjectKey,
        runner: &Arc<Runner>,
        pod: &Pod,
        github: &RunnerGitHub<'_>,
    ) -> Result<Outcome> {
        let stopped = is_stopped(pod);
        if stopped && runner.is_ephemeral() {
            return self.delete_stopped_ephemeral_runner(key).await;
        }
        if self.update_registration_token(key, runner, github).await? {
            return Ok(Outcome::Requeue);
        }
        let desired_hash = runner_pod_template_hash(runner, &self.ctx.settings.pod, &self.ctx.switches)?;
        let reason = if stopped {
            RestartReason::Stopped
        } else if self.crashed_with_stale_template(pod, &desired_hash) {
            RestartReason::CrashedWithStaleTemplate
        } else {
            match self.check_registration(key, runner, pod, &desired_hash, github).await? {
                Checked::Restart(reason) => reason,
                Checked::Finished(outcome) => return Ok(outcome),
            }
        };
        self.recreate_pod(key, reason, pod, github).await
    }

    /// Step 1: unregister a Runner that ever had a token, then remove the finalizer.
    async fn process_runner_deletion(
        &self,
        key: &ObjectKey,
        runner: &Arc<Runner>,
        github: &RunnerGitHub<'_>,
    ) -> Result<Outcome> {
        if !has_finalizer(&**runner, RUNNER_FINALIZER) {
            return Ok(Outcome::Done);
        }
        if runner.registration_token().is_empty() {
            tracing::debug!(runner = %key, "Runner was never registered on GitHub");
        } else {
            match github.unregister().await {
                Ok(Unregistered::Removed) => tracing::info!(runner = %key, "Removed runner from GitHub"),
                Ok(Unregistered::AlreadyGone) => {
                    tracing::debug!(runner = %key, "Runner no longer exists on GitHub")
                }
                Err(error) if error.is_rate_limited() => return Ok(self.back_off_rate_limit(key, &error)),
                Err(error) => return Err(error),
            }
        }
        let mut copy = self.copy(runner);
        copy.mutate().metadata.finalizers.get_or_insert_with(Vec::new).retain(|f| f != RUNNER_FINALIZER);
        self.ctx.api.patch_merge::<Runner>(&key.namespace, &key.name, &copy.merge_patch()?).await?;
        Ok(Outcome::Done)
    }

    /// Step 2: add the finalizer with an `Update` (refused with Conflict if the cache is stale).
    async fn add_finalizer(&self, key: &ObjectKey, runner: &Runner) -> Result<Outcome> {
        let mut updated = runner.clone();
        updated.metadata.finalizers.get_or_insert_with(Vec::new).push(RUNNER_FINALIZER.to_string());
        self.ctx.api.replace(&key.namespace, &key.name, &updated).await?;
        Ok(Outcome::Done)
    }

    /// Step 3: a registerable token, then the pod.
    async fn process_runner_creation(
        &self,
        key: &ObjectKey,
        runner: &Arc<Runner>,
        github: &RunnerGitHub<'_>,
    ) -> Result<Outcome> {
        if self.update_registration_token(key, runner, github).await? {
            return Ok(Outcome::Requeue);
        }
        let pod = runner_pod(runner, &self.ctx.settings.pod, &self.ctx.switches)?;
        match self.ctx.api.create(&key.namespace, &pod).await {
            Ok(_) => {
                tracing::info!(runner = %key, "Created runner pod");
                Ok(Outcome::Done)
            }
            Err(error) if is_already_exists(&error) => {
                tracing::info!(
                    runner = %key,
                    "Failed to create pod due to AlreadyExists error. Probably this pod has been already created \
                     in previous reconciliation but is still not in the informer cache. Will retry on pod created."
                );
                Ok(Outcome::Done)
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Step 4: force-delete a pod stuck deleting past the timeout; otherwise look again then.
    async fn process_pod_deletion(&self, key: &ObjectKey, deleting_since: Timestamp) -> Result<Outcome> {
        let now = self.ctx.clock.now();
        let deadline = later(deleting_since, self.ctx.settings.pod_deletion_timeout);
        if now <= deadline {
            return Ok(Outcome::RequeueAfter(wait_until(now, deadline) + AFTER_EXPIRY));
        }
        tracing::info!(
            runner = %key,
            timeout = ?self.ctx.settings.pod_deletion_timeout,
            "Failed to delete pod within the timeout; forcefully deleting it to not get stuck"
        );
        let force = DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() };
        match self.ctx.api.delete::<Pod>(&key.namespace, &key.name, &force).await {
            Ok(_) => Ok(Outcome::RequeueAfter(FORCE_DELETE_REQUEUE_DELAY)),
            Err(error) if is_not_found(&error) => Ok(Outcome::Requeue),
            Err(error) => Err(error.into()),
        }
    }

    /// Step 5 for an ephemeral runner: it is done, so the Runner goes (its deletion unregisters it).
    async fn delete_stopped_ephemeral_runner(&self, key: &ObjectKey) -> Result<Outcome> {
        tracing::debug!(runner = %key, "Ephemeral runner has stopped; marking this runner for deletion");
        match self.ctx.api.delete::<Runner>(&key.namespace, &key.name, &DeleteParams::default()).await {
            Ok(_) => Ok(Outcome::Requeue),
            Err(error) if is_not_found(&error) => Ok(Outcome::Done),
            Err(error) => {
                tracing::warn!(runner = %key, %error, "Retrying to mark this runner for deletion in 10 seconds");
                Ok(Outcome::RequeueAfter(RUNNER_DELETE_RETRY_DELAY))
            }
        }
    }

    /// Steps 3 and 6 (`updateRegistrationToken`): when the token is missing, expired or issued for
    /// another repository, store a fresh one in the status. Returns whether it did.
    async fn update_registration_token(
        &self,
        key: &ObjectKey,
        runner: &Arc<Runner>,
        github: &RunnerGitHub<'_>,
    ) -> Result<bool> {
        if runner.is_registerable(self.ctx.clock.now()) {
            return Ok(false);
        }
        let token = github.registration_token().await.inspect_err(|error| {
            tracing::error!(runner = %key, %error, "Failed to get new registration token");
        })?;
        let spec = &runner.spec;
        let mut copy = self.copy(runner);
        copy.mutate().status.get_or_insert_with(Default::default).registration = RunnerStatusRegistration {
            enterprise: spec.enterprise.clone(),
            organization: spec.organization.clone(),
            repository: spec.repository.clone(),
            labels: spec.labels.clone(),
            token: token.token,
            expires_at: Some(Time(token.expires_at)),
        };
        self.ctx.api.patch_merge_status::<Runner>(&key.namespace, &key.name, &copy.merge_patch()?).await?;
        tracing::info!(runner = %key, config_url = github.config_url(), "Updated registration token");
        Ok(true)
    }

    /// Step 8: the registration check, unless one ran within the interval.
    async fn check_registration(
        &self,
        key: &ObjectKey,
        runner: &Arc<Runner>,
        pod: &Pod,
        desired_hash: &str,
        github: &RunnerGitHub<'_>,
    ) -> Result<Checked> {
        let settings = &self.ctx.settings;
        let now = self.ctx.clock.now();
        let last_check = runner.status.as_ref().and_then(|s| s.last_registration_check_time.as_ref());
        if let Some(wait) =
            deferred_check(last_check.map(|t| t.0), settings.registration_recheck_interval, now)
        {
            tracing::debug!(runner = %key, ?wait, "Skipped registration check: deferred");
            return Ok(Checked::Finished(Outcome::RequeueAfter(wait)));
        }
        let registration = match github.registration().await {
            Ok(registration) => registration,
            Err(error) if error.is_rate_limited() => {
                return Ok(Checked::Finished(self.back_off_rate_limit(key, &error)));
            }
            Err(error) => return Err(error),
        };
        let created = pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
        let check = RegistrationCheck {
            registration,
            template_changed: pod_template_stale(pod, desired_hash),
            registration_timed_out: created.is_some_and(|c| now > later(c, settings.registration_timeout)),
        };
        tracing::debug!(runner = %key, ?check, "Checked runner registration");
        match check.verdict() {
            CheckVerdict::Restart(reason) => Ok(Checked::Restart(reason)),
            CheckVerdict::Recheck => {
                self.record_registration_check(key, runner, now).await.map(Checked::Finished)
            }
            CheckVerdict::Keep => {
                self.mirror_pod_phase(key, runner, pod).await?;
                Ok(Checked::Finished(self.next_look(runner, check.template_changed, now)))
            }
        }
    }

    /// A runner not registered yet (or offline): stamp the check time, look again after the interval.
    async fn record_registration_check(
        &self,
        key: &ObjectKey,
        runner: &Arc<Runner>,
        now: Timestamp,
    ) -> Result<Outcome> {
        let settings = &self.ctx.settings;
        let mut copy = self.copy(runner);
        copy.mutate().status.get_or_insert_with(Default::default).last_registration_check_time =
            Some(Time(now));
        self.ctx.api.patch_merge_status::<Runner>(&key.namespace, &key.name, &copy.merge_patch()?).await?;
        Ok(Outcome::RequeueAfter(
            settings.registration_recheck_interval + settings.registration_recheck_jitter,
        ))
    }

    /// Copies the pod's phase, reason and message into the Runner's status when they differ.
    async fn mirror_pod_phase(&self, key: &ObjectKey, runner: &Arc<Runner>, pod: &Pod) -> Result<()> {
        let pod_status = pod.status.clone().unwrap_or_default();
        let phase = pod_status.phase.unwrap_or_default();
        if runner.status.as_ref().is_some_and(|s| s.phase == phase) {
            return Ok(());
        }
        let mut copy = self.copy(runner);
        let status = copy.mutate().status.get_or_insert_with(Default::default);
        status.phase = phase;
        status.reason = pod_status.reason.unwrap_or_default();
        status.message = pod_status.message.unwrap_or_default();
        self.ctx.api.patch_merge_status::<Runner>(&key.namespace, &key.name, &copy.merge_patch()?).await?;
        Ok(())
    }

    /// When to look at a Runner whose pod stays: after the recheck interval when its recreation is
    /// deferred (the runner is listed busy), otherwise just after its token expires.
    fn next_look(&self, runner: &Runner, recreation_deferred: bool, now: Timestamp) -> Outcome {
        if recreation_deferred {
            return Outcome::RequeueAfter(self.ctx.settings.registration_recheck_interval);
        }
        let expires = runner.status.as_ref().and_then(|s| s.registration.expires_at.as_ref());
        match expires {
            Some(expires) => Outcome::RequeueAfter(wait_until(now, expires.0) + AFTER_EXPIRY),
            None => Outcome::Done,
        }
    }

    /// Whether the pod is recreated without GitHub's word: GitHub rations the controller's calls
    /// (it refused one for its rate limit within the hour), the pod's template is stale and its runner
    /// container has crashed, so it runs no job (`fixes.recreate_crashed_runner_with_stale_token`).
    fn crashed_with_stale_template(&self, pod: &Pod, desired_hash: &str) -> bool {
        self.ctx.switches.fixes.recreate_crashed_runner_with_stale_token
            && self.ctx.rate_limits.rationed(self.ctx.clock.now())
            && pod_template_stale(pod, desired_hash)
            && runner_container_crashed(pod)
    }

    /// Step 9: delete the pod so that it is recreated; with #1125 only once GitHub has removed the
    /// runner (or does not know it), otherwise keep the pod and try again after the interval.
    async fn recreate_pod(
        &self,
        key: &ObjectKey,
        reason: RestartReason,
        pod: &Pod,
        github: &RunnerGitHub<'_>,
    ) -> Result<Outcome> {
        let unasked = reason == RestartReason::CrashedWithStaleTemplate;
        if self.ctx.switches.fixes.unregister_before_recreate && !unasked {
            match github.unregister().await {
                Ok(Unregistered::Removed) => tracing::debug!(runner = %key, "Unregistered runner"),
                Ok(Unregistered::AlreadyGone)
                    if self.ctx.switches.fixes.keep_unlisted_running_runner
                        && runner_container_running(pod) =>
                {
                    tracing::info!(runner = %key, "Runner not listed on GitHub but its container runs; keeping the pod");
                    self.ctx
                        .metrics
                        .inc(LEGACY_RECREATIONS_DEFERRED_TOTAL, &[("reason", "unlisted_running")]);
                    return Ok(Outcome::RequeueAfter(self.ctx.settings.registration_recheck_interval));
                }
                Ok(Unregistered::AlreadyGone) => {
                    tracing::info!(runner = %key, "Runner no longer exists on GitHub")
                }
                Err(error) => {
                    tracing::warn!(runner = %key, %error, "Failed to unregister runner before deleting the pod; keeping the pod");
                    self.ctx.metrics.inc(LEGACY_RECREATIONS_DEFERRED_TOTAL, &[("reason", error.reason())]);
                    return Ok(Outcome::RequeueAfter(self.ctx.settings.registration_recheck_interval));
                }
            }
        }
        match self.ctx.api.delete::<Pod>(&key.namespace, &key.name, &DeleteParams::default()).await {
            Ok(_) => {
                self.ctx.metrics.inc(LEGACY_POD_RECREATIONS_TOTAL, &[("reason", reason.as_str())]);
                tracing::info!(runner = %key, reason = reason.as_str(), "Deleted runner pod");
                Ok(Outcome::Done)
            }
            // A reconcile on a stale pod cache: an earlier one deleted it already.
            Err(error) if is_not_found(&error) => Ok(Outcome::Done),
            Err(error) => Err(error.into()),
        }
    }

    fn back_off_rate_limit(&self, key: &ObjectKey, error: &Error) -> Outcome {
        self.ctx.rate_limits.refused(self.ctx.clock.now());
        tracing::error!(
            runner = %key,
            %error,
            delay = ?RATE_LIMIT_RETRY_DELAY,
            "GitHub API rate limit; retrying later to avoid excessive GitHub API calls"
        );
        Outcome::RequeueAfter(RATE_LIMIT_RETRY_DELAY)
    }

    fn copy(&self, runner: &Arc<Runner>) -> LazyCopy<Runner> {
        LazyCopy::new(Arc::clone(runner), CopyMode::Lazy, &self.ctx.metrics)
    }
}

/// `at + by`, saturating at the end of time.
fn later(at: Timestamp, by: Duration) -> Timestamp {
    let by = SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX);
    at.checked_add(by).unwrap_or(Timestamp::MAX)
}

/// How long from `now` until `then`; zero when `then` has passed.
fn wait_until(now: Timestamp, then: Timestamp) -> Duration {
    Duration::try_from(then.duration_since(now)).unwrap_or(Duration::ZERO)
}
