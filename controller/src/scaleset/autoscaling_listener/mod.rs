//! The AutoscalingListener controller (ARC-MODEL §3.4): runs one listener pod per AL, with what the
//! pod needs around it, and removes all of it when the AL is deleted.
//!
//! One reconcile takes the first step that applies and returns, in ARC's order:
//!
//! 1. deleting → delete pod, config secret, proxy secret, RoleBinding, Role and ServiceAccount, look
//!    again every second until all are gone, then drop the finalizer (`cleanup.rs`);
//! 2. add the finalizer; 3. the ARS it serves is gone → delete the AL;
//! 4. ServiceAccount (controller namespace), Role and RoleBinding (ARS namespace) (`rbac.rs`), proxy
//!    secret and `<al>-config` secret (`secrets.rs`): each created when missing and replaced when its
//!    metadata drifted;
//! 5. the listener pod: created, deleted when its integrity hash changed, replaced when its labels or
//!    annotations drifted; deleted when evicted or when its listener container terminated (`pod.rs`).
//!
//! Pods, ServiceAccounts, Roles, RoleBindings and the ARS are read from informer caches; Secrets
//! straight from the API server (ARC-MODEL §1.1). Like ARC, a freshly created Role, RoleBinding or
//! secret asks for a rate-limited requeue rather than waiting for its watch event.

mod cleanup;
mod pod;
pub(crate) mod proxy;
mod rbac;
mod secrets;

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::Resource;
use kube::runtime::watcher;

use crate::crd::constants::{
    AUTOSCALING_LISTENER_FINALIZER, LABEL_LISTENER_NAME, LABEL_LISTENER_NAMESPACE, SCALESET_API_VERSION,
};
use crate::crd::{AutoscalingListener, AutoscalingRunnerSet};
use crate::kit::error::{Error, Result};
use crate::kit::meta::{has_finalizer, namespace_and_name};
use crate::kit::patch::patch_object;
use crate::kit::step::{Step, proceed};
use crate::runtime::controller::{Controller, Reconciler};
use crate::runtime::informer::Informer;
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::manager::Manager;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;
use crate::runtime::store::Store;
use crate::scaleset::context::ScaleSetContext;
use crate::scaleset::resource_builder::ListenerPodInputs;

/// The controller's name: its workqueue and the `controller` label of its metrics.
pub(crate) const CONTROLLER_NAME: &str = "autoscalinglistener";

/// Reconciles AutoscalingListeners (ARC's `AutoscalingListenerReconciler`).
pub(crate) struct AutoscalingListenerReconciler {
    ctx: Arc<ScaleSetContext>,
    listeners: Store<AutoscalingListener>,
    /// Read, not watched: the reconcile waits for its first list before trusting a miss.
    runner_sets: Informer<AutoscalingRunnerSet>,
    pods: Store<Pod>,
    service_accounts: Store<ServiceAccount>,
    roles: Store<Role>,
    role_bindings: Store<RoleBinding>,
}

impl std::fmt::Debug for AutoscalingListenerReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AutoscalingListenerReconciler").finish_non_exhaustive()
    }
}

/// The AL controller on `manager`'s shared informers: `For(AL)`, `Owns(Pod)` and
/// `Owns(ServiceAccount)` (owner kind AutoscalingListener), and Roles and RoleBindings mapped
/// through their `auto-scaling-listener-{namespace,name}` labels; one worker.
pub(crate) fn autoscaling_listener_controller(
    manager: &mut Manager,
    ctx: Arc<ScaleSetContext>,
) -> Controller<AutoscalingListenerReconciler> {
    let config = watcher::Config::default;
    let listeners = manager.informer(ctx.controller_namespace_api::<AutoscalingListener>(), config());
    let pods = manager.informer(ctx.controller_namespace_api::<Pod>(), config());
    let service_accounts = manager.informer(ctx.controller_namespace_api::<ServiceAccount>(), config());
    let roles = manager.informer(ctx.watched::<Role>(), config());
    let role_bindings = manager.informer(ctx.watched::<RoleBinding>(), config());
    let runner_sets = manager.informer(ctx.watched::<AutoscalingRunnerSet>(), config());
    let reconciler = Arc::new(AutoscalingListenerReconciler {
        ctx,
        listeners: listeners.store(),
        runner_sets,
        pods: pods.store(),
        service_accounts: service_accounts.store(),
        roles: roles.store(),
        role_bindings: role_bindings.store(),
    });
    let kind = AutoscalingListener::kind(&());
    Controller::new(CONTROLLER_NAME, reconciler, manager.metrics())
        .for_resource(&listeners)
        .owns(&pods, SCALESET_API_VERSION, &kind, None)
        .owns(&service_accounts, SCALESET_API_VERSION, &kind, None)
        .watches(&roles, |role: &Role| listener_of_labels(role), None)
        .watches(&role_bindings, |binding: &RoleBinding| listener_of_labels(binding), None)
}

/// The listener a Role or RoleBinding names in its labels (they live in the ARS namespace, so no
/// ownerReference can point at the listener).
fn listener_of_labels<K: Resource>(object: &K) -> Vec<ObjectKey> {
    let labels = object.meta().labels.as_ref();
    let label = |key: &str| labels.and_then(|labels| labels.get(key));
    match (label(LABEL_LISTENER_NAMESPACE), label(LABEL_LISTENER_NAME)) {
        (Some(namespace), Some(name)) => vec![ObjectKey::new(namespace, name)],
        _ => Vec::new(),
    }
}

impl Reconciler for AutoscalingListenerReconciler {
    type Error = Error;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Outcome> {
        let Some(cached) = self.listeners.get(key) else { return Ok(Outcome::Done) };
        let mut listener = LazyCopy::new(cached, self.ctx.copy_mode(), &self.ctx.metrics);
        if listener.get().metadata.deletion_timestamp.is_some() {
            return self.finalize(&mut listener).await;
        }
        if !has_finalizer(listener.get(), AUTOSCALING_LISTENER_FINALIZER) {
            let finalizers = listener.mutate().metadata.finalizers.get_or_insert_with(Vec::new);
            finalizers.push(AUTOSCALING_LISTENER_FINALIZER.into());
            patch_object(&self.ctx.api, &listener).await?;
            return Ok(Outcome::Done);
        }
        let listener = listener.get();
        let runner_set = proceed!(self.runner_set_of(listener).await);
        let service_account = proceed!(self.ensure_service_account(listener).await);
        let role = proceed!(self.ensure_role(listener).await);
        let role_binding = proceed!(self.ensure_role_binding(listener, &role, &service_account).await);
        proceed!(self.ensure_proxy_secret(listener).await);
        let config_secret = proceed!(self.ensure_config_secret(listener, &runner_set).await);
        let inputs = ListenerPodInputs {
            listener,
            config_secret: &config_secret,
            service_account: &service_account,
            role: &role,
            role_binding: &role_binding,
        };
        let pod = proceed!(self.ensure_pod(inputs).await);
        self.check_pod_health(&pod).await
    }
}

impl AutoscalingListenerReconciler {
    /// Step 3: the ARS this listener serves, from the cache; when it is gone, so is the listener.
    async fn runner_set_of(&self, listener: &AutoscalingListener) -> Step<Arc<AutoscalingRunnerSet>> {
        self.runner_sets.wait_for_sync().await;
        let spec = &listener.spec;
        let key = ObjectKey::new(&spec.autoscaling_runner_set_namespace, &spec.autoscaling_runner_set_name);
        if let Some(runner_set) = self.runner_sets.store().get(&key) {
            return Ok(ControlFlow::Continue(runner_set));
        }
        let (namespace, name) = namespace_and_name(listener);
        tracing::info!(%namespace, %name, runner_set = %key, "AutoscalingRunnerSet not found; deleting the listener");
        self.ctx.api.delete::<AutoscalingListener>(namespace, name, &Default::default()).await?;
        Ok(ControlFlow::Break(Outcome::Done))
    }
}

/// `current` with the desired labels and annotations merged over its own (ARC's
/// `filterAndMergeLabels` / `mergeAnnotations`), or `None` when that changes nothing.
pub(crate) fn with_merged_metadata<K: Resource + Clone>(
    ctx: &ScaleSetContext,
    current: &K,
    desired: &K,
) -> Option<K> {
    let map = |m: &Option<BTreeMap<String, String>>| m.clone().unwrap_or_default();
    let (current_labels, current_annotations) =
        (map(&current.meta().labels), map(&current.meta().annotations));
    let labels = ctx.builder.filter_and_merge_labels(&current_labels, &map(&desired.meta().labels));
    let annotations = crate::scaleset::resource_builder::merge_annotations(
        &current_annotations,
        &map(&desired.meta().annotations),
    );
    if labels == current_labels && annotations == current_annotations {
        return None;
    }
    let mut updated = current.clone();
    updated.meta_mut().labels = Some(labels);
    updated.meta_mut().annotations = Some(annotations);
    Some(updated)
}
