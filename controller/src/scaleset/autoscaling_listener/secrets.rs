//! The listener's secrets (ARC-MODEL §3.4 step 4), always read straight from the API server:
//!
//! - `<al>-proxy`, only when the listener has a proxy: created from the proxy config with the
//!   credentials of its `credentialSecretRef`s (read in the ARS namespace); afterwards only its
//!   metadata is kept in line, as in ARC.
//! - `<al>-config`: the listener's config file, with the credentials copied from the ARS's GitHub
//!   config secret and the `githubServerTLS` CA (ARC's `server_root_ca`) read from its ConfigMap. It is rebuilt on every pass; when its labels or annotations (which carry the
//!   hash of the data) drifted it is replaced, and the replacement carries the new data too (ARC
//!   replaces only the metadata, leaving a hash that describes data the secret does not hold).
//!
//! Creating or replacing either asks for a rate-limited requeue, as ARC does.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use k8s_openapi::api::core::v1::Secret;

use super::proxy::{ProxyCredentials, proxy_secret_data};
use super::{AutoscalingListenerReconciler, Step, with_merged_metadata};
use crate::crd::{AutoscalingListener, AutoscalingRunnerSet, ProxyConfig, ProxyServerConfig};
use crate::kit::error::{Error, Result};
use crate::kit::meta::namespace_and_name;
use crate::runtime::outcome::Outcome;
use crate::scaleset::resource_builder::GitHubCredentials;
use crate::scaleset::resource_builder::listener::{listener_config_secret_name, listener_proxy_secret_name};

impl AutoscalingListenerReconciler {
    /// The proxy secret, when the listener has a proxy.
    pub(super) async fn ensure_proxy_secret(&self, listener: &AutoscalingListener) -> Step {
        let Some(proxy) = &listener.spec.proxy else { return Ok(ControlFlow::Continue(())) };
        let (namespace, _) = namespace_and_name(listener);
        let name = listener_proxy_secret_name(listener)?;
        let Some(current) = self.ctx.api.get::<Secret>(namespace, &name).await? else {
            let runner_set_namespace = &listener.spec.autoscaling_runner_set_namespace;
            let data = self.resolve_proxy(proxy, runner_set_namespace).await?;
            self.create(&self.ctx.builder.listener_proxy_secret(listener, data)?).await?;
            return Ok(ControlFlow::Break(Outcome::Requeue));
        };
        let desired = self.ctx.builder.listener_proxy_secret(listener, text_data(&current))?;
        match with_merged_metadata(&self.ctx, &current, &desired) {
            Some(updated) => self.replace(&updated).await,
            None => Ok(ControlFlow::Continue(())),
        }
    }

    /// The `<al>-config` secret, as read once it is as wanted.
    pub(super) async fn ensure_config_secret(
        &self,
        listener: &AutoscalingListener,
        runner_set: &AutoscalingRunnerSet,
    ) -> Step<Secret> {
        let credentials = self.github_credentials(runner_set).await?;
        let runner_set_namespace = &listener.spec.autoscaling_runner_set_namespace;
        let tls = listener.spec.github_server_tls.as_ref();
        let server_root_ca = self.ctx.root_ca_pem(runner_set_namespace, tls).await?;
        let desired = self.ctx.builder.listener_config_secret(listener, &credentials, &server_root_ca)?;
        let (namespace, _) = namespace_and_name(listener);
        let name = listener_config_secret_name(listener)?;
        let Some(current) = self.ctx.api.get::<Secret>(namespace, &name).await? else {
            self.create(&desired).await?;
            return Ok(ControlFlow::Break(Outcome::Requeue));
        };
        match with_merged_metadata(&self.ctx, &current, &desired) {
            Some(mut updated) => {
                updated.data = desired.data;
                self.replace(&updated).await
            }
            None => Ok(ControlFlow::Continue(current)),
        }
    }

    /// The credentials in the ARS's GitHub config secret, read uncached.
    async fn github_credentials(&self, runner_set: &AutoscalingRunnerSet) -> Result<GitHubCredentials> {
        let (namespace, _) = namespace_and_name(runner_set);
        let secret_name = &runner_set.spec.github_config_secret;
        let secret = self.read_secret(namespace, secret_name).await?;
        GitHubCredentials::from_secret_data(&secret.data.unwrap_or_default())
            .map_err(|source| Error::Credentials { secret: secret_name.clone(), source })
    }

    /// The proxy secret's data, with each server's credentials read from `namespace`.
    async fn resolve_proxy(&self, proxy: &ProxyConfig, namespace: &str) -> Result<BTreeMap<String, String>> {
        let http = self.proxy_credentials(proxy.http.as_ref(), namespace).await?;
        let https = self.proxy_credentials(proxy.https.as_ref(), namespace).await?;
        proxy_secret_data(proxy, http.as_ref(), https.as_ref())
            .map_err(|error| Error::Other(error.to_string()))
    }

    /// The `username` and `password` of a proxy server's credential secret, if it names one.
    async fn proxy_credentials(
        &self,
        server: Option<&ProxyServerConfig>,
        namespace: &str,
    ) -> Result<Option<ProxyCredentials>> {
        let Some(reference) = server.map(|s| s.credential_secret_ref.as_str()).filter(|r| !r.is_empty())
        else {
            return Ok(None);
        };
        let data = text_data(&self.read_secret(namespace, reference).await?);
        let value = |key: &str| data.get(key).cloned().unwrap_or_default();
        Ok(Some(ProxyCredentials { username: value("username"), password: value("password") }))
    }

    /// Secret `namespace/name`, uncached; a missing one is an error naming it.
    async fn read_secret(&self, namespace: &str, name: &str) -> Result<Secret> {
        self.ctx
            .api
            .get::<Secret>(namespace, name)
            .await?
            .ok_or_else(|| Error::MissingSecret { namespace: namespace.to_string(), name: name.to_string() })
    }
}

/// A secret's data as text; bytes that are not UTF-8 become U+FFFD.
fn text_data(secret: &Secret) -> BTreeMap<String, String> {
    let data = secret.data.as_ref().into_iter().flatten();
    data.map(|(key, value)| (key.clone(), String::from_utf8_lossy(&value.0).into_owned())).collect()
}
