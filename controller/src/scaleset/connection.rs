//! How a scale-set object's GitHub client connects (ARC's `actionsClientOptionsFor`): its `proxy`
//! spec, with each proxy server's `credentialSecretRef` (`username`, `password`) folded into the URL,
//! and its `githubServerTLS` CA, read from the ConfigMap key it names. Both are read uncached, in the
//! object's namespace, on every use, like the credentials; objects without either read nothing.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};

use super::autoscaling_listener::proxy::{ProxyCredentials, proxy_secret_data};
use super::context::ScaleSetContext;
use crate::crd::constants::{ENV_HTTP_PROXY, ENV_HTTPS_PROXY, ENV_NO_PROXY};
use crate::crd::{ProxyConfig, ProxyServerConfig, TlsConfig};
use crate::github::{ActionsClient, ConnectionOptions, ProxyUrls};
use crate::kit::{Error, Result};

/// Where an object's GitHub is and how to reach it.
#[derive(Debug, Clone, Copy)]
pub struct GitHubTarget<'a> {
    /// `githubConfigUrl`.
    pub url: &'a str,
    /// `githubConfigSecret`.
    pub secret: &'a str,
    /// `proxy`.
    pub proxy: Option<&'a ProxyConfig>,
    /// `githubServerTLS`.
    pub tls: Option<&'a TlsConfig>,
}

impl ScaleSetContext {
    /// The GitHub client for `target`, with everything it names read from `namespace`.
    pub async fn actions_client(&self, namespace: &str, target: GitHubTarget<'_>) -> Result<ActionsClient> {
        let options = self.connection_options(namespace, target.proxy, target.tls).await?;
        self.base.actions_client_from_secret(target.url, namespace, target.secret, &options).await
    }

    /// The proxies and extra CAs of `proxy` and `tls`, resolved in `namespace`.
    pub async fn connection_options(
        &self,
        namespace: &str,
        proxy: Option<&ProxyConfig>,
        tls: Option<&TlsConfig>,
    ) -> Result<ConnectionOptions> {
        let proxy = match proxy {
            Some(proxy) => Some(self.proxy_urls(namespace, proxy).await?),
            None => None,
        };
        Ok(ConnectionOptions { proxy, root_ca_pem: self.root_ca_pem(namespace, tls).await? })
    }

    /// The PEM of `tls`'s ConfigMap key, or empty without one.
    pub async fn root_ca_pem(&self, namespace: &str, tls: Option<&TlsConfig>) -> Result<String> {
        let reference =
            tls.and_then(|t| t.certificate_from.as_ref()).and_then(|c| c.config_map_key_ref.as_ref());
        let Some(reference) = reference else { return Ok(String::new()) };
        let (name, key) = (&reference.name, &reference.key);
        let map = self.api.get::<ConfigMap>(namespace, name).await?;
        let missing = |what: &str| {
            Error::Other(format!("githubServerTLS: {what} (ConfigMap {namespace}/{name}, key {key:?})"))
        };
        let map = map.ok_or_else(|| missing("the ConfigMap does not exist"))?;
        map.data.and_then(|mut data| data.remove(key)).ok_or_else(|| missing("the key is missing"))
    }

    async fn proxy_urls(&self, namespace: &str, proxy: &ProxyConfig) -> Result<ProxyUrls> {
        let http = self.proxy_credentials(namespace, proxy.http.as_ref()).await?;
        let https = self.proxy_credentials(namespace, proxy.https.as_ref()).await?;
        let data = proxy_secret_data(proxy, http.as_ref(), https.as_ref())
            .map_err(|e| Error::Other(e.to_string()))?;
        let value = |key: &str| data.get(key).cloned().unwrap_or_default();
        Ok(ProxyUrls {
            http: value(ENV_HTTP_PROXY),
            https: value(ENV_HTTPS_PROXY),
            no_proxy: value(ENV_NO_PROXY),
        })
    }

    async fn proxy_credentials(
        &self,
        namespace: &str,
        server: Option<&ProxyServerConfig>,
    ) -> Result<Option<ProxyCredentials>> {
        let Some(name) = server.map(|s| s.credential_secret_ref.as_str()).filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        let secret = self.api.get::<Secret>(namespace, name).await?;
        let secret =
            secret.ok_or_else(|| Error::MissingSecret { namespace: namespace.into(), name: name.into() })?;
        let data = secret.data.unwrap_or_default();
        let text =
            |key: &str| data.get(key).map(|v| String::from_utf8_lossy(&v.0).into_owned()).unwrap_or_default();
        Ok(Some(ProxyCredentials { username: text("username"), password: text("password") }))
    }
}
