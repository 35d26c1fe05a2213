//! The AutoscalingRunnerSet controller (ARC-MODEL §3.3, upstream \[U\], with the \[V\] actionable
//! revision of §5.4): registers the scale set at GitHub, keeps one EphemeralRunnerSet of the same
//! name and one AutoscalingListener in the controller namespace, mirrors the runner counts into the
//! ARS status, and tears everything down again when the ARS is deleted.
//!
//! One reconcile takes the first step that applies and returns, exactly as ARC orders them:
//!
//! 1. deleting → listener, then runner set, then the scale set at GitHub, then the helm-made
//!    dependents' `cleanup-protection` finalizers, then our finalizer (`deletion.rs`);
//! 2. `app.kubernetes.io/version` not accepted by this build → a `VersionAccepted=False` condition
//!    and a log line, and nothing else: the user's ARS is never deleted for it
//!    ([`crate::scaleset::version`]);
//! 3. add the finalizer; 4. a new integrity hash (spec + labels) → record it, phase Pending;
//! 5. phase Outdated → stop the listener and zero the runner set;
//! 6. register the scale set, or follow a runner-group / name change (`scale_set.rs`);
//! 7. create the runner set, drain-then-update its runner spec (bumping `actionableRevision`), or
//!    patch its metadata (`runner_set.rs`);
//! 8. create the listener, or delete it when it drifted; 9. status Running with the counts
//!    (`listener.rs`).
//!
//! Reads of the ARS, its runner set and its listener come from informer caches; the primary object is
//! wrapped in a [`LazyCopy`], so a reconcile that changes nothing copies and writes nothing.

mod deletion;
mod listener;
mod runner_set;
mod scale_set;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use kube::runtime::watcher;

use crate::crd::constants::{
    ANNOTATION_INTEGRITY_HASH, AUTOSCALING_RUNNER_SET_FINALIZER, LABEL_VERSION, SCALESET_API_VERSION,
};
use crate::crd::{
    AutoscalingListener, AutoscalingRunnerSet, AutoscalingRunnerSetPhase, EphemeralRunnerSet, StatusCondition,
};

use crate::kit::error::{Error, Result};
pub(crate) use crate::kit::meta::remove_finalizer;
use crate::kit::meta::{has_finalizer, namespace_and_name};
pub(crate) use crate::kit::patch::{patch_object, patch_object_status};
use crate::kit::step::{Step, proceed};
use crate::runtime::controller::{Controller, Reconciler};
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::manager::Manager;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;
use crate::runtime::predicate::UpdatePredicate;
use crate::runtime::store::Store;
use crate::scaleset::context::ScaleSetContext;
use crate::scaleset::predicates::{ARS_FROM_ERS, ars_ers_predicate};
use crate::scaleset::resource_builder::BuildError;

use crate::scaleset::version::{
    CONDITION_VERSION_ACCEPTED, REASON_VERSION_NOT_ACCEPTED, not_accepted_message,
};

/// The controller's name: its workqueue and the `controller` label of its metrics.
pub(crate) const CONTROLLER_NAME: &str = "autoscalingrunnerset";

/// Wait between checks while the listener or the runner set is being deleted (ARC: 5 s).
const CLEANUP_REQUEUE: Duration = Duration::from_secs(5);
/// Wait between checks while busy runners drain before a runner-spec update (ARC: 1 s).
const DRAIN_REQUEUE: Duration = Duration::from_secs(1);

/// Reconciles AutoscalingRunnerSets (ARC's `AutoscalingRunnerSetReconciler`).
pub(crate) struct AutoscalingRunnerSetReconciler {
    ctx: Arc<ScaleSetContext>,
    runner_sets: Store<AutoscalingRunnerSet>,
    ephemeral_runner_sets: Store<EphemeralRunnerSet>,
    listeners: Store<AutoscalingListener>,
}

impl std::fmt::Debug for AutoscalingRunnerSetReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AutoscalingRunnerSetReconciler").finish_non_exhaustive()
    }
}

/// The ARS controller on `manager`'s shared informers: `For(ARS)`, `Owns(ERS)` (through the
/// §5.1 ARS←ERS predicate when `optimisations.predicates`), and `Watches(AutoscalingListener)`
/// mapped to `spec.autoscalingRunnerSet{Namespace,Name}`; one worker.
pub(crate) fn autoscaling_runner_set_controller(
    manager: &mut Manager,
    ctx: Arc<ScaleSetContext>,
) -> Controller<AutoscalingRunnerSetReconciler> {
    let runner_sets = manager.informer(ctx.watched::<AutoscalingRunnerSet>(), watcher::Config::default());
    let ephemeral_runner_sets =
        manager.informer(ctx.watched::<EphemeralRunnerSet>(), watcher::Config::default());
    let listeners =
        manager.informer(ctx.controller_namespace_api::<AutoscalingListener>(), watcher::Config::default());
    let predicate = ctx
        .switches
        .optimisations
        .predicates
        .then(|| UpdatePredicate::new(ARS_FROM_ERS, ars_ers_predicate(&ctx.switches.fixes)));
    let reconciler = Arc::new(AutoscalingRunnerSetReconciler {
        ctx,
        runner_sets: runner_sets.store(),
        ephemeral_runner_sets: ephemeral_runner_sets.store(),
        listeners: listeners.store(),
    });
    let ars_kind = AutoscalingRunnerSet::kind(&());
    Controller::new(CONTROLLER_NAME, reconciler, manager.metrics())
        .for_resource(&runner_sets)
        .owns(&ephemeral_runner_sets, SCALESET_API_VERSION, &ars_kind, predicate)
        .watches(&listeners, listener_owner_key, None)
}

/// The ARS a listener serves; listeners live in another namespace, so no ownerReference says it.
fn listener_owner_key(listener: &AutoscalingListener) -> Vec<ObjectKey> {
    let spec = &listener.spec;
    vec![ObjectKey::new(&spec.autoscaling_runner_set_namespace, &spec.autoscaling_runner_set_name)]
}

impl Reconciler for AutoscalingRunnerSetReconciler {
    type Error = Error;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Outcome> {
        let Some(cached) = self.runner_sets.get(key) else { return Ok(Outcome::Done) };
        let mut ars = LazyCopy::new(cached, self.ctx.copy_mode(), &self.ctx.metrics);
        if ars.get().metadata.deletion_timestamp.is_some() {
            return self.finalize(&mut ars).await;
        }
        proceed!(self.check_version(&mut ars).await);
        proceed!(self.ensure_finalizer(&mut ars).await);
        proceed!(self.record_integrity_hash(&mut ars).await);
        if phase_of(ars.get()) == Some(AutoscalingRunnerSetPhase::Outdated) {
            return self.switch_off_outdated(ars.get()).await;
        }
        proceed!(self.register_scale_set(&mut ars).await);
        let ephemeral_runner_set = proceed!(self.reconcile_runner_set(ars.get()).await);
        proceed!(self.reconcile_listener(ars.get(), &ephemeral_runner_set).await);
        self.update_status(&mut ars, &ephemeral_runner_set).await?;
        Ok(Outcome::Done)
    }
}

impl AutoscalingRunnerSetReconciler {
    /// Step 3: an ARS labelled for a version this controller does not accept is reported (a
    /// `VersionAccepted=False` condition, written once, and a log line) and not reconciled further.
    /// ARC deletes it instead; deleting a user's resource over a label is never right here. Once the
    /// label is accepted again, the condition is removed and the reconcile goes on.
    async fn check_version(&self, ars: &mut LazyCopy<AutoscalingRunnerSet>) -> Step {
        let labels = ars.get().metadata.labels.as_ref();
        let resource_version = labels.and_then(|l| l.get(LABEL_VERSION)).cloned().unwrap_or_default();
        let build_version = self.ctx.builder.controller_version.as_str();
        let accepted = &self.ctx.settings.accepted_versions;
        let reported = version_condition(ars.get()).cloned();
        if accepted.accepts(&resource_version, build_version) {
            if reported.is_some() {
                let status = ars.mutate().status.get_or_insert_with(Default::default);
                status.conditions.retain(|c| c.type_ != CONDITION_VERSION_ACCEPTED);
                patch_object_status(&self.ctx.api, ars).await?;
            }
            return Ok(ControlFlow::Continue(()));
        }
        let message = not_accepted_message(&resource_version, accepted, build_version);
        let (namespace, name) = namespace_and_name(ars.get());
        tracing::warn!(%namespace, %name, %resource_version, build_version, "AutoscalingRunnerSet not reconciled: {message}");
        if reported.is_none_or(|c| c.message != message) {
            let condition = StatusCondition {
                type_: CONDITION_VERSION_ACCEPTED.into(),
                status: "False".into(),
                reason: REASON_VERSION_NOT_ACCEPTED.into(),
                message,
                last_transition_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    self.ctx.clock.now(),
                )),
            };
            let status = ars.mutate().status.get_or_insert_with(Default::default);
            status.conditions.retain(|c| c.type_ != CONDITION_VERSION_ACCEPTED);
            status.conditions.push(condition);
            patch_object_status(&self.ctx.api, ars).await?;
        }
        Ok(ControlFlow::Break(Outcome::Done))
    }

    /// Step 4: the finalizer, in its own patch; the patch's event brings the next pass.
    async fn ensure_finalizer(&self, ars: &mut LazyCopy<AutoscalingRunnerSet>) -> Step {
        if has_finalizer(ars.get(), AUTOSCALING_RUNNER_SET_FINALIZER) {
            return Ok(ControlFlow::Continue(()));
        }
        ars.mutate()
            .metadata
            .finalizers
            .get_or_insert_with(Vec::new)
            .push(AUTOSCALING_RUNNER_SET_FINALIZER.into());
        patch_object(&self.ctx.api, ars).await?;
        Ok(ControlFlow::Break(Outcome::Done))
    }

    /// Step 5: a spec or label change is recorded as a new integrity hash, and the phase goes back
    /// to Pending until the runner set and listener follow.
    async fn record_integrity_hash(&self, ars: &mut LazyCopy<AutoscalingRunnerSet>) -> Step {
        let target = ars.get().integrity_hash().map_err(BuildError::from)?;
        let annotations = ars.get().metadata.annotations.as_ref();
        if annotations.and_then(|a| a.get(ANNOTATION_INTEGRITY_HASH)) == Some(&target) {
            return Ok(ControlFlow::Continue(()));
        }
        ars.mutate()
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(ANNOTATION_INTEGRITY_HASH.into(), target);
        patch_object(&self.ctx.api, ars).await?;
        ars.mutate().status.get_or_insert_with(Default::default).phase =
            Some(AutoscalingRunnerSetPhase::Pending);
        patch_object_status(&self.ctx.api, ars).await?;
        Ok(ControlFlow::Break(Outcome::Done))
    }

    /// The key of the ARS's runner set: same namespace and name.
    fn runner_set_key(ars: &AutoscalingRunnerSet) -> ObjectKey {
        ObjectKey::from_resource(ars)
    }
}

/// The `VersionAccepted` condition the ARS status reports, if any.
fn version_condition(ars: &AutoscalingRunnerSet) -> Option<&StatusCondition> {
    let status = ars.status.as_ref()?;
    status.conditions.iter().find(|c| c.type_ == CONDITION_VERSION_ACCEPTED)
}

/// The ARS status phase, if any.
fn phase_of(ars: &AutoscalingRunnerSet) -> Option<AutoscalingRunnerSetPhase> {
    ars.status.as_ref().and_then(|status| status.phase)
}
