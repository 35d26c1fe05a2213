//! What every scale-set reconciler shares: the kit's [`Base`] (API door, clock, metrics, switches,
//! GitHub clients), the resource builder and the per-process settings, including which of the four
//! reconcilers the process runs.
//!
//! Credentials are read from the GitHub config secret with an uncached GET on every use, as ARC
//! reads them (secrets are never cached, ARC-MODEL §1.1); the client for each (URL, credentials) is
//! built once and cached.

use std::time::Duration;

use super::resource_builder::ResourceBuilder;
use super::version::AcceptedVersions;
use crate::inputs::Inputs;
use crate::kit::Base;

/// Which of the scale-set reconcilers a process runs (as kube-controller-manager's `--controllers`
/// selects its loops). `Default` is all four.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScaleSetReconcilers {
    /// The AutoscalingRunnerSet controller.
    pub autoscaling_runner_set: bool,
    /// The EphemeralRunnerSet controller.
    pub ephemeral_runner_set: bool,
    /// The EphemeralRunner controller.
    pub ephemeral_runner: bool,
    /// The AutoscalingListener controller.
    pub autoscaling_listener: bool,
}

impl Default for ScaleSetReconcilers {
    fn default() -> Self {
        ScaleSetReconcilers {
            autoscaling_runner_set: true,
            ephemeral_runner_set: true,
            ephemeral_runner: true,
            autoscaling_listener: true,
        }
    }
}

impl ScaleSetReconcilers {
    /// The names `--controllers` takes, with the reconciler each selects.
    pub const NAMES: [&'static str; 4] =
        ["autoscalingrunnerset", "ephemeralrunnerset", "ephemeralrunner", "autoscalinglistener"];

    /// Only the reconcilers named (by their [`NAMES`](Self::NAMES)); an unknown name is an error
    /// listing the valid ones.
    pub fn only(names: &[impl AsRef<str>]) -> std::result::Result<Self, String> {
        let mut selected = ScaleSetReconcilers {
            autoscaling_runner_set: false,
            ephemeral_runner_set: false,
            ephemeral_runner: false,
            autoscaling_listener: false,
        };
        for name in names {
            match name.as_ref() {
                "autoscalingrunnerset" => selected.autoscaling_runner_set = true,
                "ephemeralrunnerset" => selected.ephemeral_runner_set = true,
                "ephemeralrunner" => selected.ephemeral_runner = true,
                "autoscalinglistener" => selected.autoscaling_listener = true,
                other => {
                    return Err(format!("unknown controller {other:?}; valid: {}", Self::NAMES.join(", ")));
                }
            }
        }
        Ok(selected)
    }
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
    /// Which reconcilers run.
    pub reconcilers: ScaleSetReconcilers,
    /// The `app.kubernetes.io/version` labels reconciled besides this build's own (ARC's chart 0.13–0.15
    /// by default).
    pub accepted_versions: AcceptedVersions,
}

impl Default for ScaleSetSettings {
    fn default() -> Self {
        ScaleSetSettings {
            controller_namespace: "arc-systems".into(),
            listener_image: super::resource_builder::DEFAULT_LISTENER_IMAGE.into(),
            listener_image_pull_secrets: Vec::new(),
            failed_runner_backoff: [0, 5, 10, 20, 40, 80].into_iter().map(Duration::from_secs).collect(),
            max_runner_failures: 5,
            watch_namespace: None,
            runner_max_concurrent_reconciles: 2,
            reconcilers: ScaleSetReconcilers::default(),
            accepted_versions: AcceptedVersions::default(),
        }
    }
}

/// What every scale-set reconciler holds: a `Base` (which it dereferences to), the object
/// builders and the process settings.
pub struct ScaleSetContext {
    /// API door, clock, metrics, switches, GitHub clients.
    pub base: Base,
    /// Object builders.
    pub builder: ResourceBuilder,
    /// Process settings.
    pub settings: ScaleSetSettings,
}

impl std::ops::Deref for ScaleSetContext {
    type Target = Base;

    fn deref(&self) -> &Base {
        &self.base
    }
}

impl std::fmt::Debug for ScaleSetContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScaleSetContext")
            .field("base", &self.base)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl ScaleSetContext {
    /// The context of a process on `inputs` with `settings`.
    pub fn new(inputs: &Inputs, settings: ScaleSetSettings) -> Self {
        ScaleSetContext { base: Base::new(inputs), builder: ResourceBuilder::default(), settings }
    }

    /// An `Api` over the watched namespace (or all namespaces), for informers.
    pub fn watched<K>(&self) -> kube::Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        self.base.api_in(self.settings.watch_namespace.as_deref())
    }

    /// An `Api` over where listeners and their pods, ServiceAccounts and secrets live: the controller
    /// namespace when it is also the one watched namespace, all namespaces otherwise (ARC's cache
    /// covers the controller namespace besides the watched one; one informer per type cannot).
    pub fn controller_namespace_api<K>(&self) -> kube::Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        let watched = self.settings.watch_namespace.as_deref();
        let same = watched == Some(self.settings.controller_namespace.as_str());
        self.base.api_in(if same { watched } else { None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconcilers_are_selected_by_name() {
        let only = ScaleSetReconcilers::only(&["ephemeralrunner"]).unwrap();
        assert!(only.ephemeral_runner && !only.ephemeral_runner_set && !only.autoscaling_runner_set);
        let all = ScaleSetReconcilers::only(&ScaleSetReconcilers::NAMES).unwrap();
        assert_eq!(all, ScaleSetReconcilers::default());
        let err = ScaleSetReconcilers::only(&["ers"]).unwrap_err();
        assert!(err.contains("unknown controller \"ers\"") && err.contains("ephemeralrunnerset"), "{err}");
    }
}
