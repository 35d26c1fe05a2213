//! AutoscalingRunnerSet (ARS, ARC-MODEL §2.1): the user-facing scale set, created by helm. Its
//! controller registers the scale set at GitHub, owns one EphemeralRunnerSet of the same name and
//! runs one AutoscalingListener for it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{
    MetricsConfig, ProxyConfig, ResourceMeta, StatusCondition, TlsConfig, VaultConfig, empty_string_as_none,
};
use super::constants::ANNOTATION_RUNNER_SCALE_SET_ID;
use crate::hash::{self, HashError};

/// Desired state of an AutoscalingRunnerSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "actions.github.com",
    version = "v1alpha1",
    kind = "AutoscalingRunnerSet",
    plural = "autoscalingrunnersets",
    namespaced,
    status = "AutoscalingRunnerSetStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "AutoscalingRunnerSet is the Schema for the autoscalingrunnersets API",
    printcolumn = r#"{"name":"Minimum Runners","type":"integer","jsonPath":".spec.minRunners"}"#,
    printcolumn = r#"{"name":"Maximum Runners","type":"integer","jsonPath":".spec.maxRunners"}"#,
    printcolumn = r#"{"name":"Current Runners","type":"integer","jsonPath":".status.currentRunners"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#
)]
pub struct AutoscalingRunnerSetSpec {
    /// `https://github.com/<org>[/<repo>]` or an enterprise URL (required).
    #[serde(rename = "githubConfigUrl", default, skip_serializing_if = "String::is_empty")]
    pub github_config_url: String,
    /// Secret with the GitHub credentials (required).
    #[serde(rename = "githubConfigSecret", default, skip_serializing_if = "String::is_empty")]
    pub github_config_secret: String,
    /// Runner group; empty means the default group.
    #[serde(rename = "runnerGroup", default, skip_serializing_if = "String::is_empty")]
    pub runner_group: String,
    /// Scale-set name at GitHub; empty means the ARS name.
    #[serde(rename = "runnerScaleSetName", default, skip_serializing_if = "String::is_empty")]
    pub runner_scale_set_name: String,
    /// Extra labels of the scale set at GitHub.
    #[serde(rename = "runnerScaleSetLabels", default, skip_serializing_if = "Vec::is_empty")]
    pub runner_scale_set_labels: Vec<String>,
    /// Proxy for GitHub traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyConfig>,
    /// Private CA for GitHub Enterprise Server.
    #[serde(rename = "githubServerTLS", default, skip_serializing_if = "Option::is_none")]
    pub github_server_tls: Option<TlsConfig>,
    /// Credentials from a vault instead of a secret.
    #[serde(rename = "vaultConfig", default, skip_serializing_if = "Option::is_none")]
    pub vault_config: Option<VaultConfig>,
    /// Pod template of the runners (required; must have a container named `runner`).
    #[serde(default)]
    pub template: PodTemplateSpec,
    /// Extra metadata of the AutoscalingListener.
    #[serde(rename = "autoscalingListener", default, skip_serializing_if = "Option::is_none")]
    pub autoscaling_listener_metadata: Option<ResourceMeta>,
    /// Listener metrics selection.
    #[serde(rename = "listenerMetrics", default, skip_serializing_if = "Option::is_none")]
    pub listener_metrics: Option<MetricsConfig>,
    /// Pod template merged into the listener pod.
    #[serde(rename = "listenerTemplate", default, skip_serializing_if = "Option::is_none")]
    pub listener_template: Option<PodTemplateSpec>,
    /// Extra metadata of the listener's ServiceAccount.
    #[serde(rename = "listenerServiceAccountMetadata", default, skip_serializing_if = "Option::is_none")]
    pub listener_service_account_metadata: Option<ResourceMeta>,
    /// Extra metadata of the listener's Role.
    #[serde(rename = "listenerRoleMetadata", default, skip_serializing_if = "Option::is_none")]
    pub listener_role_metadata: Option<ResourceMeta>,
    /// Extra metadata of the listener's RoleBinding.
    #[serde(rename = "listenerRoleBindingMetadata", default, skip_serializing_if = "Option::is_none")]
    pub listener_role_binding_metadata: Option<ResourceMeta>,
    /// Extra metadata of the listener's config secret.
    #[serde(rename = "listenerConfigSecretMetadata", default, skip_serializing_if = "Option::is_none")]
    pub listener_config_secret_metadata: Option<ResourceMeta>,
    /// Extra metadata of the EphemeralRunnerSet.
    #[serde(rename = "ephemeralRunnerSetMetadata", default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_runner_set_metadata: Option<ResourceMeta>,
    /// Extra metadata of every EphemeralRunner.
    #[serde(rename = "ephemeralRunnerMetadata", default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_runner_metadata: Option<ResourceMeta>,
    /// Extra metadata of every JIT config secret.
    #[serde(
        rename = "ephemeralRunnerConfigSecretMetadata",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ephemeral_runner_config_secret_metadata: Option<ResourceMeta>,
    /// Upper bound of runners; unset means `i32::MAX`.
    #[serde(rename = "maxRunners", default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_runners: Option<i32>,
    /// Minimum number of idle runners; unset means 0.
    #[serde(rename = "minRunners", default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_runners: Option<i32>,
}

/// Phase of an AutoscalingRunnerSet.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema)]
pub enum AutoscalingRunnerSetPhase {
    /// The listener is not started yet.
    Pending,
    /// The listener runs.
    Running,
    /// The runner version is deprecated; the scale set is switched off.
    Outdated,
}

/// Observed state of an AutoscalingRunnerSet, copied from its EphemeralRunnerSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct AutoscalingRunnerSetStatus {
    /// pending + running + failed runners.
    #[serde(rename = "currentRunners", default)]
    pub current_runners: i32,
    /// Phase; absent (or `""`) before the controller first sets it.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "empty_string_as_none")]
    #[schemars(with = "Option<String>")]
    pub phase: Option<AutoscalingRunnerSetPhase>,
    /// Runners in the pending bucket.
    #[serde(rename = "pendingEphemeralRunners", default)]
    pub pending_ephemeral_runners: i32,
    /// Runners in the running bucket.
    #[serde(rename = "runningEphemeralRunners", default)]
    pub running_ephemeral_runners: i32,
    /// Runners in the failed bucket.
    #[serde(rename = "failedEphemeralRunners", default)]
    pub failed_ephemeral_runners: i32,
    /// Conditions the controller reports beside the phase (arcsim's addition; ARC has none): today
    /// only `VersionAccepted=False`, while the `app.kubernetes.io/version` label is not accepted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<StatusCondition>,
}

/// The `runner-scale-set-id` annotation is missing or not a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("annotation {ANNOTATION_RUNNER_SCALE_SET_ID:?} is missing or not an integer (found {found:?})")]
pub struct ScaleSetIdError {
    /// What the annotation held, if anything.
    pub found: Option<String>,
}

impl AutoscalingRunnerSet {
    /// The scale-set id the controller recorded after registering the scale set at GitHub.
    pub fn runner_scale_set_id(&self) -> Result<i64, ScaleSetIdError> {
        let found = self.metadata.annotations.as_ref().and_then(|a| a.get(ANNOTATION_RUNNER_SCALE_SET_ID));
        found
            .and_then(|text| text.parse::<i64>().ok())
            .ok_or_else(|| ScaleSetIdError { found: found.cloned() })
    }

    /// `minRunners`, or 0 when unset.
    pub fn effective_min_runners(&self) -> i32 {
        self.spec.min_runners.unwrap_or(0)
    }

    /// `maxRunners`, or `i32::MAX` when unset.
    pub fn effective_max_runners(&self) -> i32 {
        self.spec.max_runners.unwrap_or(i32::MAX)
    }

    /// The scale-set name at GitHub: `runnerScaleSetName`, or the ARS name when that is empty.
    pub fn scale_set_name(&self) -> &str {
        match self.spec.runner_scale_set_name.as_str() {
            "" => self.metadata.name.as_deref().unwrap_or_default(),
            name => name,
        }
    }

    /// The ARS integrity hash (ARC's `AutoscalingRunnerSet.Hash`): spec plus labels. A change
    /// resets the phase to Pending (ARC-MODEL §3.3 step 5).
    pub fn integrity_hash(&self) -> Result<String, HashError> {
        #[derive(Serialize)]
        struct Data<'a> {
            spec: &'a AutoscalingRunnerSetSpec,
            labels: Option<&'a BTreeMap<String, String>>,
        }
        hash::template_hash(&Data { spec: &self.spec, labels: self.metadata.labels.as_ref() })
    }
}

#[cfg(test)]
mod tests {
    use kube::api::ObjectMeta;

    use super::*;

    fn ars_with_annotations(annotations: &[(&str, &str)]) -> AutoscalingRunnerSet {
        let annotations = annotations.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        AutoscalingRunnerSet {
            metadata: ObjectMeta {
                name: Some("arc".into()),
                annotations: Some(annotations),
                ..Default::default()
            },
            spec: AutoscalingRunnerSetSpec::default(),
            status: None,
        }
    }

    #[test]
    fn scale_set_id_is_read_from_the_annotation() {
        assert_eq!(ars_with_annotations(&[("runner-scale-set-id", "42")]).runner_scale_set_id(), Ok(42));
    }

    #[test]
    fn a_missing_or_garbled_scale_set_id_is_an_error() {
        assert_eq!(ars_with_annotations(&[]).runner_scale_set_id(), Err(ScaleSetIdError { found: None }));
        let garbled = ars_with_annotations(&[("runner-scale-set-id", "x1")]).runner_scale_set_id();
        assert_eq!(garbled, Err(ScaleSetIdError { found: Some("x1".into()) }));
    }

    #[test]
    fn unset_min_and_max_runners_default_to_zero_and_i32_max() {
        let ars = ars_with_annotations(&[]);
        assert_eq!((ars.effective_min_runners(), ars.effective_max_runners()), (0, i32::MAX));
    }

    #[test]
    fn scale_set_name_falls_back_to_the_ars_name() {
        let mut ars = ars_with_annotations(&[]);
        assert_eq!(ars.scale_set_name(), "arc");
        ars.spec.runner_scale_set_name = "custom".into();
        assert_eq!(ars.scale_set_name(), "custom");
    }

    #[test]
    fn integrity_hash_follows_spec_and_labels_but_not_annotations() {
        let base = ars_with_annotations(&[]);
        let mut annotated = base.clone();
        annotated.metadata.annotations = Some([("a".to_string(), "b".to_string())].into());
        let mut relabelled = base.clone();
        relabelled.metadata.labels = Some([("team".to_string(), "x".to_string())].into());
        let mut respecced = base.clone();
        respecced.spec.max_runners = Some(3);
        let h = |a: &AutoscalingRunnerSet| a.integrity_hash().unwrap();
        assert_eq!(h(&base), h(&annotated));
        assert_ne!(h(&base), h(&relabelled));
        assert_ne!(h(&base), h(&respecced));
    }

    #[test]
    fn an_empty_phase_from_go_reads_as_no_phase() {
        let status: AutoscalingRunnerSetStatus =
            serde_json::from_str(r#"{"currentRunners":1,"phase":""}"#).unwrap();
        assert_eq!(status.phase, None);
        assert_eq!(status.current_runners, 1);
    }
}
