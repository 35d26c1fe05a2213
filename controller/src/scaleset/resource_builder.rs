//! Pure builders for everything the scale-set controllers create (ARC-MODEL §2–§3, ARC's
//! `resourcebuilder.go`): the objects are built here and only sent by the reconcilers.
//!
//! - [`runner_set`]: EphemeralRunnerSet from an ARS, EphemeralRunner from an ERS.
//! - [`runner`]: an EphemeralRunner's JIT secret and pod, and the ERS proxy secret.
//! - [`listener`]: the AutoscalingListener from an ARS, and its ServiceAccount, Role,
//!   RoleBinding, config secret and proxy secret.
//! - [`listener_pod`]: the listener pod, and the merge of a user's listener template into it.
//! - [`listener_config`]: the listener's config file (shared with the listener binary).
//! - [`github_url`]: the enterprise/organization/repository labels of a GitHub config URL.
//!
//! This file holds the [`ResourceBuilder`] settings and the label and annotation merging the builders
//! share; the [`BuildError`] every builder returns and the metadata helpers come from the
//! `kit`. Label maps are `BTreeMap`, so every built object serializes to the same bytes
//! on every run.

pub mod github_url;
pub mod listener;
pub mod listener_config;
pub mod listener_pod;
pub mod runner;
pub mod runner_set;

use std::collections::BTreeMap;

pub use github_url::{GitHubConfigUrl, GitHubScope};
pub use listener_config::{ListenerConfig, ListenerConfigError};

pub use crate::github::GitHubCredentials;
pub use crate::kit::build::{BuildError, BuildResult};
pub(crate) use crate::kit::meta::{
    annotations_of, controller_reference, labels_of, name_of, namespace_of, string_map,
};
pub use listener_pod::ListenerPodInputs;
pub use runner::JitConfig;

/// The listener container's command: this controller's own listener (`arc-controller listener`, which
/// reads `$LISTENER_CONFIG_PATH`), not ARC's `/ghalistener`, so the listener that runs in a cluster is
/// the one arcsim's simulation runs and verifies.
pub const DEFAULT_LISTENER_COMMAND: [&str; 2] = ["/arc-controller", "listener"];

/// The listener pods' image unless the process is told otherwise: this build's controller image.
pub const DEFAULT_LISTENER_IMAGE: &str = concat!("ghcr.io/arcsim/arc-controller:", env!("CARGO_PKG_VERSION"));

/// Settings that shape what the builders produce; one per controller process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceBuilder {
    /// Label keys with any of these prefixes are not copied from a parent to its children.
    pub exclude_label_propagation_prefixes: Vec<String>,
    /// Controller version, sent by runners as `actions-runner-controller/<version>`.
    pub controller_version: String,
    /// Command of the listener container.
    pub listener_command: Vec<String>,
    /// Log level written into the listener config (`debug`, `info`, `warn`, `error`).
    pub listener_log_level: String,
    /// Log format written into the listener config (`text`, `json`).
    pub listener_log_format: String,
}

impl Default for ResourceBuilder {
    fn default() -> Self {
        ResourceBuilder {
            exclude_label_propagation_prefixes: Vec::new(),
            controller_version: env!("CARGO_PKG_VERSION").to_string(),
            listener_command: DEFAULT_LISTENER_COMMAND.iter().map(|s| (*s).to_string()).collect(),
            listener_log_level: "debug".to_string(),
            listener_log_format: "text".to_string(),
        }
    }
}

impl ResourceBuilder {
    /// ARC's `filterAndMergeLabels`: `base` then `overwrite`, dropping excluded prefixes.
    pub(crate) fn filter_and_merge_labels(
        &self,
        base: &BTreeMap<String, String>,
        overwrite: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        base.iter()
            .chain(overwrite)
            .filter(|(key, _)| !self.is_excluded_label(key))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    fn is_excluded_label(&self, key: &str) -> bool {
        self.exclude_label_propagation_prefixes.iter().any(|prefix| key.starts_with(prefix.as_str()))
    }
}

/// ARC's `mergeAnnotations`: `base` overwritten by `overwrite`.
pub(crate) fn merge_annotations(
    base: &BTreeMap<String, String>,
    overwrite: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    base.iter().chain(overwrite).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Shared fixtures for the builder tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
    use kube::api::ObjectMeta;

    use crate::crd::{AutoscalingRunnerSet, AutoscalingRunnerSetSpec};

    /// A stored ARS `arc` in namespace `runners`, registered as scale set 7 of org `octo`.
    pub(crate) fn registered_ars() -> AutoscalingRunnerSet {
        AutoscalingRunnerSet {
            metadata: ObjectMeta {
                name: Some("arc".into()),
                namespace: Some("runners".into()),
                uid: Some("uid-ars".into()),
                labels: Some(super::string_map([("app.kubernetes.io/version", "0.1.0"), ("team", "ci")])),
                annotations: Some(super::string_map([
                    ("runner-scale-set-id", "7"),
                    ("actions.github.com/runner-group-name", "default"),
                    ("actions.github.com/runner-scale-set-name", "arc"),
                ])),
                ..Default::default()
            },
            spec: AutoscalingRunnerSetSpec {
                github_config_url: "https://github.com/octo".into(),
                github_config_secret: "gh-secret".into(),
                min_runners: Some(1),
                template: runner_template(),
                ..Default::default()
            },
            status: None,
        }
    }

    /// A pod template with one `runner` container.
    pub(crate) fn runner_template() -> PodTemplateSpec {
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(super::string_map([("template-label", "t")])),
                ..Default::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "runner".into(),
                    image: Some("ghcr.io/actions/actions-runner:latest".into()),
                    ..Default::default()
                }],
                restart_policy: Some("Never".into()),
                ..Default::default()
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_labels_prefer_overwrite_and_drop_excluded_prefixes() {
        let builder = ResourceBuilder {
            exclude_label_propagation_prefixes: vec!["argocd.argoproj.io/".into()],
            ..Default::default()
        };
        let base = string_map([("a", "base"), ("argocd.argoproj.io/instance", "x"), ("b", "kept")]);
        let overwrite = string_map([("a", "over")]);
        let merged = builder.filter_and_merge_labels(&base, &overwrite);
        assert_eq!(merged, string_map([("a", "over"), ("b", "kept")]));
    }
}
