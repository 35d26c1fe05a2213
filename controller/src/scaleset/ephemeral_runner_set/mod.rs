//! The EphemeralRunnerSet controller (ARC-MODEL §3.2, with the \[V\] changes of §5.4): keeps
//! `spec.replicas` EphemeralRunners for the listener, behind the patch-ID gate, and removes runners
//! at the service before deleting them.
//!
//! `reconcile` takes the steps in ARC's order, each in its own function: the deleting path (clean up
//! every runner, then the proxy secret, then drop the finalizer), the finalizer, the runner-spec
//! step (the \[V\] revision step, `revision`, or with `scaling.actionable_revision` off upstream's
//! integrity-hash step, `spec_hash`), the sticky Outdated phase, the proxy secret (`proxy_secret`),
//! the runners from the cache sorted into buckets (`buckets`; `digests` reads each runner only when
//! its cached object changed, its numbers through `annotations`), the gated scaling (`scaling`,
//! removals in `cleanup`), and the status (`status`). The cached set is wrapped in a [`LazyCopy`], so
//! a reconcile that changes nothing copies and writes nothing.
//!
//! [`ephemeral_runner_set_controller`] wires it as ARC does: `For(EphemeralRunnerSet)`,
//! `Owns(EphemeralRunner)` (with the §5.1 predicate when `optimisations.predicates` is on), one worker.

mod annotations;
mod buckets;
mod cleanup;
mod digests;
mod proxy_secret;
mod removal_mark;
mod removals_begun;
mod revision;
mod scaling;
mod spec_hash;
mod status;

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::watcher;

use self::buckets::RunnerBuckets;
use self::digests::RunnerDigests;
use self::proxy_secret::ProxySecretChange;
use self::removals_begun::RemovalsBegun;
use self::scaling::{ScalingDecision, ScalingRules, decide, gate_open};
use self::spec_hash::stale_integrity_hash;
use super::context::ScaleSetContext;
use super::predicates::{ERS_FROM_EPHEMERAL_RUNNER, ers_runner_predicate};
use crate::crd::constants::{EPHEMERAL_RUNNER_SET_FINALIZER, SCALESET_API_VERSION};
use crate::crd::{EphemeralRunner, EphemeralRunnerSet, EphemeralRunnerSetPhase};
use crate::kit::error::Result;
use crate::kit::meta::{has_finalizer, namespace_and_name};
use crate::runtime::controller::{Controller, Reconciler};
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::manager::Manager;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;
use crate::runtime::predicate::UpdatePredicate;
use crate::runtime::store::Store;

/// The controller's name: its queue, its metric label.
pub const CONTROLLER_NAME: &str = "ephemeralrunnerset";
/// The kind in an EphemeralRunner's controller ownerReference.
const OWNER_KIND: &str = "EphemeralRunnerSet";
/// How long to wait for the proxy secret: after an update, and while it is being deleted.
const PROXY_SECRET_REQUEUE: Duration = Duration::from_secs(1);

/// Reconciles EphemeralRunnerSets from the informer caches of sets and runners.
pub struct EphemeralRunnerSetReconciler {
    ctx: Arc<ScaleSetContext>,
    runner_sets: Store<EphemeralRunnerSet>,
    runners: Store<EphemeralRunner>,
    /// What each set's last pass read of its runners.
    digests: RunnerDigests,
    /// Removals this process began and has not seen finished (`fixes.delete_removed_runner_first`).
    begun: RemovalsBegun,
}

impl std::fmt::Debug for EphemeralRunnerSetReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EphemeralRunnerSetReconciler")
            .field("runner_sets", &self.runner_sets)
            .field("runners", &self.runners)
            .finish_non_exhaustive()
    }
}

/// The EphemeralRunnerSet controller on `manager`'s shared informers, ready for
/// [`Manager::add_controller`].
pub fn ephemeral_runner_set_controller(
    manager: &mut Manager,
    ctx: Arc<ScaleSetContext>,
) -> Controller<EphemeralRunnerSetReconciler> {
    let runner_sets = manager.informer(ctx.watched::<EphemeralRunnerSet>(), watcher::Config::default());
    let runners = manager.informer(ctx.watched::<EphemeralRunner>(), watcher::Config::default());
    let predicate =
        ctx.switches.optimisations.predicates.then(|| {
            UpdatePredicate::new(ERS_FROM_EPHEMERAL_RUNNER, ers_runner_predicate(&ctx.switches.fixes))
        });
    let metrics = manager.metrics().clone();
    let reconciler = Arc::new(EphemeralRunnerSetReconciler::new(ctx, runner_sets.store(), runners.store()));
    Controller::new(CONTROLLER_NAME, reconciler, &metrics).for_resource(&runner_sets).owns(
        &runners,
        SCALESET_API_VERSION,
        OWNER_KIND,
        predicate,
    )
}

impl Reconciler for EphemeralRunnerSetReconciler {
    type Error = crate::kit::Error;

    async fn reconcile(&self, key: &ObjectKey) -> Result<Outcome> {
        let Some(cached) = self.runner_sets.get(key) else {
            self.digests.forget(key);
            self.begun.forget_set(key);
            return Ok(Outcome::Done);
        };
        let mut ers = LazyCopy::new(cached, self.ctx.copy_mode(), &self.ctx.metrics);
        if ers.get().metadata.deletion_timestamp.is_some() {
            return self.finalize(&mut ers).await;
        }
        if !has_finalizer(ers.get(), EPHEMERAL_RUNNER_SET_FINALIZER) {
            return self.add_finalizer(&mut ers).await;
        }
        if let Some(outcome) = self.apply_runner_spec(&mut ers).await? {
            return Ok(outcome);
        }
        if is_outdated(ers.get()) {
            tracing::info!("Runner set is Outdated: cleaning up its runners");
            self.clean_up_runners(ers.get()).await?;
            return Ok(Outcome::Done);
        }
        if self.reconcile_proxy_secret(ers.get()).await? == ProxySecretChange::Updated {
            return Ok(Outcome::RequeueAfter(PROXY_SECRET_REQUEUE));
        }
        self.scale(&mut ers).await
    }
}

impl EphemeralRunnerSetReconciler {
    /// A reconciler reading sets and runners from these caches.
    pub fn new(
        ctx: Arc<ScaleSetContext>,
        runner_sets: Store<EphemeralRunnerSet>,
        runners: Store<EphemeralRunner>,
    ) -> Self {
        EphemeralRunnerSetReconciler {
            ctx,
            runner_sets,
            runners,
            digests: RunnerDigests::default(),
            begun: RemovalsBegun::default(),
        }
    }

    /// Step 4: a runner-spec change not applied yet, by revision (\[V\]) or by integrity hash
    /// (upstream); `None` when there is none.
    async fn apply_runner_spec(&self, ers: &mut LazyCopy<EphemeralRunnerSet>) -> Result<Option<Outcome>> {
        if self.ctx.switches.scaling.actionable_revision {
            if ers.get().spec.actionable_revision > ers.get().applied_actionable_revision() {
                return self.apply_actionable_revision(ers.get()).await.map(Some);
            }
            return Ok(None);
        }
        match stale_integrity_hash(ers.get())? {
            Some(hash) => self.apply_spec_hash(ers, hash).await.map(Some),
            None => Ok(None),
        }
    }

    /// Steps 7–9: bucket the cached runners, replace stale Outdated ones, finish the removals begun and
    /// not finished (arcsim's removal mark; their failures reported after scaling), act on what the
    /// gate lets through (upstream: then delete the finished runners), and update the status.
    async fn scale(&self, ers: &mut LazyCopy<EphemeralRunnerSet>) -> Result<Outcome> {
        let set = ObjectKey::from_resource(ers.get());
        let runners = self.begun.overlay(&set, self.digests.digest(&set, self.owned_runners(ers.get())));
        let buckets = RunnerBuckets::of_digested(runners, ers.get().applied_actionable_revision());
        tracing::info!(
            pending = buckets.pending.len(),
            running = buckets.running.len(),
            finished = buckets.finished.len(),
            failed = buckets.failed.len(),
            outdated = buckets.outdated.len(),
            deleting = buckets.deleting.len(),
            "Ephemeral runner counts"
        );
        self.delete_runners(&buckets.stale_outdated).await?;
        let finished_removals = self.finish_removals(ers.get(), &buckets).await;
        let rules = ScalingRules::of(&self.ctx.switches);
        let scaled = match decide(ers.get(), &buckets, rules) {
            ScalingDecision::CleanUpFinished => {
                self.clean_up_finished(ers, &buckets).await?;
                finished_removals?;
                return Ok(Outcome::Done);
            }
            ScalingDecision::ScaleUp(count) => self.scale_up(ers.get(), count).await,
            ScalingDecision::ScaleDown(count) => self.scale_down(ers.get(), &buckets, count).await,
            ScalingDecision::Hold => Ok(()),
        };
        if !rules.cleanup_finished_first && gate_open(ers.get(), &buckets, rules) {
            self.clean_up_finished_deferred(&buckets).await;
        }
        scaled?;
        finished_removals?;
        self.update_status(ers, &buckets).await?;
        Ok(Outcome::Done)
    }

    /// The deleting path: every runner must be gone (child events drive this, so no requeue), then
    /// the proxy secret (checked every second), then the finalizer comes off.
    async fn finalize(&self, ers: &mut LazyCopy<EphemeralRunnerSet>) -> Result<Outcome> {
        if !has_finalizer(ers.get(), EPHEMERAL_RUNNER_SET_FINALIZER) {
            return Ok(Outcome::Done);
        }
        tracing::info!("Deleting resources");
        if !self.clean_up_runners(ers.get()).await? {
            tracing::info!("Waiting for resources to be deleted");
            return Ok(Outcome::Done);
        }
        if !self.proxy_secret_gone(ers.get()).await? {
            tracing::info!("Waiting for proxy secret to be deleted");
            return Ok(Outcome::RequeueAfter(PROXY_SECRET_REQUEUE));
        }
        tracing::info!("Removing finalizer");
        let finalizers = ers.mutate().metadata.finalizers.get_or_insert_with(Vec::new);
        finalizers.retain(|finalizer| finalizer != EPHEMERAL_RUNNER_SET_FINALIZER);
        self.patch_metadata(ers).await?;
        Ok(Outcome::Done)
    }

    async fn add_finalizer(&self, ers: &mut LazyCopy<EphemeralRunnerSet>) -> Result<Outcome> {
        tracing::info!("Adding finalizer");
        let finalizers = ers.mutate().metadata.finalizers.get_or_insert_with(Vec::new);
        finalizers.push(EPHEMERAL_RUNNER_SET_FINALIZER.to_string());
        self.patch_metadata(ers).await?;
        Ok(Outcome::Done)
    }

    /// Sends the merge patch of the main resource built from the lazy copy.
    async fn patch_metadata(&self, ers: &LazyCopy<EphemeralRunnerSet>) -> Result<()> {
        let patch = ers.merge_patch()?;
        let (namespace, name) = namespace_and_name(ers.get());
        self.ctx.api.patch_merge::<EphemeralRunnerSet>(namespace, name, &patch).await?;
        Ok(())
    }

    /// The set's runners from the cache, through the `.metadata.controller` index.
    fn owned_runners(&self, ers: &EphemeralRunnerSet) -> Vec<Arc<EphemeralRunner>> {
        let (namespace, name) = namespace_and_name(ers);
        self.runners.list_controlled_by(namespace, SCALESET_API_VERSION, OWNER_KIND, name)
    }
}

fn is_outdated(ers: &EphemeralRunnerSet) -> bool {
    ers.status.as_ref().and_then(|status| status.phase) == Some(EphemeralRunnerSetPhase::Outdated)
}
