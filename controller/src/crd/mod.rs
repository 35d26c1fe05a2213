//! The custom resources the controller reconciles, with ARC's group, kinds and json field names
//! (ARC-MODEL §2 and §7), and the names ARC stamps on everything it creates.
//!
//! - [`autoscaling_runner_set`], [`ephemeral_runner_set`], [`ephemeral_runner`],
//!   [`autoscaling_listener`]: the scale-set family, group `actions.github.com/v1alpha1`.
//! - [`runner`]: the legacy summerwind Runner, group `actions.summerwind.dev/v1alpha1`.
//! - [`common`]: spec pieces several kinds share.
//! - [`constants`]: finalizers, labels, annotations, env and container names.
//!
//! Every kind has a status subresource. [`definitions`] returns the five
//! `CustomResourceDefinition`s and [`definitions_yaml`] renders them for `arc-controller crds`.

pub mod autoscaling_listener;
pub mod autoscaling_runner_set;
pub mod common;
pub mod constants;
pub mod ephemeral_runner;
pub mod ephemeral_runner_set;
pub mod runner;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

pub use autoscaling_listener::{AutoscalingListener, AutoscalingListenerSpec, AutoscalingListenerStatus};
pub use autoscaling_runner_set::{
    AutoscalingRunnerSet, AutoscalingRunnerSetPhase, AutoscalingRunnerSetSpec, AutoscalingRunnerSetStatus,
};
pub use common::{ProxyConfig, ProxyServerConfig, ResourceMeta, StatusCondition, TlsConfig, VaultConfig};
pub use ephemeral_runner::{
    EphemeralRunner, EphemeralRunnerPhase, EphemeralRunnerSpec, EphemeralRunnerStatus,
};
pub use ephemeral_runner_set::{
    EphemeralRunnerSet, EphemeralRunnerSetPhase, EphemeralRunnerSetSpec, EphemeralRunnerSetStatus,
};
pub use runner::{Runner, RunnerSpec, RunnerStatus, RunnerStatusRegistration};

/// The five CRDs, scale-set family first, in a fixed order.
pub fn definitions() -> Vec<CustomResourceDefinition> {
    vec![
        AutoscalingRunnerSet::crd(),
        EphemeralRunnerSet::crd(),
        EphemeralRunner::crd(),
        AutoscalingListener::crd(),
        Runner::crd(),
    ]
}

/// The five CRDs as shipped: `controller/crds/arc.yaml`, generated from the types by
/// [`definitions_yaml`] and checked against it by a test (`UPDATE_CRDS=1 cargo test -p arc-controller
/// crd::tests::the_shipped_manifests_are_the_generated_ones` rewrites it). This is what
/// `arc-controller crds` prints and what a cluster gets with `kubectl apply -f controller/crds/`.
pub const MANIFESTS: &str = include_str!("../../crds/arc.yaml");

/// The five CRDs generated from the types, as one multi-document YAML stream (`---` before each
/// document). Generation takes about a second (schema generation of the pod template); use
/// [`MANIFESTS`], its committed output, where that matters.
pub fn definitions_yaml() -> Result<String, serde_yaml::Error> {
    let mut out = String::new();
    for crd in definitions() {
        out.push_str("---\n");
        out.push_str(&serde_yaml::to_string(&crd)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    fn group_and_plural(crd: &CustomResourceDefinition) -> (&str, &str) {
        (crd.spec.group.as_str(), crd.spec.names.plural.as_str())
    }

    #[test]
    fn every_crd_has_the_right_group_and_plural() {
        let crds = definitions();
        let names: Vec<_> = crds.iter().map(group_and_plural).collect();
        assert_eq!(
            names,
            [
                ("actions.github.com", "autoscalingrunnersets"),
                ("actions.github.com", "ephemeralrunnersets"),
                ("actions.github.com", "ephemeralrunners"),
                ("actions.github.com", "autoscalinglisteners"),
                ("actions.summerwind.dev", "runners"),
            ]
        );
    }

    #[test]
    fn every_crd_is_namespaced_with_a_status_subresource() {
        for crd in definitions() {
            assert_eq!(crd.spec.scope, "Namespaced", "{}", crd.spec.names.kind);
            let version = &crd.spec.versions[0];
            assert_eq!(version.name, "v1alpha1");
            let status = version.subresources.as_ref().and_then(|s| s.status.as_ref());
            assert!(status.is_some(), "{} has no status subresource", crd.spec.names.kind);
        }
    }

    #[test]
    fn the_ephemeral_runner_schema_has_the_inline_pod_template() {
        let crd = EphemeralRunner::crd();
        let schema = crd.spec.versions[0].schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref());
        let spec = schema.and_then(|s| s.properties.as_ref()).and_then(|p| p.get("spec"));
        let props = spec.and_then(|s| s.properties.as_ref()).expect("spec properties");
        for field in ["githubConfigUrl", "runnerScaleSetId", "metadata", "spec", "proxySecretRef"] {
            assert!(props.contains_key(field), "missing {field}");
        }
    }

    #[test]
    fn the_shipped_manifests_are_the_generated_ones() {
        let generated = definitions_yaml().unwrap();
        if std::env::var_os("UPDATE_CRDS").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/crds/arc.yaml");
            std::fs::write(path, &generated).unwrap();
            return;
        }
        assert!(
            generated == MANIFESTS,
            "controller/crds/arc.yaml is stale; regenerate it with UPDATE_CRDS=1 cargo test -p arc-controller \
             crd::tests::the_shipped_manifests_are_the_generated_ones"
        );
    }

    #[test]
    fn yaml_has_one_document_per_crd() {
        let yaml = definitions_yaml().unwrap();
        assert_eq!(yaml.lines().filter(|line| *line == "---").count(), 5);
        let kinds: Vec<String> = serde_yaml::Deserializer::from_str(&yaml)
            .map(|doc| {
                let crd = CustomResourceDefinition::deserialize(doc).unwrap();
                crd.spec.names.kind
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "AutoscalingRunnerSet",
                "EphemeralRunnerSet",
                "EphemeralRunner",
                "AutoscalingListener",
                "Runner"
            ]
        );
    }
}
