//! What every scale-set reconciler shares: the counted Kubernetes door, the clock, the metrics, the
//! behaviour switches, the resource builder, the per-process settings, and the GitHub clients.
//!
//! GitHub clients are built per (config URL, credentials) and cached, as ARC's multiclient does, so a
//! reconcile reuses the admin token of the last one. How a client is built is the seam: production
//! builds HTTPS clients to GitHub ([`ActionsClients::https`]); a simulation passes a builder over its
//! own service. Credentials are read from the GitHub config secret with an uncached GET on every use,
//! as ARC reads them (secrets are never cached, ARC-MODEL §1.1).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;

use super::error::Error;
use super::resource_builder::{GitHubCredentials, ResourceBuilder};
use crate::github::{ActionsClient, ActionsError, Credentials};
use crate::hash::fnv1a64;
use crate::runtime::api::KubeApi;
use crate::runtime::lazy_copy::CopyMode;
use crate::runtime::metrics::Metrics;
use crate::{Fixes, Optimisations, SharedClock};

/// Builds a GitHub client for a config URL and credentials.
pub type BuildActionsClient =
    Box<dyn Fn(&str, &GitHubCredentials) -> Result<ActionsClient, ActionsError> + Send + Sync>;

/// The GitHub clients of one controller process, built on first use and cached by URL and credentials.
pub struct ActionsClients {
    build: BuildActionsClient,
    cache: Mutex<BTreeMap<(String, u64), ActionsClient>>,
}

impl std::fmt::Debug for ActionsClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cached = self.cache.lock().map(|c| c.len()).unwrap_or(0);
        f.debug_struct("ActionsClients").field("cached", &cached).finish_non_exhaustive()
    }
}

impl ActionsClients {
    /// Clients built by `build`.
    pub fn new(build: BuildActionsClient) -> Self {
        ActionsClients { build, cache: Mutex::new(BTreeMap::new()) }
    }

    /// Clients speaking HTTPS to the real GitHub (personal access tokens only).
    pub fn https(clock: SharedClock, metrics: Metrics) -> Self {
        Self::new(Box::new(move |url, credentials| {
            ActionsClient::https(url, token_of(credentials)?, clock.clone(), metrics.clone())
        }))
    }

    /// The client for `github_config_url` with `credentials`, built once per distinct pair.
    pub fn get(
        &self,
        github_config_url: &str,
        credentials: &GitHubCredentials,
    ) -> Result<ActionsClient, ActionsError> {
        let fingerprint = fnv1a64(
            format!(
                "{}\0{}\0{}\0{}",
                credentials.github_token,
                credentials.github_app_id,
                credentials.github_app_installation_id,
                credentials.github_app_private_key
            )
            .as_bytes(),
        );
        let key = (github_config_url.to_string(), fingerprint);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = cache.get(&key) {
            return Ok(client.clone());
        }
        let client = (self.build)(github_config_url, credentials)?;
        cache.insert(key, client.clone());
        Ok(client)
    }
}

/// The personal access token of `credentials`; GitHub App credentials are not supported by
/// [`ActionsClient`] and are reported as a configuration error.
pub fn token_of(credentials: &GitHubCredentials) -> Result<Credentials, ActionsError> {
    if credentials.github_token.is_empty() {
        return Err(ActionsError::Config {
            message: "GitHub App credentials are not supported by this controller; use a personal access token (github_token)".into(),
        });
    }
    Ok(Credentials::Token(credentials.github_token.clone()))
}

/// Per-process settings of the scale-set controllers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleSetSettings {
    /// Namespace the AutoscalingListeners and their pods live in (the controller's own namespace).
    pub controller_namespace: String,
    /// Image of the listener container.
    pub listener_image: String,
    /// Pull secrets of the listener pod.
    pub listener_image_pull_secrets: Vec<String>,
    /// Failed-runner backoff by number of recorded failures (ARC: 0, 5, 10, 20, 40, 80 s).
    pub failed_runner_backoff: Vec<Duration>,
    /// An EphemeralRunner with more failures than this is deleted (ARC: 5).
    pub max_runner_failures: usize,
    /// The one namespace to watch, or all when `None` (ARC's `--watch-single-namespace`).
    pub watch_namespace: Option<String>,
    /// Workers of the EphemeralRunner controller (ARC's `--runner-max-concurrent-reconciles`, 2).
    pub runner_max_concurrent_reconciles: usize,
}

impl Default for ScaleSetSettings {
    fn default() -> Self {
        ScaleSetSettings {
            controller_namespace: "arc-systems".into(),
            listener_image: "ghcr.io/actions/gha-runner-scale-set-controller:0.13.1".into(),
            listener_image_pull_secrets: Vec::new(),
            failed_runner_backoff: [0, 5, 10, 20, 40, 80].into_iter().map(Duration::from_secs).collect(),
            max_runner_failures: 5,
            watch_namespace: None,
            runner_max_concurrent_reconciles: 2,
        }
    }
}

/// What every scale-set reconciler holds.
pub struct ScaleSetContext {
    /// Writes and uncached reads, counted.
    pub api: KubeApi,
    /// The clock seam.
    pub clock: SharedClock,
    /// The shared metrics registry.
    pub metrics: Metrics,
    /// Historic fixes (ARC changes), all on by default.
    pub fixes: Fixes,
    /// The \[V\] optimisations, all on by default.
    pub optimisations: Optimisations,
    /// GitHub clients.
    pub github: ActionsClients,
    /// Object builders.
    pub builder: ResourceBuilder,
    /// Process settings.
    pub settings: ScaleSetSettings,
}

impl std::fmt::Debug for ScaleSetContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScaleSetContext")
            .field("fixes", &self.fixes)
            .field("optimisations", &self.optimisations)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl ScaleSetContext {
    /// How reconcilers copy cached objects: lazily when the optimisation is on, eagerly (ARC's
    /// `DeepCopy` at the top of every reconcile) when it is off.
    pub fn copy_mode(&self) -> CopyMode {
        if self.optimisations.lazy_copy { CopyMode::Lazy } else { CopyMode::Eager }
    }

    /// An `Api` over the watched namespace (or all namespaces), for informers.
    pub fn watched<K>(&self) -> kube::Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        let client = self.api.client().clone();
        match &self.settings.watch_namespace {
            Some(ns) => kube::Api::namespaced(client, ns),
            None => kube::Api::all(client),
        }
    }

    /// The GitHub client for an object's config URL and config secret (read uncached from `namespace`).
    pub async fn actions_client(
        &self,
        namespace: &str,
        github_config_url: &str,
        github_config_secret: &str,
    ) -> Result<ActionsClient, Error> {
        let secret: Option<Secret> =
            self.api.get(namespace, github_config_secret).await.map_err(Error::Kube)?;
        let secret = secret.ok_or_else(|| Error::MissingSecret {
            namespace: namespace.to_string(),
            name: github_config_secret.to_string(),
        })?;
        let credentials =
            GitHubCredentials::from_secret_data(&secret.data.unwrap_or_default()).map_err(|e| {
                Error::Credentials { secret: github_config_secret.to_string(), message: e.to_string() }
            })?;
        self.github.get(github_config_url, &credentials).map_err(Error::GitHub)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn clients_are_built_once_per_url_and_credentials() {
        let built = Arc::new(Mutex::new(0));
        let counter = built.clone();
        let clients = ActionsClients::new(Box::new(move |_, _| {
            *counter.lock().unwrap() += 1;
            Err(ActionsError::Config { message: "no transport in this test".into() })
        }));
        let creds = GitHubCredentials { github_token: "t".into(), ..Default::default() };
        assert!(clients.get("https://github.com/o", &creds).is_err());
        assert_eq!(*built.lock().unwrap(), 1, "a failed build is not cached");
        let app = GitHubCredentials { github_app_id: "1".into(), ..Default::default() };
        assert!(token_of(&app).unwrap_err().to_string().contains("personal access token"));
        assert!(token_of(&creds).is_ok());
    }
}
