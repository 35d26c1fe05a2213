//! The ARS's AutoscalingListener and its status (ARC-MODEL §3.3 steps 10–11): the listener is
//! created when missing and deleted when its spec, labels or annotations drifted from what the ARS
//! wants (the delete event brings the next pass, which creates the new one); once both children are
//! as wanted, the ARS is Running and mirrors its runner set's counts.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use k8s_openapi::api::core::v1::LocalObjectReference;

use super::{AutoscalingRunnerSetReconciler, Step, namespace_and_name, patch_object_status};
use crate::crd::{AutoscalingListener, AutoscalingRunnerSet, AutoscalingRunnerSetPhase, EphemeralRunnerSet};
use crate::kit::error::Result;
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;

impl AutoscalingRunnerSetReconciler {
    /// Step 10: the listener as the ARS wants it.
    pub(super) async fn reconcile_listener(
        &self,
        ars: &AutoscalingRunnerSet,
        runner_set: &EphemeralRunnerSet,
    ) -> Step {
        let desired = self.desired_listener(ars, runner_set, true)?;
        let Some(current) = self.listeners.get(&ObjectKey::from_resource(&desired)) else {
            if self.ctx.switches.releases.revalidate_scale_set && self.scale_set_vanished(ars).await? {
                return self.forget_scale_set(ars).await;
            }
            let (namespace, name) = namespace_and_name(&desired);
            tracing::info!(%namespace, %name, "creating the AutoscalingListener");
            self.ctx.api.create(namespace, &desired).await?;
            return Ok(ControlFlow::Break(Outcome::Done));
        };
        let with_pull_secrets = self.ctx.switches.departures.listener_compare_with_pull_secrets;
        let compared = self.desired_listener(ars, runner_set, with_pull_secrets)?;
        if !drifted(&current, &compared) {
            return Ok(ControlFlow::Continue(()));
        }
        if current.metadata.deletion_timestamp.is_none() {
            let (namespace, name) = namespace_and_name(current.as_ref());
            tracing::info!(%namespace, %name, "deleting the AutoscalingListener to re-create it with the new spec");
            self.ctx.api.delete::<AutoscalingListener>(namespace, name, &Default::default()).await?;
        }
        Ok(ControlFlow::Break(Outcome::Done))
    }

    /// The listener ARC's `newAutoscalingListener` builds, with the process's image and pull secrets.
    /// (ARC compares against a listener built without pull secrets, which recreates the listener on
    /// every pass when pull secrets are configured; we build both the same way unless
    /// `departures.listener_compare_with_pull_secrets` is off.)
    fn desired_listener(
        &self,
        ars: &AutoscalingRunnerSet,
        runner_set: &EphemeralRunnerSet,
        with_pull_secrets: bool,
    ) -> Result<AutoscalingListener> {
        let settings = &self.ctx.settings;
        let pull_secrets: Vec<LocalObjectReference> = settings
            .listener_image_pull_secrets
            .iter()
            .filter(|_| with_pull_secrets)
            .map(|name| LocalObjectReference { name: name.clone() })
            .collect();
        let listener = self.ctx.builder.autoscaling_listener(
            ars,
            runner_set,
            &settings.controller_namespace,
            &settings.listener_image,
            &pull_secrets,
        )?;
        Ok(listener)
    }

    /// Step 11: phase Running and the runner set's counts, written only when they differ. (ARC copies
    /// the counts only when `currentReplicas` differs; with `departures.ars_status_on_any_count` we
    /// compare all four, so a shift between buckets at a constant total is not missed.)
    pub(super) async fn update_status(
        &self,
        ars: &mut LazyCopy<AutoscalingRunnerSet>,
        runner_set: &EphemeralRunnerSet,
    ) -> Result<()> {
        let current = ars.get().status.clone().unwrap_or_default();
        let counts = runner_set.status.clone().unwrap_or_default();
        let mut wanted = current.clone();
        wanted.phase = Some(AutoscalingRunnerSetPhase::Running);
        let any_count = self.ctx.switches.departures.ars_status_on_any_count;
        if any_count || counts.current_replicas != current.current_runners {
            wanted.current_runners = counts.current_replicas;
            wanted.pending_ephemeral_runners = counts.pending_ephemeral_runners;
            wanted.running_ephemeral_runners = counts.running_ephemeral_runners;
            wanted.failed_ephemeral_runners = counts.failed_ephemeral_runners;
        }
        if ars.get().status.is_some() && wanted == current {
            return Ok(());
        }
        ars.mutate().status = Some(wanted);
        patch_object_status(&self.ctx.api, ars).await
    }
}

/// Whether the listener's spec, labels or annotations differ from the desired ones (an absent map
/// equals an empty one).
fn drifted(current: &AutoscalingListener, desired: &AutoscalingListener) -> bool {
    let map = |m: &Option<BTreeMap<String, String>>| m.clone().unwrap_or_default();
    current.spec != desired.spec
        || map(&current.metadata.labels) != map(&desired.metadata.labels)
        || map(&current.metadata.annotations) != map(&desired.metadata.annotations)
}
