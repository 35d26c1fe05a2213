//! Tearing a listener down (ARC-MODEL §3.4 step 1): delete the pod, the config secret, the proxy
//! secret, the RoleBinding, the Role and the ServiceAccount, in that order, each only when present
//! and not already deleting; while any of them is still there, look again in a second; once all are
//! gone, drop the finalizer. The pod, ServiceAccount, Role and RoleBinding are looked up in the cache,
//! the secrets on the API server.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;

use super::AutoscalingListenerReconciler;
use crate::crd::AutoscalingListener;
use crate::crd::constants::AUTOSCALING_LISTENER_FINALIZER;
use crate::kit::error::{Error, Result};
use crate::kit::meta::{has_finalizer, namespace_and_name, remove_finalizer};
use crate::kit::patch::patch_object;
use crate::runtime::api::{ApiResource, is_not_found};
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;
use crate::scaleset::resource_builder::listener::{listener_config_secret_name, listener_proxy_secret_name};

/// Wait between checks while the listener's resources are going away (ARC: 1 s).
const CLEANUP_REQUEUE: Duration = Duration::from_secs(1);

impl AutoscalingListenerReconciler {
    /// The deleting path.
    pub(super) async fn finalize(&self, listener: &mut LazyCopy<AutoscalingListener>) -> Result<Outcome> {
        if !has_finalizer(listener.get(), AUTOSCALING_LISTENER_FINALIZER) {
            return Ok(Outcome::Done);
        }
        if self.cleanup_resources(listener.get()).await? {
            tracing::info!("waiting for the listener's resources to be deleted");
            return Ok(Outcome::RequeueAfter(CLEANUP_REQUEUE));
        }
        remove_finalizer(listener, AUTOSCALING_LISTENER_FINALIZER);
        match patch_object(&self.ctx.api, listener).await {
            Err(Error::Kube(error)) if is_not_found(&error) => Ok(Outcome::Done),
            result => result.map(|()| Outcome::Done),
        }
    }

    /// Deletes what is still there; true while anything was found.
    async fn cleanup_resources(&self, listener: &AutoscalingListener) -> Result<bool> {
        let own = ObjectKey::from_resource(listener);
        let in_runner_set_namespace =
            ObjectKey::new(&listener.spec.autoscaling_runner_set_namespace, own.name.clone());
        let mut pending = self.delete_found(self.pods.get(&own)).await?;
        pending |= self.delete_secret(&own.namespace, &listener_config_secret_name(listener)?).await?;
        if listener.spec.proxy.is_some() {
            pending |= self.delete_secret(&own.namespace, &listener_proxy_secret_name(listener)?).await?;
        }
        pending |= self.delete_found(self.role_bindings.get(&in_runner_set_namespace)).await?;
        pending |= self.delete_found(self.roles.get(&in_runner_set_namespace)).await?;
        pending |= self.delete_found(self.service_accounts.get(&own)).await?;
        Ok(pending)
    }

    /// Secret `namespace/name`, read uncached and deleted if present; true when it was there.
    async fn delete_secret(&self, namespace: &str, name: &str) -> Result<bool> {
        let found = self.ctx.api.get::<Secret>(namespace, name).await?;
        self.delete_found(found.map(Arc::new)).await
    }

    /// Deletes `found` unless it is already deleting; true when there was something.
    async fn delete_found<K: ApiResource>(&self, found: Option<Arc<K>>) -> Result<bool> {
        let Some(object) = found else { return Ok(false) };
        if object.meta().deletion_timestamp.is_none() {
            let (namespace, name) = namespace_and_name(object.as_ref());
            tracing::info!(kind = %K::kind(&()), %namespace, %name, "deleting");
            match self.ctx.api.delete::<K>(namespace, name, &Default::default()).await {
                Err(error) if !is_not_found(&error) => return Err(error.into()),
                _ => {}
            }
        }
        Ok(true)
    }
}
