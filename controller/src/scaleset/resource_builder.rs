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
//! This file holds the [`ResourceBuilder`] settings, the [`BuildError`] every builder returns,
//! and the label/annotation/ownerReference helpers the builders share. Label maps are `BTreeMap`,
//! so every built object serializes to the same bytes on every run.

pub mod github_url;
pub mod listener;
pub mod listener_config;
pub mod listener_pod;
pub mod runner;
pub mod runner_set;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;

use crate::crd::autoscaling_runner_set::ScaleSetIdError;
use crate::hash::HashError;

pub use github_url::{GitHubConfigUrl, GitHubScope};
pub use listener_config::{GitHubCredentials, ListenerConfig, ListenerConfigError};
pub use listener_pod::ListenerPodInputs;
pub use runner::JitConfig;

/// Default path of the listener binary inside the listener image (ARC's `/ghalistener`).
pub const DEFAULT_LISTENER_ENTRYPOINT: &str = "/ghalistener";

/// Settings that shape what the builders produce; one per controller process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceBuilder {
    /// Label keys with any of these prefixes are not copied from a parent to its children.
    pub exclude_label_propagation_prefixes: Vec<String>,
    /// Controller version, sent by runners as `actions-runner-controller/<version>`.
    pub controller_version: String,
    /// Command of the listener container.
    pub listener_entrypoint: String,
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
            listener_entrypoint: DEFAULT_LISTENER_ENTRYPOINT.to_string(),
            listener_log_level: "debug".to_string(),
            listener_log_format: "text".to_string(),
        }
    }
}

/// Why a builder could not produce an object. Every case is bad input, reported, never a panic.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// An input object has no `metadata.name`.
    #[error("{kind} has no metadata.name")]
    MissingName {
        /// Kind of the nameless object.
        kind: &'static str,
    },
    /// An owner has no uid yet (it was never stored), so no ownerReference can point at it.
    #[error("{kind} {name:?} has no metadata.uid; an owner must be read from the API server first")]
    OwnerWithoutUid {
        /// Kind of the owner.
        kind: &'static str,
        /// Name of the owner.
        name: String,
    },
    /// The ARS has not been registered at GitHub yet.
    #[error(transparent)]
    ScaleSetId(#[from] ScaleSetIdError),
    /// The GitHub config URL does not name an enterprise, organization or repository.
    #[error("invalid GitHub config URL {url:?}: should point to an enterprise, org, or repository")]
    InvalidGitHubConfigUrl {
        /// The URL as given.
        url: String,
    },
    /// The runner pod template has no container named `runner`.
    #[error("the pod template of {runner:?} has no container named \"runner\"")]
    MissingRunnerContainer {
        /// The EphemeralRunner's name.
        runner: String,
    },
    /// The listener config failed validation.
    #[error("invalid listener config: {0}")]
    ListenerConfig(#[from] ListenerConfigError),
    /// An integrity hash could not be computed.
    #[error(transparent)]
    Hash(#[from] HashError),
    /// The listener config could not be encoded.
    #[error("cannot encode the listener config: {0}")]
    Encode(#[source] serde_json::Error),
}

/// A builder's result.
pub type BuildResult<T> = Result<T, BuildError>;

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

/// Builds a string map from literal pairs.
pub(crate) fn string_map<const N: usize>(pairs: [(&str, &str); N]) -> BTreeMap<String, String> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The name of `object`, or [`BuildError::MissingName`].
pub(crate) fn name_of<K: Resource<DynamicType = ()>>(object: &K) -> BuildResult<&str> {
    object.meta().name.as_deref().ok_or(BuildError::MissingName { kind: kind_of::<K>() })
}

/// The namespace of `object`, or `""` for a cluster-scoped or not-yet-defaulted object.
pub(crate) fn namespace_of<K: Resource<DynamicType = ()>>(object: &K) -> &str {
    object.meta().namespace.as_deref().unwrap_or_default()
}

/// `object`'s labels, or an empty map.
pub(crate) fn labels_of<K: Resource<DynamicType = ()>>(object: &K) -> BTreeMap<String, String> {
    object.meta().labels.clone().unwrap_or_default()
}

/// `object`'s annotations, or an empty map.
pub(crate) fn annotations_of<K: Resource<DynamicType = ()>>(object: &K) -> BTreeMap<String, String> {
    object.meta().annotations.clone().unwrap_or_default()
}

fn kind_of<K: Resource<DynamicType = ()>>() -> &'static str {
    match K::kind(&()) {
        std::borrow::Cow::Borrowed(kind) => kind,
        std::borrow::Cow::Owned(_) => "object",
    }
}

/// controller-runtime's `SetControllerReference`: a controller ownerReference with
/// `blockOwnerDeletion`, so garbage collection removes the child with its owner.
pub(crate) fn controller_reference<K: Resource<DynamicType = ()>>(owner: &K) -> BuildResult<OwnerReference> {
    let name = name_of(owner)?.to_string();
    let Some(uid) = owner.meta().uid.clone() else {
        return Err(BuildError::OwnerWithoutUid { kind: kind_of::<K>(), name });
    };
    Ok(OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name,
        uid,
        controller: Some(true),
        block_owner_deletion: Some(true),
    })
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
    use crate::crd::EphemeralRunnerSet;

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

    #[test]
    fn controller_reference_points_at_the_owner_and_blocks_its_deletion() {
        let mut ers = EphemeralRunnerSet::new("arc", Default::default());
        ers.metadata.uid = Some("u1".into());
        let owner = controller_reference(&ers).unwrap();
        assert_eq!(owner.api_version, "actions.github.com/v1alpha1");
        assert_eq!(owner.kind, "EphemeralRunnerSet");
        assert_eq!((owner.name.as_str(), owner.uid.as_str()), ("arc", "u1"));
        assert_eq!((owner.controller, owner.block_owner_deletion), (Some(true), Some(true)));
    }

    #[test]
    fn an_owner_without_uid_is_an_error() {
        let ers = EphemeralRunnerSet::new("arc", Default::default());
        let err = controller_reference(&ers).unwrap_err();
        assert!(matches!(err, BuildError::OwnerWithoutUid { kind: "EphemeralRunnerSet", .. }), "{err}");
    }
}
