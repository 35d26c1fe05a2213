//! The EphemeralRunner controller (ARC-MODEL §3.1): one runner, one JIT registration at the Actions
//! service, one pod at a time.
//!
//! A reconcile reads the runner and its pod from the informer caches and the JIT secret straight from
//! the API server (or, in the §8.1 ablation `fixes.secrets_read_uncached = false`, from a cache), then
//! walks §3.1's steps in order, each a short named function that either carries on or ends the
//! reconcile with an `Outcome`:
//!
//! 1. deleting → RemoveRunner for the registration finalizer, clean up the children, drop the finalizer;
//! 2. done (Succeeded, Failed, Outdated) → clean up the pod and the secret, nothing more;
//! 3. finalizers; 4. the JIT secret; 5. the runner id; 6. the failure limit and backoff;
//! 7. no pod in the cache → create it (the create-result table); a pod → the pod-state table a–j.
//!
//! With `releases.pod_before_identity` (#4681, 0.15.0) step 5 moves after the pod's create (or, when
//! the pod exists, just before the pod-state table).
//!
//! Every write is built from one [`LazyCopy`](crate::runtime::lazy_copy::LazyCopy) of the cached runner
//! (`draft`) and sent through the counted `KubeApi`. Map of the steps:
//! `cleanup` (deletion and cleanup of children), `registration` (finalizers, JIT secret, runner id),
//! `pod_create` (failure limit, backoff, pod creation), `pod_state` (what a pod's state means).

mod cleanup;
mod draft;
mod pod_create;
mod pod_state;
mod registration;
mod unregistration_queue;

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::api::DeleteParams;
use kube::runtime::watcher;

use self::draft::RunnerDraft;
use self::unregistration_queue::UnregistrationQueue;
use super::context::ScaleSetContext;
use super::predicates::{EPHEMERAL_RUNNER_FROM_POD, ephemeral_runner_needs_pod_update};
use crate::ActionsClient;
use crate::crd::EphemeralRunner;
use crate::crd::constants::SCALESET_API_VERSION;
use crate::kit::error::{Error, Result};
use crate::kit::meta::{has_finalizer, namespace_and_name};
use crate::kit::step::{Step, proceed};
use crate::runtime::api::{ApiResource, is_not_found};
use crate::runtime::controller::{Controller, Reconciler};
use crate::runtime::manager::Manager;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;
use crate::runtime::predicate::UpdatePredicate;
use crate::runtime::store::Store;
use crate::scaleset::GitHubTarget;

pub use cleanup::JOB_STILL_RUNNING_RETRY;
pub use pod_create::{
    CreateFailure, POD_EVENT_WAIT, QUOTA_GIVE_UP_AGE, QUOTA_RETRY, backoff_remaining,
    classify_create_failure, quota_wait_expired,
};
pub use pod_state::{
    OUTDATED_EXIT_CODE, PodChecks, PodVerdict, RunStatus, classify_pod, record_failure, run_status_from_pod,
};

/// The controller's name: its queue name and the `controller` label of its metrics.
pub const CONTROLLER_NAME: &str = "ephemeralrunner";

/// Reconciles EphemeralRunners: the shared context and the caches it reads.
pub struct EphemeralRunnerReconciler {
    ctx: Arc<ScaleSetContext>,
    runners: Store<EphemeralRunner>,
    pods: Store<Pod>,
    /// The Secret cache, only in the §8.1 ablation (`fixes.secrets_read_uncached` off).
    secrets: Option<Store<Secret>>,
    /// #4664's background deregistration, with `releases.deregister_in_background`.
    unregistrations: Option<UnregistrationQueue>,
}

impl std::fmt::Debug for EphemeralRunnerReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EphemeralRunnerReconciler")
            .field("runners", &self.runners)
            .field("pods", &self.pods)
            .field("secrets_cached", &self.secrets.is_some())
            .finish_non_exhaustive()
    }
}

/// Builds the EphemeralRunner controller on `manager`'s shared informers: `For(EphemeralRunner)`,
/// `Owns(Pod)` with the ER←Pod projection predicate when `optimisations.predicates` is on, and
/// `runner_max_concurrent_reconciles` workers. The caller adds it to the manager.
///
/// In the §8.1 ablation a Secret informer is registered too. It feeds the cache only: its events
/// enqueue nothing (ARC never watches secrets), but the workers wait for it to sync.
pub fn ephemeral_runner_controller(
    manager: &mut Manager,
    ctx: Arc<ScaleSetContext>,
) -> Controller<EphemeralRunnerReconciler> {
    let runners = manager.informer(ctx.watched::<EphemeralRunner>(), watcher::Config::default());
    let pods = manager.informer(ctx.watched::<Pod>(), watcher::Config::default());
    let secrets = (!ctx.switches.fixes.secrets_read_uncached)
        .then(|| manager.informer(ctx.watched::<Secret>(), watcher::Config::default()));
    let predicate = ctx
        .switches
        .optimisations
        .predicates
        .then(|| UpdatePredicate::new(EPHEMERAL_RUNNER_FROM_POD, ephemeral_runner_needs_pod_update));
    let unregistrations = ctx.switches.releases.deregister_in_background.then(|| {
        let (queue, worker) = UnregistrationQueue::new();
        manager.add_task(worker);
        queue
    });
    let reconciler = Arc::new(EphemeralRunnerReconciler {
        ctx: Arc::clone(&ctx),
        runners: runners.store(),
        pods: pods.store(),
        secrets: secrets.as_ref().map(|informer| informer.store()),
        unregistrations,
    });
    let controller = Controller::new(CONTROLLER_NAME, reconciler, &ctx.metrics)
        .for_resource(&runners)
        .owns(&pods, SCALESET_API_VERSION, "EphemeralRunner", predicate)
        .with_max_concurrent_reconciles(ctx.settings.runner_max_concurrent_reconciles);
    match &secrets {
        Some(secrets) => controller.watches(secrets, |_: &Secret| Vec::new(), None),
        None => controller,
    }
}

impl Reconciler for EphemeralRunnerReconciler {
    type Error = Error;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Outcome> {
        let Some(cached) = self.runners.get(key) else {
            return Ok(Outcome::Done);
        };
        let mut runner = RunnerDraft::new(cached, self.ctx.copy_mode(), &self.ctx.metrics);
        if runner.get().metadata.deletion_timestamp.is_some() {
            return self.finalize(&mut runner).await;
        }
        if runner.get().is_done() {
            tracing::info!(
                phase = runner.get().phase().as_str(),
                "Cleaning up resources of a finished runner"
            );
            self.cleanup_resources(runner.get()).await?;
            return Ok(Outcome::Done);
        }
        proceed!(self.ensure_finalizers(&mut runner).await);
        let secret = proceed!(self.ensure_jit_secret(&runner).await);
        let pod_first = self.ctx.switches.releases.pod_before_identity;
        if !pod_first {
            proceed!(self.record_registration(&mut runner, &secret).await);
        }
        proceed!(self.check_failures(&runner).await);
        match self.pods.get(key) {
            None => self.create_pod(&mut runner, &secret).await,
            Some(pod) => {
                if pod_first {
                    proceed!(self.record_registration(&mut runner, &secret).await);
                }
                self.reconcile_pod(&mut runner, &pod).await
            }
        }
    }
}

impl EphemeralRunnerReconciler {
    /// The GitHub client for `runner`'s config URL and config secret.
    async fn actions_client(&self, runner: &EphemeralRunner) -> Result<ActionsClient> {
        let namespace = runner.metadata.namespace.as_deref().unwrap_or_default();
        let spec = &runner.spec;
        let target = GitHubTarget {
            url: &spec.github_config_url,
            secret: &spec.github_config_secret,
            proxy: spec.proxy.as_ref(),
            tls: spec.github_server_tls.as_ref(),
        };
        self.ctx.actions_client(namespace, target).await
    }

    /// Deregisters a deleting `runner`: RemoveRunner for its recorded id. With
    /// `fixes.remove_runner_by_known_id` a runner with no recorded id is not removed as id 0: nothing
    /// was registered under an id this controller knows (#4619/#4683 skip the call so).
    async fn deregister(&self, runner: &EphemeralRunner) -> Result<()> {
        if self.ctx.switches.fixes.remove_runner_by_known_id && runner.runner_id() == 0 {
            tracing::info!("Runner has no runner id: nothing to remove from the service");
            return Ok(());
        }
        self.remove_runner(runner).await
    }

    /// RemoveRunner for `runner`'s recorded id (ARC's `deleteRunnerFromService`).
    async fn remove_runner(&self, runner: &EphemeralRunner) -> Result<()> {
        let runner_id = runner.runner_id();
        tracing::info!(runner_id, "Removing runner from the service");
        self.actions_client(runner).await?.remove_runner(runner_id).await?;
        tracing::info!(runner_id, "Removed runner from the service");
        Ok(())
    }

    /// Deletes the EphemeralRunner itself; its owner (the ERS) decides what replaces it.
    async fn delete_runner(&self, runner: &EphemeralRunner) -> Result<()> {
        let (namespace, name) = namespace_and_name(runner);
        self.ctx.api.delete::<EphemeralRunner>(namespace, name, &DeleteParams::default()).await?;
        tracing::info!("Request to delete ephemeral runner has been issued");
        Ok(())
    }

    /// Deletes `namespace/name`; an object already gone is not an error.
    async fn delete_ignoring_not_found<K: ApiResource>(&self, namespace: &str, name: &str) -> Result<()> {
        match self.ctx.api.delete::<K>(namespace, name, &DeleteParams::default()).await {
            Err(error) if !is_not_found(&error) => Err(Error::Kube(error)),
            _ => Ok(()),
        }
    }

    /// The JIT secret of `namespace/name`: a direct GET, or the cache in the §8.1 ablation.
    async fn read_jit_secret(&self, namespace: &str, name: &str) -> Result<Option<Arc<Secret>>> {
        if let Some(secrets) = &self.secrets {
            return Ok(secrets.get(&ObjectKey::new(namespace, name)));
        }
        let secret: Option<Secret> = self.ctx.api.get(namespace, name).await?;
        Ok(secret.map(Arc::new))
    }
}
