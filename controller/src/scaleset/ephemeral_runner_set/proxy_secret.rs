//! The set's proxy secret (ARC's `reconcileEphemeralRunnerSetProxySecret` and its two clean-ups): when
//! the runner spec names a proxy, one secret in the set's namespace holds `http_proxy`, `https_proxy`
//! and `no_proxy` with the credentials folded into the URLs, and every runner pod reads its proxy
//! environment from it.
//!
//! Secrets are read straight from the API server (ARC-MODEL §1.1). A missing secret is created; a
//! drifted one (data, or labels and annotations the builder wants) is replaced with `Update`, which
//! checks the resourceVersion, and the reconcile is asked to come back in a second.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::api::DeleteParams;

use super::EphemeralRunnerSetReconciler;
use crate::crd::constants::{ENV_HTTP_PROXY, ENV_HTTPS_PROXY, ENV_NO_PROXY};
use crate::crd::{EphemeralRunnerSet, ProxyConfig, ProxyServerConfig};
use crate::kit::error::{Error, Result};
use crate::runtime::api::is_not_found;
use crate::scaleset::resource_builder::merge_annotations;
use crate::scaleset::resource_builder::runner_set::ephemeral_runner_set_proxy_secret_name;

/// What [`EphemeralRunnerSetReconciler::reconcile_proxy_secret`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProxySecretChange {
    /// No proxy configured, the secret was created, or it already matched.
    Unchanged,
    /// The stored secret drifted and was replaced.
    Updated,
}

impl EphemeralRunnerSetReconciler {
    /// Creates the proxy secret when missing and replaces it when it drifted.
    pub(crate) async fn reconcile_proxy_secret(&self, ers: &EphemeralRunnerSet) -> Result<ProxySecretChange> {
        let Some(proxy) = &ers.spec.ephemeral_runner_spec.proxy else {
            return Ok(ProxySecretChange::Unchanged);
        };
        let namespace = namespace_of(ers);
        let name = ephemeral_runner_set_proxy_secret_name(ers)?;
        let stored: Option<Secret> = self.ctx.api.get(namespace, &name).await?;
        let data = self.proxy_secret_data(namespace, proxy).await?;
        let desired = self.ctx.builder.ephemeral_runner_set_proxy_secret(ers, data)?;
        let Some(stored) = stored else {
            tracing::info!(secret = %name, "Creating a proxy secret for the runner pods");
            self.ctx.api.create(namespace, &desired).await?;
            return Ok(ProxySecretChange::Unchanged);
        };
        let Some(updated) = self.drifted(&stored, &desired) else {
            return Ok(ProxySecretChange::Unchanged);
        };
        tracing::info!(secret = %name, "Updating the runner set's proxy secret");
        self.ctx.api.replace(namespace, &name, &updated).await?;
        Ok(ProxySecretChange::Updated)
    }

    /// The clean-up of the deleting path: `true` once the proxy secret is gone (or was never needed);
    /// `false` after asking for its deletion.
    pub(crate) async fn proxy_secret_gone(&self, ers: &EphemeralRunnerSet) -> Result<bool> {
        if ers.spec.ephemeral_runner_spec.proxy.is_none() {
            return Ok(true);
        }
        let namespace = namespace_of(ers);
        let name = ephemeral_runner_set_proxy_secret_name(ers)?;
        let stored: Option<Secret> = self.ctx.api.get(namespace, &name).await?;
        if stored.is_none() {
            return Ok(true);
        }
        self.delete_proxy_secret(ers).await?;
        Ok(false)
    }

    /// Deletes the proxy secret, if a proxy is configured; NotFound is fine.
    pub(crate) async fn delete_proxy_secret(&self, ers: &EphemeralRunnerSet) -> Result<()> {
        if ers.spec.ephemeral_runner_spec.proxy.is_none() {
            return Ok(());
        }
        let name = ephemeral_runner_set_proxy_secret_name(ers)?;
        tracing::info!(secret = %name, "Deleting the proxy secret");
        match self.ctx.api.delete::<Secret>(namespace_of(ers), &name, &DeleteParams::default()).await {
            Err(error) if !is_not_found(&error) => Err(error.into()),
            _ => Ok(()),
        }
    }

    /// `stored` with the desired data, labels and annotations merged in, when that changes anything.
    fn drifted(&self, stored: &Secret, desired: &Secret) -> Option<Secret> {
        let data = |s: &Secret| s.data.clone().unwrap_or_default();
        let labels = |s: &Secret| s.metadata.labels.clone().unwrap_or_default();
        let annotations = |s: &Secret| s.metadata.annotations.clone().unwrap_or_default();
        let merged_labels = self.ctx.builder.filter_and_merge_labels(&labels(stored), &labels(desired));
        let merged_annotations = merge_annotations(&annotations(stored), &annotations(desired));
        if data(stored) == data(desired)
            && labels(stored) == merged_labels
            && annotations(stored) == merged_annotations
        {
            return None;
        }
        let mut updated = stored.clone();
        updated.data = Some(data(desired));
        updated.metadata.labels = Some(merged_labels);
        updated.metadata.annotations = Some(merged_annotations);
        Some(updated)
    }

    /// ARC's `ProxyConfig.ToSecretData`: the three proxy variables, each present (empty when unset),
    /// with the credentials of `credentialSecretRef` (keys `username`, `password`) in the URLs.
    async fn proxy_secret_data(
        &self,
        namespace: &str,
        proxy: &ProxyConfig,
    ) -> Result<BTreeMap<String, String>> {
        let http = self.proxy_url(namespace, proxy.http.as_ref()).await?;
        let https = self.proxy_url(namespace, proxy.https.as_ref()).await?;
        Ok(BTreeMap::from([
            (ENV_HTTP_PROXY.to_string(), http),
            (ENV_HTTPS_PROXY.to_string(), https),
            (ENV_NO_PROXY.to_string(), proxy.no_proxy.join(",")),
        ]))
    }

    async fn proxy_url(&self, namespace: &str, server: Option<&ProxyServerConfig>) -> Result<String> {
        let Some(server) = server else { return Ok(String::new()) };
        if server.credential_secret_ref.is_empty() {
            return Ok(server.url.clone());
        }
        let secret: Option<Secret> = self.ctx.api.get(namespace, &server.credential_secret_ref).await?;
        let secret = secret.ok_or_else(|| Error::MissingSecret {
            namespace: namespace.to_string(),
            name: server.credential_secret_ref.clone(),
        })?;
        let data = secret.data.unwrap_or_default();
        let text =
            |key: &str| data.get(key).map(|v| String::from_utf8_lossy(&v.0).into_owned()).unwrap_or_default();
        url_with_credentials(&server.url, &text("username"), &text("password")).ok_or_else(|| {
            Error::Other(format!("proxy URL {:?} has no scheme (want scheme://host)", server.url))
        })
    }
}

fn namespace_of(ers: &EphemeralRunnerSet) -> &str {
    ers.metadata.namespace.as_deref().unwrap_or_default()
}

/// `url` with `user:password@` as its userinfo (replacing any it had), escaped as Go's
/// `url.UserPassword(...).String()` does. `None` when `url` has no `scheme://`.
pub(crate) fn url_with_credentials(url: &str, user: &str, password: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    Some(format!("{scheme}://{}:{}@{host}{tail}", escape_userinfo(user), escape_userinfo(password)))
}

/// Percent-encodes everything but unreserved characters and `$&+,;=` (Go's `encodeUserPassword`).
fn escape_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~$&+,;=".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_into_the_userinfo_escaped_like_go() {
        assert_eq!(
            url_with_credentials("http://proxy.example.com", "user", "pass").as_deref(),
            Some("http://user:pass@proxy.example.com")
        );
        assert_eq!(
            url_with_credentials("https://proxy:3128/path?q", "a@b", "p:/?%").as_deref(),
            Some("https://a%40b:p%3A%2F%3F%25@proxy:3128/path?q")
        );
        assert_eq!(
            url_with_credentials("http://old:cred@proxy", "new", "x$&+,;=y").as_deref(),
            Some("http://new:x$&+,;=y@proxy")
        );
    }

    #[test]
    fn a_url_without_a_scheme_is_refused() {
        assert_eq!(url_with_credentials("proxy.example.com:3128", "u", "p"), None);
    }
}
