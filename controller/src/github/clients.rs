//! How the controller reaches GitHub, and its clients once built.
//!
//! [`GitHubTransport`] is the seam, as a `kube::Client` is for Kubernetes: HTTPS to the real GitHub in
//! production, or any `tower::Service` over `http` requests. [`ActionsClients`] builds one
//! [`ActionsClient`] per (config URL, credentials) on that transport and caches it, as ARC's
//! multiclient does, so a reconcile reuses the admin token of the last one.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::client::{ActionsClient, Credentials};
use super::connection::{ConnectionOptions, ProxyUrls};
use super::credentials::GitHubCredentials;
use super::error::{ActionsError, BoxError};
use super::transport::{BoxedService, HttpRequest, boxed};
use crate::SharedClock;
use crate::runtime::lease_deadline::LeaseDeadline;
use crate::runtime::metrics::Metrics;

/// How a process reaches GitHub.
#[derive(Clone)]
pub enum GitHubTransport {
    /// HTTPS to GitHub (or GitHub Enterprise Server) with the platform's root certificates, through
    /// the environment's proxies unless an object names its own.
    Https,
    /// [`GitHubTransport::Https`] through these proxies (`arc-controller run --https-proxy …`) unless
    /// an object names its own.
    HttpsVia(ProxyUrls),
    /// Any service over `http` requests with absolute URIs (a proxy, a recorder, a fake).
    Service(BoxedService),
    /// Another transport whose writes are refused past a leader's renew deadline.
    Guarded(Box<GitHubTransport>, LeaseDeadline),
}

impl std::fmt::Debug for GitHubTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GitHubTransport::Https => "GitHubTransport::Https",
            GitHubTransport::HttpsVia(_) => "GitHubTransport::HttpsVia",
            GitHubTransport::Service(_) => "GitHubTransport::Service",
            GitHubTransport::Guarded(..) => "GitHubTransport::Guarded",
        })
    }
}

impl GitHubTransport {
    /// A transport over `service`.
    pub fn service<S, B>(service: S) -> Self
    where
        S: tower::Service<HttpRequest, Response = http::Response<B>> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        GitHubTransport::Service(boxed(service))
    }

    /// This transport, its writes (every method but GET, HEAD and OPTIONS) refused once `deadline` has
    /// passed (`ops::lease_guard`).
    pub fn guarded(self, deadline: LeaseDeadline) -> Self {
        GitHubTransport::Guarded(Box::new(self), deadline)
    }

    /// A client for `github_config_url` with `credentials` on this transport. HTTPS clients must be
    /// built inside a tokio runtime (their connection pool spawns tasks) and use `options` (proxies,
    /// extra CAs); a service transport is the whole way to GitHub and ignores them.
    pub fn client(
        &self,
        github_config_url: &str,
        credentials: Credentials,
        options: &ConnectionOptions,
        clock: SharedClock,
        metrics: Metrics,
    ) -> Result<ActionsClient, ActionsError> {
        match self {
            GitHubTransport::Https => {
                ActionsClient::https_with(github_config_url, credentials, options, clock, metrics)
            }
            GitHubTransport::HttpsVia(proxy) => {
                let mut options = options.clone();
                options.proxy.get_or_insert_with(|| proxy.clone());
                ActionsClient::https_with(github_config_url, credentials, &options, clock, metrics)
            }
            GitHubTransport::Service(service) => {
                ActionsClient::over(service.clone(), github_config_url, credentials, clock, metrics)
            }
            GitHubTransport::Guarded(inner, deadline) => Ok(inner
                .client(github_config_url, credentials, options, clock, metrics)?
                .with_write_guard(deadline.clone())),
        }
    }
}

/// The GitHub clients of one process, built on first use and cached by URL and credentials.
pub struct ActionsClients {
    transport: GitHubTransport,
    clock: SharedClock,
    metrics: Metrics,
    cache: Mutex<BTreeMap<(String, u64), ActionsClient>>,
}

impl std::fmt::Debug for ActionsClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cached = self.cache.lock().map(|c| c.len()).unwrap_or(0);
        f.debug_struct("ActionsClients")
            .field("transport", &self.transport)
            .field("cached", &cached)
            .finish_non_exhaustive()
    }
}

impl ActionsClients {
    /// Clients on `transport`.
    pub fn new(transport: GitHubTransport, clock: SharedClock, metrics: Metrics) -> Self {
        ActionsClients { transport, clock, metrics, cache: Mutex::new(BTreeMap::new()) }
    }

    /// The client for `github_config_url` with `credentials` and `options`, built once per distinct
    /// triple (a failed build is not cached).
    pub fn get(
        &self,
        github_config_url: &str,
        credentials: &GitHubCredentials,
        options: &ConnectionOptions,
    ) -> Result<ActionsClient, ActionsError> {
        let fingerprint = credentials.fingerprint() ^ options.fingerprint().rotate_left(1);
        let key = (github_config_url.to_string(), fingerprint);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = cache.get(&key) {
            return Ok(client.clone());
        }
        let client = self.transport.client(
            github_config_url,
            credentials.client_credentials()?,
            options,
            self.clock.clone(),
            self.metrics.clone(),
        )?;
        cache.insert(key, client.clone());
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::Full;

    use super::*;
    use crate::SystemClock;

    fn never_called() -> GitHubTransport {
        GitHubTransport::service(tower::service_fn(|_: HttpRequest| async {
            Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::new())))
        }))
    }

    #[test]
    fn clients_are_built_once_per_url_and_credentials() {
        let clients = ActionsClients::new(never_called(), Arc::new(SystemClock), Metrics::new());
        let creds = GitHubCredentials { github_token: "t".into(), ..Default::default() };
        let plain = ConnectionOptions::default();
        let a = clients.get("https://github.com/o", &creds, &plain).unwrap();
        let b = clients.get("https://github.com/o", &creds, &plain).unwrap();
        assert!(Arc::ptr_eq(&a.inner, &b.inner), "the second get reuses the first client");
        let other = GitHubCredentials { github_token: "u".into(), ..Default::default() };
        let c = clients.get("https://github.com/o", &other, &plain).unwrap();
        assert!(!Arc::ptr_eq(&a.inner, &c.inner));
        let with_ca = ConnectionOptions { root_ca_pem: "x".into(), ..Default::default() };
        let d = clients.get("https://github.com/o", &creds, &with_ca).unwrap();
        assert!(!Arc::ptr_eq(&a.inner, &d.inner), "other options, another client");
        assert!(clients.get("not a url", &creds, &plain).is_err(), "a failed build is reported");
        let app = GitHubCredentials { github_app_id: "1".into(), ..Default::default() };
        assert!(clients.get("https://github.com/o", &app, &plain).is_err(), "an app without key is refused");
    }
}
