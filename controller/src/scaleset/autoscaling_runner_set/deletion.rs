//! Tearing an AutoscalingRunnerSet down (ARC-MODEL §3.3 step 2): the listener first (so no new jobs
//! are taken), then the runner set (whose own finalizer removes the runners), each awaited with a
//! 5 s requeue; then the scale set at GitHub and its id annotation; then the
//! `actions.github.com/cleanup-protection` finalizer on the helm-made resources the ARS names in its
//! `actions.github.com/cleanup-*` annotations; and last our own finalizer.
//!
//! The same listener and runner-set cleanups serve the Outdated paths ([`super::runner_set`]).

use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use std::sync::Arc;

use super::{
    AutoscalingRunnerSetReconciler, CLEANUP_REQUEUE, has_finalizer, namespace_and_name, patch_object,
    remove_finalizer,
};
use crate::crd::constants::{
    ANNOTATION_CLEANUP_GITHUB_SECRET, ANNOTATION_CLEANUP_KUBERNETES_MODE_ROLE,
    ANNOTATION_CLEANUP_KUBERNETES_MODE_ROLE_BINDING, ANNOTATION_CLEANUP_KUBERNETES_MODE_SERVICE_ACCOUNT,
    ANNOTATION_CLEANUP_MANAGER_ROLE, ANNOTATION_CLEANUP_MANAGER_ROLE_BINDING,
    ANNOTATION_CLEANUP_NO_PERMISSION_SERVICE_ACCOUNT, ANNOTATION_RUNNER_SCALE_SET_ID,
    AUTOSCALING_RUNNER_SET_FINALIZER, CLEANUP_PROTECTION_FINALIZER,
};
use crate::crd::{AutoscalingListener, AutoscalingRunnerSet, EphemeralRunnerSet};
use crate::hash::listener_name;
use crate::kit::error::Result;
use crate::runtime::api::{ApiResource, is_forbidden, is_not_found};
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::object_key::ObjectKey;
use crate::runtime::outcome::Outcome;

/// Which helm-made dependents may carry `cleanup-protection`, by the annotation naming each, in
/// ARC's order.
#[derive(Debug, Clone, Copy)]
enum Dependent {
    /// A RoleBinding.
    RoleBinding,
    /// A Role.
    Role,
    /// A ServiceAccount.
    ServiceAccount,
    /// A Secret (the GitHub config secret; a Forbidden read counts as gone, as in ARC).
    Secret,
}

const PROTECTED_DEPENDENTS: [(&str, Dependent); 7] = [
    (ANNOTATION_CLEANUP_KUBERNETES_MODE_ROLE_BINDING, Dependent::RoleBinding),
    (ANNOTATION_CLEANUP_KUBERNETES_MODE_ROLE, Dependent::Role),
    (ANNOTATION_CLEANUP_KUBERNETES_MODE_SERVICE_ACCOUNT, Dependent::ServiceAccount),
    (ANNOTATION_CLEANUP_NO_PERMISSION_SERVICE_ACCOUNT, Dependent::ServiceAccount),
    (ANNOTATION_CLEANUP_GITHUB_SECRET, Dependent::Secret),
    (ANNOTATION_CLEANUP_MANAGER_ROLE_BINDING, Dependent::RoleBinding),
    (ANNOTATION_CLEANUP_MANAGER_ROLE, Dependent::Role),
];

impl AutoscalingRunnerSetReconciler {
    /// The deleting path: clean up in order, then let the ARS go.
    pub(super) async fn finalize(&self, ars: &mut LazyCopy<AutoscalingRunnerSet>) -> Result<Outcome> {
        if !has_finalizer(ars.get(), AUTOSCALING_RUNNER_SET_FINALIZER) {
            return Ok(Outcome::Done);
        }
        if !self.cleanup_listener(ars.get()).await? || !self.cleanup_runner_set(ars.get()).await? {
            return Ok(Outcome::RequeueAfter(CLEANUP_REQUEUE));
        }
        self.delete_scale_set(ars).await?;
        self.strip_cleanup_protection(ars.get()).await?;
        remove_finalizer(ars, AUTOSCALING_RUNNER_SET_FINALIZER);
        match patch_object(&self.ctx.api, ars).await {
            Err(crate::kit::error::Error::Kube(error)) if is_not_found(&error) => Ok(Outcome::Done),
            result => result.map(|()| Outcome::Done),
        }
    }

    /// Deletes the ARS's listener if it is there; true once it is gone from the cache.
    pub(super) async fn cleanup_listener(&self, ars: &AutoscalingRunnerSet) -> Result<bool> {
        let found = self.listeners.get(&self.listener_key(ars));
        self.delete_until_gone::<AutoscalingListener>(found).await
    }

    /// Deletes the ARS's runner set if it is there; true once it is gone from the cache.
    pub(super) async fn cleanup_runner_set(&self, ars: &AutoscalingRunnerSet) -> Result<bool> {
        let found = self.ephemeral_runner_sets.get(&Self::runner_set_key(ars));
        self.delete_until_gone::<EphemeralRunnerSet>(found).await
    }

    /// Where the ARS's listener lives: the controller namespace, under ARC's hashed name.
    pub(super) fn listener_key(&self, ars: &AutoscalingRunnerSet) -> ObjectKey {
        let (namespace, name) = namespace_and_name(ars);
        let spec = &ars.spec;
        let listener = listener_name(name, namespace, &spec.runner_group, &spec.github_config_url);
        ObjectKey::new(&self.ctx.settings.controller_namespace, listener)
    }

    /// Issues a delete for a cached object not yet deleting; true when there was nothing cached.
    async fn delete_until_gone<K: ApiResource>(&self, found: Option<Arc<K>>) -> Result<bool> {
        let Some(object) = found else { return Ok(true) };
        if object.meta().deletion_timestamp.is_none() {
            let (namespace, name) = namespace_and_name(object.as_ref());
            tracing::info!(kind = %K::kind(&()), %namespace, %name, "deleting");
            self.ctx.api.delete::<K>(namespace, name, &Default::default()).await?;
        }
        Ok(false)
    }

    /// Deletes the scale set at GitHub and drops the id annotation. An ARS that never got (or lost)
    /// a usable id has nothing to delete, as in ARC; a scale set already gone at GitHub counts as
    /// deleted, so a half-finished cleanup cannot wedge the finalizer.
    async fn delete_scale_set(&self, ars: &mut LazyCopy<AutoscalingRunnerSet>) -> Result<()> {
        let annotations = ars.get().metadata.annotations.as_ref();
        let Some(raw_id) = annotations.and_then(|a| a.get(ANNOTATION_RUNNER_SCALE_SET_ID)) else {
            return Ok(());
        };
        let Ok(id) = raw_id.parse::<i64>() else {
            tracing::info!(
                raw_id,
                "scale-set id annotation is not a number; skipping its deletion at GitHub"
            );
            return Ok(());
        };
        let client = self.actions_client(ars.get()).await?;
        match client.delete_runner_scale_set(id).await {
            Err(error) if error.status() == Some(404) => {
                tracing::info!(id, "runner scale set already gone at GitHub");
            }
            result => result?,
        }
        if let Some(annotations) = ars.mutate().metadata.annotations.as_mut() {
            annotations.remove(ANNOTATION_RUNNER_SCALE_SET_ID);
        }
        patch_object(&self.ctx.api, ars).await
    }

    /// Removes `cleanup-protection` from every dependent the ARS names; the first failure stops.
    async fn strip_cleanup_protection(&self, ars: &AutoscalingRunnerSet) -> Result<()> {
        let (namespace, _) = namespace_and_name(ars);
        let Some(annotations) = ars.metadata.annotations.as_ref() else { return Ok(()) };
        for (annotation, dependent) in PROTECTED_DEPENDENTS {
            let Some(name) = annotations.get(annotation) else { continue };
            match dependent {
                Dependent::RoleBinding => self.unprotect::<RoleBinding>(namespace, name, false).await?,
                Dependent::Role => self.unprotect::<Role>(namespace, name, false).await?,
                Dependent::ServiceAccount => self.unprotect::<ServiceAccount>(namespace, name, false).await?,
                Dependent::Secret => self.unprotect::<Secret>(namespace, name, true).await?,
            }
        }
        Ok(())
    }

    /// Reads `namespace/name` from the API server and patches `cleanup-protection` off it. A missing
    /// object (or, with `forbidden_is_gone`, an unreadable one) is already unprotected.
    async fn unprotect<K: ApiResource>(
        &self,
        namespace: &str,
        name: &str,
        forbidden_is_gone: bool,
    ) -> Result<()> {
        let object = match self.ctx.api.get::<K>(namespace, name).await {
            Ok(Some(object)) => object,
            Ok(None) => return Ok(()),
            Err(error) if forbidden_is_gone && is_forbidden(&error) => return Ok(()),
            Err(error) => return Err(error.into()),
        };
        let mut object = LazyCopy::new(Arc::new(object), self.ctx.copy_mode(), &self.ctx.metrics);
        if remove_finalizer(&mut object, CLEANUP_PROTECTION_FINALIZER) {
            tracing::info!(kind = %K::kind(&()), %namespace, %name, "removing the cleanup-protection finalizer");
            patch_object(&self.ctx.api, &object).await?;
        }
        Ok(())
    }
}
