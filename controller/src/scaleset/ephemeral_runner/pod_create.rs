//! Steps 6–7 of ARC-MODEL §3.1: the failure limit, the failure backoff, and creating the runner pod
//! when the cache has none.
//!
//! What a failed create means is decided by [`classify_create_failure`]:
//!
//! | create answer | action |
//! |---|---|
//! | AlreadyExists | the cache lags the pod's ADD event: with #4201 an info log and `RequeueAfter(5s)`; before it, an error |
//! | Invalid | `markAsFailed(InvalidPod)` |
//! | Forbidden, `exceeded quota:` | the runner is older than 10 min → delete it; younger → `RequeueAfter(30s)` (#4305) |
//! | other Forbidden | `markAsFailed(InvalidPod)` |
//! | anything else | an error (rate-limited retry); with `fixes.transient_create_error_retried` off (a plausible bug), `markAsFailed(InvalidPod)` |
//!
//! The pod names its runner as controller; with `fixes.pod_controller_reference` off (a plausible
//! bug) only as owner (`owner_only`).

use std::ops::ControlFlow;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, Secret};

use super::draft::RunnerDraft;
use super::{EphemeralRunnerReconciler, Step, namespace_and_name};
use crate::crd::constants::REASON_INVALID_POD;
use crate::kit::error::{Error, Result};
use crate::runtime::api::{is_already_exists, is_forbidden, is_invalid, status_message};
use crate::runtime::outcome::Outcome;

/// How long to wait for the pod's watch event after a create answered AlreadyExists (#4201).
pub const POD_EVENT_WAIT: Duration = Duration::from_secs(5);
/// How long to wait before retrying a create refused by a resource quota (#4305).
pub const QUOTA_RETRY: Duration = Duration::from_secs(30);
/// A runner whose pod a quota refused for longer than this is deleted and recreated (#4305).
pub const QUOTA_GIVE_UP_AGE: Duration = Duration::from_secs(10 * 60);

/// What a refused pod create means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateFailure {
    /// The name is taken: the pod exists, the cache has not seen it yet.
    AlreadyExists,
    /// The pod spec is invalid; retrying cannot help.
    Invalid,
    /// A resource quota is exhausted (Forbidden, `exceeded quota:`); it may free up.
    QuotaExceeded,
    /// Any other Forbidden (admission, RBAC); retrying cannot help.
    Forbidden,
    /// Anything else (server errors, transport): retry.
    Other,
}

impl CreateFailure {
    /// Whether the refusal marks the runner Failed: Invalid and Forbidden always; anything else too
    /// when `transient_retried` is off (the plausible bug of `fixes.transient_create_error_retried`).
    pub fn is_final(self, transient_retried: bool) -> bool {
        match self {
            CreateFailure::Invalid | CreateFailure::Forbidden => true,
            CreateFailure::Other => !transient_retried,
            CreateFailure::AlreadyExists | CreateFailure::QuotaExceeded => false,
        }
    }
}

/// Classifies a pod create error as ARC's `createPod` result switch does.
pub fn classify_create_failure(error: &kube::Error) -> CreateFailure {
    if is_already_exists(error) {
        CreateFailure::AlreadyExists
    } else if is_invalid(error) {
        CreateFailure::Invalid
    } else if is_forbidden(error) && status_message(error).contains("exceeded quota:") {
        CreateFailure::QuotaExceeded
    } else if is_forbidden(error) {
        CreateFailure::Forbidden
    } else {
        CreateFailure::Other
    }
}

/// Whether a runner created at `created` has waited out the quota (older than 10 minutes at `now`).
/// A runner without a creation time has not.
pub fn quota_wait_expired(created: Option<Timestamp>, now: Timestamp) -> bool {
    created.and_then(|created| created.checked_add(QUOTA_GIVE_UP_AGE).ok()).is_some_and(|limit| limit < now)
}

/// How long a runner with `failures` recorded failures, the latest at `last_failure`, must still wait at
/// `now` before its next pod (`schedule[failures]`, the last entry for longer histories). `None`: no wait.
pub fn backoff_remaining(
    failures: usize,
    last_failure: Option<Timestamp>,
    now: Timestamp,
    schedule: &[Duration],
) -> Option<Duration> {
    let last_failure = last_failure?;
    let backoff = schedule.get(failures).or(schedule.last()).copied().unwrap_or_default();
    let next_attempt = last_failure.checked_add(backoff).ok()?;
    if now >= next_attempt {
        return None;
    }
    Duration::try_from(next_attempt.duration_since(now)).ok()
}

/// `controllerutil.SetOwnerReference` instead of `SetControllerReference` (the plausible bug of
/// `fixes.pod_controller_reference` off): the pod's owner references keep the owner and lose
/// `controller` and `blockOwnerDeletion`.
fn owner_only(pod: &mut Pod) {
    for reference in pod.metadata.owner_references.iter_mut().flatten() {
        reference.controller = None;
        reference.block_owner_deletion = None;
    }
}

impl EphemeralRunnerReconciler {
    /// Step 6: too many failed pods → delete the runner (the ERS makes a new one); otherwise wait out
    /// the backoff of the latest failure.
    pub(super) async fn check_failures(&self, runner: &RunnerDraft) -> Step {
        let failures = runner.get().failure_count();
        let max_failures = self.ctx.settings.max_runner_failures;
        if failures > max_failures {
            tracing::info!(failures, max_failures, "Too many pod failures; deleting the ephemeral runner");
            self.delete_runner(runner.get()).await?;
            return Ok(ControlFlow::Break(Outcome::Done));
        }
        let last_failure = runner.get().status.as_ref().and_then(|s| s.last_failure()).map(|t| t.0);
        let schedule = &self.ctx.settings.failed_runner_backoff;
        match backoff_remaining(failures, last_failure, self.ctx.clock.now(), schedule) {
            Some(wait) => {
                tracing::info!(requeue_after_ms = wait.as_millis(), "Backing off after a pod failure");
                Ok(ControlFlow::Break(Outcome::RequeueAfter(wait)))
            }
            None => Ok(ControlFlow::Continue(())),
        }
    }

    /// Step 7 with no pod in the cache: creates the pod and acts on a refusal. With
    /// `releases.pod_before_identity` (#4681) the runner id is recorded right after the create,
    /// before its answer is acted on.
    pub(super) async fn create_pod(&self, runner: &mut RunnerDraft, secret: &Secret) -> Result<Outcome> {
        tracing::info!("Ephemeral runner pod does not exist. Creating new ephemeral runner pod");
        let mut pod = self.ctx.builder.runner_pod(runner.get(), secret)?;
        if !self.ctx.switches.fixes.pod_controller_reference {
            owner_only(&mut pod);
        }
        let (namespace, _) = namespace_and_name(runner.get());
        let created = self.ctx.api.create(namespace, &pod).await;
        if self.ctx.switches.releases.pod_before_identity
            && let ControlFlow::Break(outcome) = self.record_registration(runner, secret).await?
        {
            return Ok(outcome);
        }
        let error = match created {
            Ok(_) => {
                tracing::info!(runner_id = runner.get().runner_id(), "Created ephemeral runner pod");
                return Ok(Outcome::Done);
            }
            Err(error) => error,
        };
        let failure = classify_create_failure(&error);
        match failure {
            CreateFailure::AlreadyExists if self.ctx.switches.fixes.already_exists_requeue => {
                tracing::info!(
                    requeue_after_ms = POD_EVENT_WAIT.as_millis(),
                    "pod already exists, waiting for the pod event"
                );
                Ok(Outcome::RequeueAfter(POD_EVENT_WAIT))
            }
            _ if failure.is_final(self.ctx.switches.fixes.transient_create_error_retried) => {
                tracing::error!(error = %error, "Failed to create a pod due to unrecoverable failure");
                let message = format!("Failed to create the pod: {}", status_message(&error));
                self.mark_as_failed(runner, &message, REASON_INVALID_POD).await?;
                Ok(Outcome::Done)
            }
            CreateFailure::QuotaExceeded => self.wait_for_quota(runner).await,
            _ => {
                tracing::error!(error = %error, "Failed to create the pod");
                Err(Error::Kube(error))
            }
        }
    }

    /// A quota refused the pod: retry in 30 s, or give the runner up after 10 minutes.
    async fn wait_for_quota(&self, runner: &RunnerDraft) -> Result<Outcome> {
        let created = runner.get().metadata.creation_timestamp.as_ref().map(|t| t.0);
        if quota_wait_expired(created, self.ctx.clock.now()) {
            tracing::error!("Resource quota exceeded for over 10 minutes; re-creating the ephemeral runner");
            self.delete_runner(runner.get()).await?;
            return Ok(Outcome::Done);
        }
        tracing::error!("Resource quota is exceeded; requeue in 30s to retry pod creation");
        Ok(Outcome::RequeueAfter(QUOTA_RETRY))
    }
}

#[cfg(test)]
mod tests {
    use kube::core::Status;

    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + seconds).expect("a valid timestamp")
    }

    fn arc_schedule() -> Vec<Duration> {
        [0, 5, 10, 20, 40, 80].into_iter().map(Duration::from_secs).collect()
    }

    #[test]
    fn the_backoff_is_indexed_by_the_failure_count_and_runs_from_the_latest_failure() {
        let schedule = arc_schedule();
        assert_eq!(backoff_remaining(0, None, at(0), &schedule), None, "never failed: no wait");
        assert_eq!(backoff_remaining(1, Some(at(0)), at(2), &schedule), Some(Duration::from_secs(3)));
        assert_eq!(backoff_remaining(1, Some(at(0)), at(5), &schedule), None, "the wait is over at 5 s");
        assert_eq!(backoff_remaining(3, Some(at(10)), at(11), &schedule), Some(Duration::from_secs(19)));
        assert_eq!(backoff_remaining(5, Some(at(0)), at(79), &schedule), Some(Duration::from_secs(1)));
        assert_eq!(backoff_remaining(9, Some(at(0)), at(0), &schedule), Some(Duration::from_secs(80)));
        assert_eq!(backoff_remaining(1, Some(at(0)), at(1), &[]), None, "an empty schedule never waits");
    }

    #[test]
    fn a_failure_in_the_future_waits_at_most_its_backoff_past_it() {
        let remaining = backoff_remaining(1, Some(at(10)), at(0), &arc_schedule());
        assert_eq!(remaining, Some(Duration::from_secs(15)));
    }

    #[test]
    fn the_quota_wait_expires_after_ten_minutes() {
        assert!(!quota_wait_expired(Some(at(0)), at(600)));
        assert!(quota_wait_expired(Some(at(0)), at(601)));
        assert!(!quota_wait_expired(None, at(10_000)));
    }

    fn api_error(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(Box::new(Status::failure(message, reason).with_code(code)))
    }

    #[test]
    fn owner_only_keeps_the_owner_and_drops_the_controller_flags() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
        let owner = OwnerReference {
            kind: "EphemeralRunner".into(),
            name: "r".into(),
            uid: "u1".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
            ..Default::default()
        };
        let mut pod = Pod::default();
        pod.metadata.owner_references = Some(vec![owner.clone()]);
        owner_only(&mut pod);
        let expected = OwnerReference { controller: None, block_owner_deletion: None, ..owner };
        assert_eq!(pod.metadata.owner_references, Some(vec![expected]));
    }

    #[test]
    fn create_errors_are_classified_as_arcs_create_pod_switch_does() {
        let cases = [
            (api_error(409, "AlreadyExists", "pods \"r\" already exists"), CreateFailure::AlreadyExists),
            (api_error(422, "Invalid", "Pod \"r\" is invalid"), CreateFailure::Invalid),
            (
                api_error(
                    403,
                    "Forbidden",
                    "pods \"r\" is forbidden: exceeded quota: compute, requested: cpu=2",
                ),
                CreateFailure::QuotaExceeded,
            ),
            (
                api_error(
                    403,
                    "Forbidden",
                    "pods \"r\" is forbidden: no PriorityClass with name x was found",
                ),
                CreateFailure::Forbidden,
            ),
            (api_error(409, "Conflict", "the object has been modified"), CreateFailure::Other),
            (api_error(500, "InternalError", "etcd"), CreateFailure::Other),
        ];
        for (error, expected) in cases {
            assert_eq!(classify_create_failure(&error), expected, "{error}");
        }
    }

    #[test]
    fn only_invalid_and_forbidden_are_final_unless_transient_refusals_are_not_retried() {
        use CreateFailure::*;
        let finals =
            |retried| [AlreadyExists, Invalid, QuotaExceeded, Forbidden, Other].map(|f| f.is_final(retried));
        assert_eq!(finals(true), [false, true, false, true, false]);
        assert_eq!(finals(false), [false, true, false, true, true]);
    }
}
