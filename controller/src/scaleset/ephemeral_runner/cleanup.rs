//! Steps 1–2 of ARC-MODEL §3.1: a deleting runner and a finished one.
//!
//! Deletion first removes the runner from the service (the registration finalizer): while the service
//! answers `JobStillRunning` the runner keeps its finalizers and the reconcile comes back in 30 s. Then
//! the pod and the JIT secret are deleted (without waiting for them to go), and with container hooks
//! the pods and secrets labelled `runner-pod=<runner>` too; the main finalizer goes last. A finished
//! runner only has its pod and secret deleted: its EphemeralRunnerSet deletes it. With #4664
//! (`releases.deregister_in_background`) the id may come from the JIT secret, and a runner whose pod
//! is gone or stopped is deregistered in the background (`unregistration_queue`).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::ResourceExt;
use kube::api::ListParams;

use super::draft::RunnerDraft;
use super::pod_state::pod_is_live;
use super::registration::registration_of;
use super::unregistration_queue::Unregistration;
use super::{EphemeralRunnerReconciler, has_finalizer, namespace_and_name};
use crate::crd::constants::{
    EPHEMERAL_RUNNER_FINALIZER, EPHEMERAL_RUNNER_REGISTRATION_FINALIZER, LABEL_RUNNER_POD,
};
use crate::crd::{EphemeralRunner, EphemeralRunnerPhase};
use crate::kit::error::{Error, Result};
use crate::runtime::api::is_not_found;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;

/// How long a deleting runner whose job still runs waits before RemoveRunner is tried again.
pub const JOB_STILL_RUNNING_RETRY: Duration = Duration::from_secs(30);

impl EphemeralRunnerReconciler {
    /// Step 1: a deleting runner. Without the main finalizer there is nothing left to do. Without
    /// `fixes.remove_runner_on_deletion` (before #2255) the service is not asked at all.
    pub(super) async fn finalize(&self, runner: &mut RunnerDraft) -> Result<Outcome> {
        if !has_finalizer(runner.get(), EPHEMERAL_RUNNER_FINALIZER) {
            return Ok(Outcome::Done);
        }
        let deregister = self.ctx.switches.fixes.remove_runner_on_deletion;
        let registered = has_finalizer(runner.get(), EPHEMERAL_RUNNER_REGISTRATION_FINALIZER);
        if deregister && registered && self.unregistrations.is_some() {
            if let Some(outcome) = self.deregister_by_recorded_id(runner).await? {
                return Ok(outcome);
            }
        } else if deregister && registered {
            if !self.reread_if_unregistered(runner).await? {
                return Ok(Outcome::Done);
            }
            tracing::info!("Trying to clean up runner from the service");
            match self.deregister(runner.get()).await {
                Err(Error::GitHub(error)) if error.is_job_still_running() => {
                    tracing::info!("Runner is not finished yet, retrying in 30s");
                    return Ok(Outcome::RequeueAfter(JOB_STILL_RUNNING_RETRY));
                }
                Err(error) => {
                    tracing::error!(error = %error, "Failed to clean up runner from service");
                    return Err(error);
                }
                Ok(()) => {}
            }
            remove_finalizer(runner.mutate(), EPHEMERAL_RUNNER_REGISTRATION_FINALIZER);
            runner.patch(&self.ctx.api).await?;
            tracing::info!("Runner is cleaned up from the service, removed the registration finalizer");
        }
        self.cleanup_resources(runner.get()).await?;
        if runner.get().has_container_hooks() {
            tracing::info!("Runner has container hooks configured, cleaning up their resources");
            self.cleanup_container_hook_resources(runner.get()).await?;
        }
        remove_finalizer(runner.mutate(), EPHEMERAL_RUNNER_FINALIZER);
        if !deregister {
            // Before #2255 the runner had no registration finalizer to wait on.
            remove_finalizer(runner.mutate(), EPHEMERAL_RUNNER_REGISTRATION_FINALIZER);
        }
        match runner.patch(&self.ctx.api).await {
            Err(Error::Kube(error)) if is_not_found(&error) => {}
            result => {
                result?;
            }
        }
        tracing::info!("Successfully removed finalizer after cleanup");
        Ok(Outcome::Done)
    }

    /// #4664 (`releases.deregister_in_background`): the runner id from the status, else from the JIT
    /// secret; while the pod is live the service is asked first (`JobStillRunning`: the outcome to
    /// return); then the registration finalizer goes, and for a pod gone or stopped the id is queued
    /// for removal in the background. `None`: carry on with the cleanup.
    async fn deregister_by_recorded_id(&self, runner: &mut RunnerDraft) -> Result<Option<Outcome>> {
        let runner_id = self.registered_runner_id(runner.get()).await?;
        let (namespace, name) = namespace_and_name(runner.get());
        let key = ObjectKey::new(namespace, name);
        let live = self.pods.get(&key).is_some_and(|pod| pod_is_live(&pod));
        let mut queued = None;
        if runner_id != 0 {
            let client = self.actions_client(runner.get()).await?;
            if !live {
                queued = Some(client);
            } else {
                tracing::info!(runner_id, "Trying to clean up runner from the service before its pod");
                match client.remove_runner(runner_id).await {
                    Err(error) if error.is_job_still_running() => {
                        tracing::info!("Runner is not finished yet, retrying in 30s");
                        return Ok(Some(Outcome::RequeueAfter(JOB_STILL_RUNNING_RETRY)));
                    }
                    Err(error) if error.status() == Some(404) => {}
                    Err(error) => return Err(error.into()),
                    Ok(()) => {}
                }
            }
        }
        remove_finalizer(runner.mutate(), EPHEMERAL_RUNNER_REGISTRATION_FINALIZER);
        runner.patch(&self.ctx.api).await?;
        if let (Some(client), Some(queue)) = (queued, &self.unregistrations) {
            tracing::info!(runner_id, "Queued the runner's removal from the service");
            queue.push(Unregistration { client, key, runner_id });
        } else if runner_id == 0 {
            tracing::info!("No runner id recorded; leaving the runner for the service to clean up");
        }
        Ok(None)
    }

    /// #4664's `registeredRunnerID`: none after a `Succeeded` phase (the runner removed itself), else
    /// the status's, else the JIT secret's (0 when it is gone or unreadable).
    async fn registered_runner_id(&self, runner: &EphemeralRunner) -> Result<i64> {
        if runner.phase() == EphemeralRunnerPhase::Succeeded {
            return Ok(0);
        }
        if runner.runner_id() != 0 {
            return Ok(runner.runner_id());
        }
        let (namespace, name) = namespace_and_name(runner);
        let secret = self.read_jit_secret(namespace, name).await?;
        Ok(secret.and_then(|secret| registration_of(&secret)).map_or(0, |(runner_id, _)| runner_id))
    }

    /// With `fixes.reread_runner_before_deregistration`, a runner whose snapshot records no runner id
    /// is read afresh (a reconcile that registered it may have written the id since the snapshot);
    /// `false` when it is gone.
    async fn reread_if_unregistered(&self, runner: &mut RunnerDraft) -> Result<bool> {
        if !self.ctx.switches.fixes.reread_runner_before_deregistration || runner.get().runner_id() != 0 {
            return Ok(true);
        }
        let (namespace, name) = namespace_and_name(runner.get());
        let Some(fresh) = self.ctx.api.get::<EphemeralRunner>(namespace, name).await? else {
            return Ok(false);
        };
        *runner = RunnerDraft::new(Arc::new(fresh), self.ctx.copy_mode(), &self.ctx.metrics);
        Ok(true)
    }

    /// ARC's `cleanupResources`: deletes the runner's pod (from the cache) and its JIT secret unless
    /// they are already deleting. It does not wait for them to disappear.
    pub(super) async fn cleanup_resources(&self, runner: &EphemeralRunner) -> Result<()> {
        let (namespace, name) = namespace_and_name(runner);
        let pod = self.pods.get(&ObjectKey::new(namespace, name));
        if pod.is_some_and(|pod| pod.metadata.deletion_timestamp.is_none()) {
            tracing::info!("Deleting the runner pod");
            self.delete_ignoring_not_found::<Pod>(namespace, name).await?;
        }
        let secret = self.read_jit_secret(namespace, name).await?;
        if secret.is_some_and(|secret| secret.metadata.deletion_timestamp.is_none()) {
            tracing::info!("Deleting the jitconfig secret");
            self.delete_ignoring_not_found::<Secret>(namespace, name).await?;
        }
        Ok(())
    }

    /// ARC's `cleanupContainerHooksResources`: deletes the pods (from the cache) and the secrets (listed
    /// from the API server) labelled `runner-pod=<runner>`. Every deletion is tried; the first error is
    /// returned.
    async fn cleanup_container_hook_resources(&self, runner: &EphemeralRunner) -> Result<()> {
        let (namespace, name) = namespace_and_name(runner);
        let linked = |labels: &std::collections::BTreeMap<String, String>| {
            labels.get(LABEL_RUNNER_POD).is_some_and(|value| value == name)
        };
        let pods: Vec<String> = (self.pods.list_in(namespace).iter())
            .filter(|pod| linked(pod.labels()) && pod.metadata.deletion_timestamp.is_none())
            .map(|pod| pod.name_any())
            .collect();
        let selector = ListParams::default().labels(&format!("{LABEL_RUNNER_POD}={name}"));
        let secrets: Vec<String> = (self.ctx.api.list::<Secret>(namespace, &selector).await?.items.iter())
            .filter(|secret| secret.metadata.deletion_timestamp.is_none())
            .map(|secret| secret.name_any())
            .collect();
        tracing::info!(pods = pods.len(), secrets = secrets.len(), "Deleting container hook resources");
        let mut first_error = None;
        for pod in &pods {
            first_error = first_error.or(self.delete_ignoring_not_found::<Pod>(namespace, pod).await.err());
        }
        for secret in &secrets {
            first_error =
                first_error.or(self.delete_ignoring_not_found::<Secret>(namespace, secret).await.err());
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Removes `finalizer` from `runner`'s finalizers.
fn remove_finalizer(runner: &mut EphemeralRunner, finalizer: &str) {
    if let Some(finalizers) = runner.metadata.finalizers.as_mut() {
        finalizers.retain(|f| f != finalizer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_a_finalizer_keeps_the_others_in_order() {
        let mut runner = EphemeralRunner::new("r", Default::default());
        remove_finalizer(&mut runner, EPHEMERAL_RUNNER_FINALIZER);
        assert_eq!(runner.metadata.finalizers, None);
        runner.metadata.finalizers = Some(
            ["a", EPHEMERAL_RUNNER_FINALIZER, "b", EPHEMERAL_RUNNER_REGISTRATION_FINALIZER]
                .map(String::from)
                .to_vec(),
        );
        remove_finalizer(&mut runner, EPHEMERAL_RUNNER_FINALIZER);
        let left = runner.metadata.finalizers.as_deref().unwrap_or_default();
        assert_eq!(left, ["a", "b", EPHEMERAL_RUNNER_REGISTRATION_FINALIZER]);
        assert!(has_finalizer(&runner, "b") && !has_finalizer(&runner, EPHEMERAL_RUNNER_FINALIZER));
    }
}
