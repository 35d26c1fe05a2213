//! [`Base`]: what every reconciler context of either family holds (the counted Kubernetes door, the
//! clock, the metrics, the behaviour switches, the GitHub clients), built in one place from the
//! controller's [`Inputs`]. The family contexts (`ScaleSetContext`, `LegacyContext`) are a `Base`
//! plus their own settings and dereference to it.

use k8s_openapi::api::core::v1::Secret;

use super::error::{Error, Result};
use crate::SharedClock;
use crate::github::{ActionsClient, ActionsClients, ConnectionOptions, GitHubCredentials};
use crate::inputs::Inputs;
use crate::runtime::api::KubeApi;
use crate::runtime::lazy_copy::CopyMode;
use crate::runtime::metrics::Metrics;
use crate::switches::Switches;

/// What every reconciler context holds.
pub struct Base {
    /// Writes and uncached reads, counted.
    pub api: KubeApi,
    /// The clock seam.
    pub clock: SharedClock,
    /// The shared metrics registry.
    pub metrics: Metrics,
    /// The behaviour switches.
    pub switches: Switches,
    /// GitHub clients, one per (config URL, credentials).
    pub github: ActionsClients,
}

impl std::fmt::Debug for Base {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Base").field("switches", &self.switches).finish_non_exhaustive()
    }
}

impl Base {
    /// The base of a context on `inputs`.
    pub fn new(inputs: &Inputs) -> Self {
        Base {
            api: KubeApi::new(inputs.client.clone(), &inputs.metrics),
            clock: inputs.clock.clone(),
            metrics: inputs.metrics.clone(),
            switches: inputs.switches,
            github: ActionsClients::new(inputs.github.clone(), inputs.clock.clone(), inputs.metrics.clone()),
        }
    }

    /// How reconcilers copy cached objects: lazily when the optimisation is on, eagerly (ARC's
    /// `DeepCopy` at the top of every reconcile) when it is off.
    pub fn copy_mode(&self) -> CopyMode {
        if self.switches.optimisations.lazy_copy { CopyMode::Lazy } else { CopyMode::Eager }
    }

    /// An `Api` over `namespace`, or over all namespaces when `None` (for informers).
    pub fn api_in<K>(&self, namespace: Option<&str>) -> kube::Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        let client = self.api.client().clone();
        match namespace {
            Some(ns) => kube::Api::namespaced(client, ns),
            None => kube::Api::all(client),
        }
    }

    /// The GitHub client for `github_config_url` over `options`, with the credentials read
    /// (uncached, as ARC reads secrets, ARC-MODEL §1.1) from secret `namespace/name`.
    pub async fn actions_client_from_secret(
        &self,
        github_config_url: &str,
        namespace: &str,
        name: &str,
        options: &ConnectionOptions,
    ) -> Result<ActionsClient> {
        let secret: Option<Secret> = self.api.get(namespace, name).await?;
        let secret = secret.ok_or_else(|| Error::MissingSecret {
            namespace: namespace.to_string(),
            name: name.to_string(),
        })?;
        let credentials = GitHubCredentials::from_secret_data(&secret.data.unwrap_or_default())
            .map_err(|source| Error::Credentials { secret: name.to_string(), source })?;
        Ok(self.github.get(github_config_url, &credentials, options)?)
    }
}
