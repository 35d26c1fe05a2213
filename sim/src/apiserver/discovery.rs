//! Discovery documents, so that kubectl and other generic clients can find the served resources:
//! `/version`, `/api`, `/api/v1`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`.
//!
//! Aggregated discovery is not offered; answering the plain documents with `application/json` makes
//! kubectl fall back to them.

use serde_json::{Value, json};

use super::registry::{Registry, ResourceType};

/// The Kubernetes version the fake claims to be.
pub const GIT_VERSION: &str = "v1.33.0";

/// `/version`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": GIT_VERSION,
        "gitCommit": "arcsim",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

/// `/api`.
pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]
    })
}

const VERBS: &[&str] = &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

fn resources(registry: &Registry, group: &str, version: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for rt in registry.types().iter().filter(|t| t.group == group && t.version == version) {
        out.push(resource_entry(rt));
        if rt.status_subresource {
            out.push(json!({
                "name": format!("{}/status", rt.plural),
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": ["get", "patch", "update"]
            }));
        }
    }
    out
}

fn resource_entry(rt: &ResourceType) -> Value {
    let mut entry = json!({
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": VERBS,
    });
    if !rt.short_names.is_empty() {
        entry["shortNames"] = json!(rt.short_names);
    }
    entry
}

/// `/api/v1` or `/apis/{group}/{version}`; `None` when nothing is served there.
pub fn resource_list(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    let resources = resources(registry, group, version);
    if resources.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}),
    )
}

fn group_entry(group: &str, version: &str) -> Value {
    let gv = json!({"groupVersion": format!("{group}/{version}"), "version": version});
    json!({"name": group, "versions": [gv.clone()], "preferredVersion": gv})
}

/// `/apis`.
pub fn groups(registry: &Registry) -> Value {
    let groups: Vec<Value> = registry.group_versions().into_iter().map(|(g, v)| group_entry(g, v)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/{group}`; `None` for an unknown group.
pub fn group(registry: &Registry, group: &str) -> Option<Value> {
    let (g, v) = registry.group_versions().into_iter().find(|(g, _)| *g == group)?;
    let mut entry = group_entry(g, v);
    entry["kind"] = json!("APIGroup");
    entry["apiVersion"] = json!("v1");
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_list_every_served_resource_and_status_subresources() {
        let r = crate::apiserver::fixtures::registry();
        let core = resource_list(&r, "", "v1").unwrap();
        let names: Vec<&str> =
            core["resources"].as_array().unwrap().iter().map(|x| x["name"].as_str().unwrap()).collect();
        assert!(names.contains(&"pods") && names.contains(&"pods/status") && names.contains(&"namespaces"));
        assert!(!names.contains(&"secrets/status"));
        let arc = resource_list(&r, "actions.github.com", "v1alpha1").unwrap();
        assert_eq!(arc["groupVersion"], "actions.github.com/v1alpha1");
        assert_eq!(groups(&r)["groups"].as_array().unwrap().len(), 4, "rbac, coordination, actions, example");
        let widgets = resource_list(&r, "example.com", "v1").unwrap();
        assert_eq!(widgets["resources"][0]["shortNames"], json!(["wdg"]));
        assert_eq!(widgets["resources"].as_array().unwrap().len(), 1, "no status subresource");
        assert!(group(&r, "nope").is_none() && resource_list(&r, "nope", "v1").is_none());
    }
}
