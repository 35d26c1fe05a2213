//! What the legacy Runner controller shares across reconciles: the counted Kubernetes door, the
//! clock, the metrics, the behaviour switches, the GitHub clients, the registration-token cache and
//! the process settings, and when GitHub last refused a call for its rate limit.
//!
//! Legacy ARC runs with one GitHub identity for the whole controller (its `controller-manager`
//! secret). Here the secret is named by [`LegacySettings`] and read uncached whenever a Runner needs
//! GitHub, as the scale-set controllers read theirs (ARC-MODEL §1.1); the client for each Runner's
//! scope is built once and cached by [`ActionsClients`](crate::github::ActionsClients).

use std::time::Duration;

use super::pod_builder::LegacyPodSettings;
use super::rate_limit_memory::RateLimitMemory;
use super::token_cache::{DEFAULT_TOKEN_MARGIN, RegistrationTokenCache};
use crate::github::{ActionsClient, GitHubCredentials};
use crate::inputs::Inputs;
use crate::kit::{Base, Result};

/// Per-process settings of the legacy Runner controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacySettings {
    /// GitHub base URL and default runner image of the pods.
    pub pod: LegacyPodSettings,
    /// Namespace of the secret holding the controller's GitHub credentials.
    pub github_secret_namespace: String,
    /// Name of that secret (`github_token`, or `github_app_id`, `github_app_installation_id` and
    /// `github_app_private_key`).
    pub github_secret_name: String,
    /// Credentials to use instead of the secret's (`arc-controller run --github-app-*`).
    pub github_credentials: Option<GitHubCredentials>,
    /// A cached registration token is reused only while it expires later than this (#1296: 30 min).
    pub registration_token_margin: Duration,
    /// ListRunners is asked about a runner at most once per this (ARC's
    /// `RegistrationRecheckInterval`, 1 min), tracked in `status.lastRegistrationCheckTime`.
    pub registration_recheck_interval: Duration,
    /// Added to the interval before rechecking an unregistered runner. ARC draws 10–11 s at random;
    /// the controller has no randomness, so it waits the lower bound.
    pub registration_recheck_jitter: Duration,
    /// A pod whose runner is still not registered (or offline) this long after creation is
    /// recreated (ARC: 10 min).
    pub registration_timeout: Duration,
    /// A pod still deleting this long after its deletionTimestamp is force-deleted (ARC: 1 min).
    pub pod_deletion_timeout: Duration,
    /// The one namespace to watch, or all when `None`.
    pub watch_namespace: Option<String>,
}

impl Default for LegacySettings {
    fn default() -> Self {
        LegacySettings {
            pod: LegacyPodSettings {
                github_base_url: "https://github.com/".into(),
                default_runner_image: "summerwind/actions-runner:latest".into(),
            },
            github_secret_namespace: "actions-runner-system".into(),
            github_secret_name: "controller-manager".into(),
            github_credentials: None,
            registration_token_margin: DEFAULT_TOKEN_MARGIN,
            registration_recheck_interval: Duration::from_secs(60),
            registration_recheck_jitter: Duration::from_secs(10),
            registration_timeout: Duration::from_secs(10 * 60),
            pod_deletion_timeout: Duration::from_secs(60),
            watch_namespace: None,
        }
    }
}

/// What every reconcile of the legacy Runner controller holds: a `Base` (which it dereferences
/// to), the registration-token cache and the process settings.
pub struct LegacyContext {
    /// API door, clock, metrics, switches, GitHub clients.
    pub base: Base,
    /// Registration tokens, reused within the margin.
    pub tokens: RegistrationTokenCache,
    /// Process settings.
    pub settings: LegacySettings,
    /// GitHub's last rate-limit refusal.
    pub rate_limits: RateLimitMemory,
}

impl std::ops::Deref for LegacyContext {
    type Target = Base;

    fn deref(&self) -> &Base {
        &self.base
    }
}

impl std::fmt::Debug for LegacyContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacyContext")
            .field("base", &self.base)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl LegacyContext {
    /// The context of a process on `inputs` with `settings`; its token cache uses the margin in
    /// `settings`.
    pub fn new(inputs: &Inputs, settings: LegacySettings) -> Self {
        let tokens = RegistrationTokenCache::new(settings.registration_token_margin);
        LegacyContext { base: Base::new(inputs), tokens, settings, rate_limits: RateLimitMemory::default() }
    }

    /// An `Api` over the watched namespace (or all namespaces), for informers.
    pub fn watched<K>(&self) -> kube::Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        self.base.api_in(self.settings.watch_namespace.as_deref())
    }

    /// The GitHub client for `github_config_url`, with the credentials read (uncached) from the
    /// controller's secret.
    pub async fn actions_client(&self, github_config_url: &str) -> Result<ActionsClient> {
        let options = crate::github::ConnectionOptions::default();
        if let Some(credentials) = &self.settings.github_credentials {
            return Ok(self.base.github.get(github_config_url, credentials, &options)?);
        }
        let (namespace, name) = (&self.settings.github_secret_namespace, &self.settings.github_secret_name);
        self.base.actions_client_from_secret(github_config_url, namespace, name, &options).await
    }
}
