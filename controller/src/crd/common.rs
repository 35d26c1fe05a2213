//! Spec pieces shared by several CRDs (proxy, TLS, vault, listener metrics, per-resource metadata),
//! with ARC's json field names (`apis/actions.github.com/v1alpha1`), and the serde helpers that keep
//! merge patches minimal.
//!
//! Convention across `crd/`: a Go pointer field is an `Option` skipped when `None`; a Go `omitempty`
//! scalar is a plain value skipped when it holds its zero value; a Go field without `omitempty` is
//! always serialized. That reproduces ARC's JSON, so a merge patch computed from two of our objects
//! is the patch ARC would send.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMapKeySelector;
use schemars::JsonSchema;
use serde::de::IntoDeserializer;
use serde::{Deserialize, Deserializer, Serialize};

/// Labels and annotations the user wants on a resource the controller creates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ResourceMeta {
    /// Extra labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Extra annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// Outbound proxy settings for GitHub traffic (and, through the proxy secret, for runners).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ProxyConfig {
    /// Proxy for `http://` URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<ProxyServerConfig>,
    /// Proxy for `https://` URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https: Option<ProxyServerConfig>,
    /// Hosts that bypass the proxy.
    #[serde(rename = "noProxy", default, skip_serializing_if = "Vec::is_empty")]
    pub no_proxy: Vec<String>,
}

/// One proxy server.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct ProxyServerConfig {
    /// The proxy URL.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    /// Name of a secret with `username` and `password` keys.
    #[serde(rename = "credentialSecretRef", default, skip_serializing_if = "String::is_empty")]
    pub credential_secret_ref: String,
}

/// Extra trust for a GitHub Enterprise Server with a private CA.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct TlsConfig {
    /// Where the CA certificate comes from.
    #[serde(rename = "certificateFrom", default, skip_serializing_if = "Option::is_none")]
    pub certificate_from: Option<TlsCertificateSource>,
}

/// Source of a CA certificate.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct TlsCertificateSource {
    /// A key in a ConfigMap.
    #[serde(rename = "configMapKeyRef", default, skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<ConfigMapKeySelector>,
}

/// Where the GitHub credentials come from when they are not in a Kubernetes secret.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct VaultConfig {
    /// Vault kind; ARC knows `azure_key_vault`.
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    pub vault_type: String,
    /// Azure Key Vault settings.
    #[serde(rename = "azureKeyVault", default, skip_serializing_if = "Option::is_none")]
    pub azure_key_vault: Option<AzureKeyVaultConfig>,
    /// Proxy used to reach the vault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyConfig>,
}

/// Azure Key Vault coordinates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct AzureKeyVaultConfig {
    /// Vault URL.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    /// Tenant id.
    #[serde(rename = "tenantId", default, skip_serializing_if = "String::is_empty")]
    pub tenant_id: String,
    /// Client id.
    #[serde(rename = "clientId", default, skip_serializing_if = "String::is_empty")]
    pub client_id: String,
    /// Path of the client certificate inside the pod.
    #[serde(rename = "certificatePath", default, skip_serializing_if = "String::is_empty")]
    pub certificate_path: String,
}

/// Which listener metrics to publish and with which labels.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct MetricsConfig {
    /// Counters by metric name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, LabelledMetric>,
    /// Gauges by metric name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gauges: BTreeMap<String, LabelledMetric>,
    /// Histograms by metric name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub histograms: BTreeMap<String, HistogramMetric>,
}

/// A counter or gauge: just its label names.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct LabelledMetric {
    /// Label names.
    #[serde(default)]
    pub labels: Vec<String>,
}

/// A histogram: label names and buckets.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct HistogramMetric {
    /// Label names.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Bucket upper bounds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buckets: Vec<f64>,
}

/// One condition of a status, shaped like Kubernetes' `metav1.Condition` (`type`, `status`, `reason`,
/// `message`, `lastTransitionTime`), so `kubectl describe` and `kubectl wait --for=condition=…` read it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct StatusCondition {
    /// The condition's type, in CamelCase (`VersionAccepted`).
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// A CamelCase reason for the last transition.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// When the status last changed (RFC 3339).
    #[serde(rename = "lastTransitionTime", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub last_transition_time: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
}

/// Deserializes a Go string-typed phase: absent, `null` and `""` all mean "no phase yet".
pub(crate) fn empty_string_as_none<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    match Option::<String>::deserialize(deserializer)? {
        None => Ok(None),
        Some(text) if text.is_empty() => Ok(None),
        Some(text) => T::deserialize(text.into_deserializer()).map(Some),
    }
}

/// `skip_serializing_if` for Go `omitempty` integers.
pub(crate) fn is_zero_i32(value: &i32) -> bool {
    *value == 0
}

/// `skip_serializing_if` for Go `omitempty` integers.
pub(crate) fn is_zero_i64(value: &i64) -> bool {
    *value == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug, PartialEq)]
    enum Colour {
        Red,
    }

    #[derive(Deserialize, Debug)]
    struct Holder {
        #[serde(default, deserialize_with = "empty_string_as_none")]
        colour: Option<Colour>,
    }

    fn colour_of(json: &str) -> Result<Option<Colour>, serde_json::Error> {
        serde_json::from_str::<Holder>(json).map(|h| h.colour)
    }

    #[test]
    fn absent_null_and_empty_phases_read_as_none() {
        assert_eq!(colour_of("{}").ok(), Some(None));
        assert_eq!(colour_of(r#"{"colour":null}"#).ok(), Some(None));
        assert_eq!(colour_of(r#"{"colour":""}"#).ok(), Some(None));
        assert_eq!(colour_of(r#"{"colour":"Red"}"#).ok(), Some(Some(Colour::Red)));
    }

    #[test]
    fn an_unknown_phase_is_a_clear_error_not_a_panic() {
        let err = colour_of(r#"{"colour":"Mauve"}"#).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("Mauve"), "{err}");
    }

    #[test]
    fn proxy_config_uses_arc_field_names_and_omits_empty_fields() {
        let proxy = ProxyConfig {
            http: Some(ProxyServerConfig { url: "http://p:3128".into(), credential_secret_ref: "c".into() }),
            https: None,
            no_proxy: vec!["example.com".into()],
        };
        let json = serde_json::to_value(&proxy).ok();
        let expected = serde_json::json!({
            "http": {"url": "http://p:3128", "credentialSecretRef": "c"},
            "noProxy": ["example.com"]
        });
        assert_eq!(json, Some(expected));
    }
}
