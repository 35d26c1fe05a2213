//! The `Mirror` kind (`mirror.example.dev/v1`): the data to mirror, and the status the controller
//! writes.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a Mirror asks for: a ConfigMap holding `data`.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(group = "mirror.example.dev", version = "v1", kind = "Mirror", namespaced)]
#[kube(status = "MirrorStatus")]
pub struct MirrorSpec {
    /// The ConfigMap's data.
    #[serde(default)]
    pub data: BTreeMap<String, String>,
}

/// What the controller last did for a Mirror.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MirrorStatus {
    /// The generation of the spec the ConfigMap holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The ConfigMap's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
}

/// The CustomResourceDefinition, as YAML (what `mirror crd` prints and `crd.yaml` holds).
pub fn manifest() -> String {
    use kube::CustomResourceExt as _;
    serde_yaml::to_string(&Mirror::crd()).expect("a CRD serializes")
}

#[cfg(test)]
mod tests {
    #[test]
    fn crd_yaml_is_the_manifest_the_kind_derives() {
        let shipped = include_str!("../crd.yaml");
        assert_eq!(
            shipped,
            super::manifest(),
            "regenerate with `cargo run -p mirror-controller -- crd > examples/mirror/crd.yaml`"
        );
    }
}
