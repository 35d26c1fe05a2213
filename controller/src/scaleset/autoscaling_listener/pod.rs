//! The listener pod (ARC-MODEL §3.4 steps 5–6), read from the cache:
//!
//! - missing → created (the pod event brings the next pass);
//! - its integrity hash (own spec plus the hashes of the AL, config secret, ServiceAccount, Role and
//!   RoleBinding) differs → deleted, to be recreated with the new inputs;
//! - its labels or annotations drifted → replaced;
//! - evicted, or its `listener` container terminated with any exit code → deleted. The next pass
//!   recreates it, and the new listener opens a fresh session. The config secret is kept.

use std::ops::ControlFlow;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use super::{AutoscalingListenerReconciler, Step, with_merged_metadata};
use crate::crd::constants::{ANNOTATION_INTEGRITY_HASH, LISTENER_CONTAINER_NAME};
use crate::kit::error::Result;
use crate::kit::meta::namespace_and_name;
use crate::runtime::api::is_not_found;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;
use crate::scaleset::resource_builder::ListenerPodInputs;

/// `status.reason` of a pod the kubelet evicted.
const EVICTED: &str = "Evicted";

impl AutoscalingListenerReconciler {
    /// The listener pod as wanted, as cached.
    pub(super) async fn ensure_pod(&self, inputs: ListenerPodInputs<'_>) -> Step<Arc<Pod>> {
        let desired = self.ctx.builder.listener_pod(inputs)?;
        let Some(current) = self.pods.get(&ObjectKey::from_resource(&desired)) else {
            self.create(&desired).await?;
            return Ok(ControlFlow::Break(Outcome::Done));
        };
        if integrity_hash(&current) != integrity_hash(&desired) {
            tracing::info!("listener pod inputs changed; deleting the pod to recreate it");
            self.delete_pod(&current).await?;
            return Ok(ControlFlow::Break(Outcome::Done));
        }
        if let Some(updated) = with_merged_metadata(&self.ctx, current.as_ref(), &desired) {
            let (namespace, name) = namespace_and_name(&updated);
            tracing::info!(%namespace, %name, "updating the listener pod metadata");
            self.ctx.api.replace(namespace, name, &updated).await?;
            return Ok(ControlFlow::Break(Outcome::Done));
        }
        Ok(ControlFlow::Continue(current))
    }

    /// Step 6: an evicted pod or a terminated listener container means a new pod.
    pub(super) async fn check_pod_health(&self, pod: &Pod) -> Result<Outcome> {
        let status = pod.status.as_ref();
        if status.and_then(|s| s.reason.as_deref()) == Some(EVICTED) {
            tracing::info!(message = ?status.and_then(|s| s.message.as_deref()), "listener pod was evicted");
            self.delete_pod(pod).await?;
            return Ok(Outcome::Done);
        }
        let terminated = listener_container(pod).and_then(|c| c.state.as_ref()?.terminated.as_ref());
        if let Some(terminated) = terminated {
            tracing::info!(exit_code = terminated.exit_code, reason = ?terminated.reason, "listener container terminated");
            self.delete_pod(pod).await?;
        }
        Ok(Outcome::Done)
    }

    /// Deletes the pod unless it is already going; a pod already gone is fine.
    pub(super) async fn delete_pod(&self, pod: &Pod) -> Result<()> {
        if pod.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let (namespace, name) = namespace_and_name(pod);
        tracing::info!(%namespace, %name, "deleting the listener pod");
        match self.ctx.api.delete::<Pod>(namespace, name, &Default::default()).await {
            Err(error) if is_not_found(&error) => Ok(()),
            result => result.map(drop).map_err(Into::into),
        }
    }
}

/// The status of the pod's `listener` container, once the kubelet reports one.
fn listener_container(pod: &Pod) -> Option<&ContainerStatus> {
    let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
    statuses.iter().find(|status| status.name == LISTENER_CONTAINER_NAME)
}

/// The `actions.github.com/integrity-hash` annotation of a pod.
fn integrity_hash(pod: &Pod) -> Option<&str> {
    pod.metadata.annotations.as_ref()?.get(ANNOTATION_INTEGRITY_HASH).map(String::as_str)
}
