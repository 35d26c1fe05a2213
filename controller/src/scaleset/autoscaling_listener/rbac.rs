//! The listener's identity and permissions (ARC-MODEL §3.4 step 4): its ServiceAccount in the
//! controller namespace, and a Role and RoleBinding in the ARS namespace letting it patch its runner
//! set and its runners. Each is read from the cache, created when missing, and replaced (an `Update`,
//! so a stale cache gets a Conflict) when its labels or annotations, or the Role's rules, drifted.
//! As in ARC, creating the ServiceAccount waits for its watch event; creating the Role or
//! RoleBinding, and any replace, asks for a rate-limited requeue.

use std::ops::ControlFlow;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};

use super::{AutoscalingListenerReconciler, Step, with_merged_metadata};
use crate::crd::AutoscalingListener;
use crate::kit::error::Result;
use crate::kit::meta::namespace_and_name;
use crate::runtime::api::ApiResource;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;

impl AutoscalingListenerReconciler {
    /// The listener's ServiceAccount, as cached once it is as wanted.
    pub(super) async fn ensure_service_account(
        &self,
        listener: &AutoscalingListener,
    ) -> Step<Arc<ServiceAccount>> {
        let desired = self.ctx.builder.listener_service_account(listener)?;
        let Some(current) = self.service_accounts.get(&ObjectKey::from_resource(&desired)) else {
            self.create(&desired).await?;
            return Ok(ControlFlow::Break(Outcome::Done));
        };
        match with_merged_metadata(&self.ctx, current.as_ref(), &desired) {
            Some(updated) => self.replace(&updated).await,
            None => Ok(ControlFlow::Continue(current)),
        }
    }

    /// The listener's Role, as cached once it is as wanted.
    pub(super) async fn ensure_role(&self, listener: &AutoscalingListener) -> Step<Arc<Role>> {
        let desired = self.ctx.builder.listener_role(listener)?;
        let Some(current) = self.roles.get(&ObjectKey::from_resource(&desired)) else {
            self.create(&desired).await?;
            return Ok(ControlFlow::Break(Outcome::Requeue));
        };
        let merged = with_merged_metadata(&self.ctx, current.as_ref(), &desired);
        let rules_drifted = current.rules != desired.rules;
        if merged.is_none() && !rules_drifted {
            return Ok(ControlFlow::Continue(current));
        }
        let mut updated = merged.unwrap_or_else(|| Role::clone(&current));
        updated.rules = desired.rules;
        self.replace(&updated).await
    }

    /// The listener's RoleBinding, as cached once it is as wanted.
    pub(super) async fn ensure_role_binding(
        &self,
        listener: &AutoscalingListener,
        role: &Role,
        service_account: &ServiceAccount,
    ) -> Step<Arc<RoleBinding>> {
        let desired = self.ctx.builder.listener_role_binding(listener, role, service_account)?;
        let Some(current) = self.role_bindings.get(&ObjectKey::from_resource(&desired)) else {
            self.create(&desired).await?;
            return Ok(ControlFlow::Break(Outcome::Requeue));
        };
        match with_merged_metadata(&self.ctx, current.as_ref(), &desired) {
            Some(updated) => self.replace(&updated).await,
            None => Ok(ControlFlow::Continue(current)),
        }
    }

    /// Creates `object` in its own namespace.
    pub(super) async fn create<K: ApiResource>(&self, object: &K) -> Result<()> {
        let (namespace, name) = namespace_and_name(object);
        tracing::info!(kind = %K::kind(&()), %namespace, %name, "creating");
        self.ctx.api.create(namespace, object).await?;
        Ok(())
    }

    /// Replaces `object` (an `Update` carrying its cached resourceVersion) and asks for a requeue.
    pub(super) async fn replace<K: ApiResource, T>(&self, object: &K) -> Step<T> {
        let (namespace, name) = namespace_and_name(object);
        tracing::info!(kind = %K::kind(&()), %namespace, %name, "updating");
        self.ctx.api.replace(namespace, name, object).await?;
        Ok(ControlFlow::Break(Outcome::Requeue))
    }
}
