//! Every manifest shipped for the controller (`deploy/controller/*.yaml` and the CRDs in
//! `controller/crds/arc.yaml`) is a Kubernetes object of a known kind whose every field that kind
//! has: each document is decoded into its k8s-openapi type, encoded again, and must equal the
//! document (k8s-openapi types keep no unknown fields, so a misspelt or misplaced field makes the
//! two differ, and the test names where).

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

mod typed_yaml;
use typed_yaml::{differences, documents, round_trip};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every manifest file: the deploy directory's YAML (but kustomize's own file) and the CRDs.
fn manifest_files() -> Vec<PathBuf> {
    let dir = repo().join("deploy/controller");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml") && !p.ends_with("kustomization.yaml"))
        .collect();
    files.sort();
    files.push(repo().join("controller/crds/arc.yaml"));
    files
}

/// The document round-tripped through the k8s-openapi type its apiVersion and kind name.
fn typed_round_trip(document: &Value) -> Result<Value, String> {
    let api_version = document["apiVersion"].as_str().unwrap_or_default();
    let kind = document["kind"].as_str().unwrap_or_default();
    match (api_version, kind) {
        ("v1", "Namespace") => round_trip::<Namespace>(document),
        ("v1", "ServiceAccount") => round_trip::<ServiceAccount>(document),
        ("v1", "Service") => round_trip::<Service>(document),
        ("v1", "Secret") => round_trip::<Secret>(document),
        ("v1", "ConfigMap") => round_trip::<ConfigMap>(document),
        ("apps/v1", "Deployment") => round_trip::<Deployment>(document),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => round_trip::<ClusterRole>(document),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => round_trip::<ClusterRoleBinding>(document),
        ("rbac.authorization.k8s.io/v1", "Role") => round_trip::<Role>(document),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => round_trip::<RoleBinding>(document),
        ("coordination.k8s.io/v1", "Lease") => round_trip::<Lease>(document),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            round_trip::<CustomResourceDefinition>(document)
        }
        _ => Err(format!("unknown apiVersion/kind {api_version}/{kind}")),
    }
}

#[test]
fn every_shipped_manifest_decodes_into_its_kubernetes_type_with_no_unknown_field() {
    let mut checked = Vec::new();
    for file in manifest_files() {
        for (index, document) in documents(&file).iter().enumerate() {
            let name = format!("{} document {}", file.display(), index + 1);
            let again = typed_round_trip(document).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut found = Vec::new();
            differences("$", document, &again, &mut found);
            assert!(found.is_empty(), "{name}:\n{}", found.join("\n"));
            checked.push(format!(
                "{}/{}",
                document["kind"].as_str().unwrap_or(""),
                document["metadata"]["name"].as_str().unwrap_or("")
            ));
        }
    }
    for expected in [
        "Namespace/arc-systems",
        "ServiceAccount/arc-controller",
        "ClusterRole/arc-controller",
        "ClusterRoleBinding/arc-controller",
        "Role/arc-controller-leader-election",
        "RoleBinding/arc-controller-leader-election",
        "Deployment/arc-controller",
        "CustomResourceDefinition/autoscalingrunnersets.actions.github.com",
    ] {
        assert!(checked.iter().any(|c| c == expected), "{expected} is not shipped; checked {checked:?}");
    }
}

#[test]
fn a_misspelt_field_is_caught() {
    let document: Value = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "x", "namespace": "y", "lables": {"a": "b"}},
    });
    let again = typed_round_trip(&document).unwrap();
    let mut found = Vec::new();
    differences("$", &document, &again, &mut found);
    assert_eq!(found, ["$.metadata.lables: unknown field (dropped by the typed decode)"]);
}

#[test]
fn the_controller_role_grants_what_the_listener_role_it_creates_needs() {
    // Kubernetes refuses to let the controller create a Role granting more than it holds.
    let rbac = documents(&repo().join("deploy/controller/rbac.yaml"));
    let cluster_role = rbac.iter().find(|d| d["kind"] == "ClusterRole").expect("a ClusterRole");
    let role: ClusterRole = serde_json::from_value(cluster_role.clone()).expect("a ClusterRole");
    let grants = |group: &str, resource: &str, verb: &str| {
        role.rules.iter().flatten().any(|rule| {
            rule.api_groups.iter().flatten().any(|g| g == group)
                && rule.resources.iter().flatten().any(|r| r == resource)
                && rule.verbs.iter().any(|v| v == verb)
        })
    };
    for (resource, verb) in [
        ("ephemeralrunnersets", "patch"),
        ("ephemeralrunners", "get"),
        ("ephemeralrunners", "patch"),
        ("ephemeralrunners/status", "patch"),
    ] {
        assert!(grants("actions.github.com", resource, verb), "{resource} {verb}");
    }
    assert!(grants("", "configmaps", "get"), "githubServerTLS CAs are read");
    assert!(!grants("", "secrets", "watch"), "secrets are never watched");
}
