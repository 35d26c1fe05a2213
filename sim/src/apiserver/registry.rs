//! The resource registry: which kinds the fake API server serves, and how (group, version, kind,
//! plural, scope, status subresource, the field selectors each kind supports, and for custom resources
//! the structural schema).
//!
//! Built-in kinds (core Pod, Secret, ConfigMap, ServiceAccount, Namespace, ResourceQuota; rbac Role,
//! RoleBinding; coordination Lease) are built in; every custom resource comes from a [`CrdSet`] read from
//! CRD manifests. Lookups go by `(group, version, plural)`, as request paths name resources. The registry is fixed at construction;
//! an unknown path gets the 404 kube-apiserver gives for it.

use std::sync::Arc;

use super::crd::{Crd, CrdSet};
use super::schema::Schema;

/// One served resource type.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`, `v1alpha1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Plural resource name as in paths, e.g. `pods`.
    pub plural: String,
    /// Singular name for discovery.
    pub singular: String,
    /// The list kind, e.g. `PodList`.
    pub list_kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether `status` is a subresource (ignored by main-resource writes, written through `/status`).
    pub status_subresource: bool,
    /// Short names for discovery (kubectl uses them).
    pub short_names: Vec<String>,
    /// Field-selector paths beyond `metadata.name` and `metadata.namespace`.
    pub extra_field_selectors: Vec<String>,
    /// The structural schema of a custom resource; `None` for built-in kinds.
    pub schema: Option<Arc<Schema>>,
    /// Whether a DELETE that removes the object answers with the object (the registry's
    /// `ReturnDeletedObject`: pods, service accounts, namespaces) rather than a `Status` of Success.
    pub returns_deleted_object: bool,
}

impl ResourceType {
    /// `apiVersion` as objects carry it: `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// The resource name as kube-apiserver's messages print it: `pods`, or `plural.group` for other groups.
    pub fn qualified_plural(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// The kind as kube-apiserver's 422 messages print it: `Pod`, or `Kind.group` for other groups.
    pub fn qualified_kind(&self) -> String {
        if self.group.is_empty() { self.kind.clone() } else { format!("{}.{}", self.kind, self.group) }
    }

    /// Whether this is a custom resource (defined by a CRD) rather than a built-in kind.
    pub fn is_custom(&self) -> bool {
        self.schema.is_some()
    }

    /// Whether this is a built-in (non-CRD) kind: strategic merge patch is accepted only for these.
    pub fn is_builtin(&self) -> bool {
        !self.is_custom()
    }

    /// Whether deleting an object of this kind is graceful (pods only).
    pub fn is_pod(&self) -> bool {
        self.is_core("pods")
    }

    /// Whether this is the core Namespace kind.
    pub fn is_namespace(&self) -> bool {
        self.is_core("namespaces")
    }

    /// Whether this is the core kind served as `plural`.
    pub fn is_core(&self, plural: &str) -> bool {
        self.group.is_empty() && self.plural == plural
    }

    fn from_crd(crd: &Crd) -> Self {
        ResourceType {
            group: crd.group.clone(),
            version: crd.version.clone(),
            kind: crd.kind.clone(),
            plural: crd.plural.clone(),
            singular: crd.singular.clone(),
            list_kind: crd.list_kind.clone(),
            namespaced: crd.namespaced,
            status_subresource: crd.status_subresource,
            short_names: crd.short_names.clone(),
            extra_field_selectors: crd.selectable_fields.clone(),
            schema: Some(crd.schema.clone()),
            returns_deleted_object: false,
        }
    }
}

/// Index of a resource type in its [`Registry`].
pub type ResourceId = usize;

/// The fixed set of served resource types.
#[derive(Debug, Clone)]
pub struct Registry {
    types: Vec<ResourceType>,
}

const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];

/// A built-in kind of `group`/`version`, namespaced, without status subresource or short names.
fn builtin(group: &str, version: &str, kind: &str, plural: &str) -> ResourceType {
    ResourceType {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        plural: plural.into(),
        singular: kind.to_lowercase(),
        list_kind: format!("{kind}List"),
        namespaced: true,
        status_subresource: false,
        short_names: Vec::new(),
        extra_field_selectors: Vec::new(),
        schema: None,
        returns_deleted_object: false,
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

impl Registry {
    /// The built-in kinds: core Pod, Secret, ConfigMap, ServiceAccount, Namespace, ResourceQuota; rbac
    /// Role and RoleBinding; coordination Lease.
    pub fn builtin() -> Self {
        let core = |kind, plural| builtin("", "v1", kind, plural);
        let rbac = |kind, plural| builtin("rbac.authorization.k8s.io", "v1", kind, plural);
        let types = vec![
            ResourceType {
                status_subresource: true,
                short_names: strings(&["po"]),
                extra_field_selectors: strings(POD_FIELDS),
                returns_deleted_object: true,
                ..core("Pod", "pods")
            },
            ResourceType { extra_field_selectors: strings(&["type"]), ..core("Secret", "secrets") },
            ResourceType { short_names: strings(&["cm"]), ..core("ConfigMap", "configmaps") },
            ResourceType {
                short_names: strings(&["sa"]),
                returns_deleted_object: true,
                ..core("ServiceAccount", "serviceaccounts")
            },
            ResourceType {
                namespaced: false,
                status_subresource: true,
                short_names: strings(&["ns"]),
                extra_field_selectors: strings(&["status.phase"]),
                returns_deleted_object: true,
                ..core("Namespace", "namespaces")
            },
            ResourceType {
                status_subresource: true,
                short_names: strings(&["quota"]),
                ..core("ResourceQuota", "resourcequotas")
            },
            rbac("Role", "roles"),
            rbac("RoleBinding", "rolebindings"),
            // Leader election's lock (client-go's `leaselock`, controller-runtime's default).
            builtin("coordination.k8s.io", "v1", "Lease", "leases"),
        ];
        Registry { types }
    }

    /// The built-in kinds plus every custom resource of `crds`, in the order given.
    pub fn new(crds: &CrdSet) -> Self {
        let mut registry = Registry::builtin();
        registry.types.extend(crds.crds().iter().map(ResourceType::from_crd));
        registry
    }

    /// Every type, in registration order.
    pub fn types(&self) -> &[ResourceType] {
        &self.types
    }

    /// The type with this id.
    pub fn get(&self, id: ResourceId) -> &ResourceType {
        &self.types[id]
    }

    /// Looks a type up the way request paths name it.
    pub fn find(&self, group: &str, version: &str, plural: &str) -> Option<ResourceId> {
        // The plural first: it tells most types apart, and mostly by its length.
        self.types.iter().position(|t| t.plural == plural && t.group == group && t.version == version)
    }

    /// Looks a type up by plural alone (for fault rules and counters).
    pub fn find_plural(&self, plural: &str) -> Option<ResourceId> {
        self.types.iter().position(|t| t.plural == plural)
    }

    /// The id of the Namespace type.
    pub fn namespace_id(&self) -> ResourceId {
        self.types.iter().position(ResourceType::is_namespace).expect("the registry serves namespaces")
    }

    /// Distinct `(group, version)` pairs outside the core group, in registration order.
    pub fn group_versions(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = Vec::new();
        for t in self.types.iter().filter(|t| !t.group.is_empty()) {
            if !out.contains(&(t.group.as_str(), t.version.as_str())) {
                out.push((&t.group, &t.version));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::apiserver::fixtures;

    #[test]
    fn serves_the_built_in_kinds_and_the_custom_resources_of_its_crds() {
        let r = fixtures::registry();
        let pods = r.get(r.find("", "v1", "pods").unwrap());
        assert!(pods.namespaced && pods.status_subresource && pods.is_pod() && pods.is_builtin());
        let er = r.get(r.find("actions.github.com", "v1alpha1", "ephemeralrunners").unwrap());
        assert_eq!(er.qualified_plural(), "ephemeralrunners.actions.github.com");
        assert_eq!(er.qualified_kind(), "EphemeralRunner.actions.github.com");
        assert_eq!(er.api_version(), "actions.github.com/v1alpha1");
        assert!(er.is_custom() && er.status_subresource);
        let widgets = r.get(r.find_plural("widgets").unwrap());
        assert!(!widgets.namespaced && !widgets.status_subresource);
        assert_eq!(widgets.extra_field_selectors, ["spec.color"]);
        assert!(!r.get(r.namespace_id()).namespaced);
        assert!(r.find("", "v1", "nodes").is_none());
        assert_eq!(
            r.group_versions(),
            [
                ("rbac.authorization.k8s.io", "v1"),
                ("coordination.k8s.io", "v1"),
                ("actions.github.com", "v1alpha1"),
                ("example.com", "v1")
            ]
        );
        assert_eq!(Registry::builtin().types().len(), 9);
    }
}
