//! AutoscalingListener (AL, ARC-MODEL §2.5): the listener pod's desired state. It lives in the
//! controller namespace and is *not* owner-referenced to its ARS (cross-namespace); the ARS
//! controller deletes it by name. Its status is empty.

use k8s_openapi::api::core::v1::{LocalObjectReference, PodTemplateSpec};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{
    MetricsConfig, ProxyConfig, ResourceMeta, TlsConfig, VaultConfig, is_zero_i32, is_zero_i64,
};
use crate::hash::{self, HashError};

/// Desired state of an AutoscalingListener.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "actions.github.com",
    version = "v1alpha1",
    kind = "AutoscalingListener",
    plural = "autoscalinglisteners",
    namespaced,
    status = "AutoscalingListenerStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "AutoscalingListener is the Schema for the autoscalinglisteners API",
    printcolumn = r#"{"name":"GitHub Configure URL","type":"string","jsonPath":".spec.githubConfigUrl"}"#,
    printcolumn = r#"{"name":"AutoscalingRunnerSet Namespace","type":"string","jsonPath":".spec.autoscalingRunnerSetNamespace"}"#,
    printcolumn = r#"{"name":"AutoscalingRunnerSet Name","type":"string","jsonPath":".spec.autoscalingRunnerSetName"}"#
)]
pub struct AutoscalingListenerSpec {
    /// GitHub config URL.
    #[serde(rename = "githubConfigUrl", default, skip_serializing_if = "String::is_empty")]
    pub github_config_url: String,
    /// Secret with the GitHub credentials (in the ARS namespace).
    #[serde(rename = "githubConfigSecret", default, skip_serializing_if = "String::is_empty")]
    pub github_config_secret: String,
    /// Scale-set id at GitHub.
    #[serde(rename = "runnerScaleSetId", default, skip_serializing_if = "is_zero_i64")]
    pub runner_scale_set_id: i64,
    /// Namespace of the ARS this listener serves.
    #[serde(rename = "autoscalingRunnerSetNamespace", default, skip_serializing_if = "String::is_empty")]
    pub autoscaling_runner_set_namespace: String,
    /// Name of the ARS this listener serves.
    #[serde(rename = "autoscalingRunnerSetName", default, skip_serializing_if = "String::is_empty")]
    pub autoscaling_runner_set_name: String,
    /// Name of the ERS the listener patches.
    #[serde(rename = "ephemeralRunnerSetName", default, skip_serializing_if = "String::is_empty")]
    pub ephemeral_runner_set_name: String,
    /// Effective maximum (`i32::MAX` when the ARS leaves it unset).
    #[serde(rename = "maxRunners", default, skip_serializing_if = "is_zero_i32")]
    #[schemars(range(min = 0))]
    pub max_runners: i32,
    /// Effective minimum (0 when the ARS leaves it unset).
    #[serde(rename = "minRunners", default, skip_serializing_if = "is_zero_i32")]
    #[schemars(range(min = 0))]
    pub min_runners: i32,
    /// Listener image.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image: String,
    /// Pull secrets for the listener image.
    #[serde(rename = "imagePullSecrets", default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// Proxy for GitHub traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyConfig>,
    /// Private CA for GitHub Enterprise Server.
    #[serde(rename = "githubServerTLS", default, skip_serializing_if = "Option::is_none")]
    pub github_server_tls: Option<TlsConfig>,
    /// Credentials from a vault instead of a secret.
    #[serde(rename = "vaultConfig", default, skip_serializing_if = "Option::is_none")]
    pub vault_config: Option<VaultConfig>,
    /// Listener metrics selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsConfig>,
    /// Pod template merged into the listener pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<PodTemplateSpec>,
    /// Extra metadata of the config secret.
    #[serde(rename = "configSecretMetadata", default, skip_serializing_if = "Option::is_none")]
    pub config_secret_metadata: Option<ResourceMeta>,
    /// Extra metadata of the ServiceAccount.
    #[serde(rename = "serviceAccountMetadata", default, skip_serializing_if = "Option::is_none")]
    pub service_account_metadata: Option<ResourceMeta>,
    /// Extra metadata of the Role.
    #[serde(rename = "roleMetadata", default, skip_serializing_if = "Option::is_none")]
    pub role_metadata: Option<ResourceMeta>,
    /// Extra metadata of the RoleBinding.
    #[serde(rename = "roleBindingMetadata", default, skip_serializing_if = "Option::is_none")]
    pub role_binding_metadata: Option<ResourceMeta>,
}

/// Observed state of an AutoscalingListener: empty, as in ARC.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct AutoscalingListenerStatus {}

impl AutoscalingListenerSpec {
    /// The AL integrity hash (ARC's `AutoscalingListenerSpec.Hash`): a changed spec means the ARS
    /// deletes and recreates the listener.
    pub fn integrity_hash(&self) -> Result<String, HashError> {
        hash::template_hash(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrity_hash_changes_with_any_spec_field() {
        let base = AutoscalingListenerSpec { max_runners: 5, ..Default::default() };
        let changed = AutoscalingListenerSpec { max_runners: 6, ..Default::default() };
        assert_eq!(base.integrity_hash().unwrap(), base.clone().integrity_hash().unwrap());
        assert_ne!(base.integrity_hash().unwrap(), changed.integrity_hash().unwrap());
    }

    #[test]
    fn spec_uses_arc_field_names() {
        let spec = AutoscalingListenerSpec {
            autoscaling_runner_set_namespace: "ns".into(),
            ephemeral_runner_set_name: "arc".into(),
            runner_scale_set_id: 1,
            ..Default::default()
        };
        let json = serde_json::to_value(&spec).unwrap();
        let expected = serde_json::json!({
            "autoscalingRunnerSetNamespace": "ns", "ephemeralRunnerSetName": "arc", "runnerScaleSetId": 1
        });
        assert_eq!(json, expected);
    }
}
