//! The resource registry: which kinds the fake API server serves, and how (group, version, kind,
//! plural, scope, status subresource, the field selectors each kind supports).
//!
//! Lookups go by `(group, version, plural)`, as request paths name resources. The registry is fixed at
//! construction; an unknown path gets the 404 kube-apiserver gives for it.

/// One served resource type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// API group; empty for the core group.
    pub group: &'static str,
    /// API version, e.g. `v1`, `v1alpha1`.
    pub version: &'static str,
    /// Kind, e.g. `Pod`.
    pub kind: &'static str,
    /// Plural resource name as in paths, e.g. `pods`.
    pub plural: &'static str,
    /// Singular name for discovery.
    pub singular: &'static str,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether `status` is a subresource (ignored by main-resource writes, written through `/status`).
    pub status_subresource: bool,
    /// Short names for discovery (kubectl uses them).
    pub short_names: &'static [&'static str],
    /// Field-selector paths beyond `metadata.name` and `metadata.namespace`.
    pub extra_field_selectors: &'static [&'static str],
}

impl ResourceType {
    /// `apiVersion` as objects carry it: `v1` or `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The resource name as kube-apiserver's messages print it: `pods`, or `plural.group` for other groups.
    pub fn qualified_plural(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The list kind, e.g. `PodList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// Whether this is a built-in (non-CRD) kind: strategic merge patch is accepted only for these.
    pub fn is_builtin(&self) -> bool {
        self.group.is_empty() || self.group.ends_with(".k8s.io")
    }

    /// Whether deleting an object of this kind is graceful (pods only).
    pub fn is_pod(&self) -> bool {
        self.group.is_empty() && self.plural == "pods"
    }

    /// Whether this is the core Namespace kind.
    pub fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.plural == "namespaces"
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

const fn core(kind: &'static str, plural: &'static str, singular: &'static str) -> ResourceType {
    ResourceType {
        group: "",
        version: "v1",
        kind,
        plural,
        singular,
        namespaced: true,
        status_subresource: false,
        short_names: &[],
        extra_field_selectors: &[],
    }
}

const fn custom(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    singular: &'static str,
    short_names: &'static [&'static str],
) -> ResourceType {
    ResourceType {
        group,
        version: "v1alpha1",
        kind,
        plural,
        singular,
        namespaced: true,
        status_subresource: true,
        short_names,
        extra_field_selectors: &[],
    }
}

impl Registry {
    /// The kinds arcsim's worlds use: core Pod, Secret, ConfigMap, ServiceAccount, Namespace; rbac Role and
    /// RoleBinding; ARC's four `actions.github.com` kinds; the legacy `actions.summerwind.dev` Runner.
    pub fn arc_default() -> Self {
        let rbac = |kind, plural, singular| ResourceType {
            group: "rbac.authorization.k8s.io",
            ..core(kind, plural, singular)
        };
        let types = vec![
            ResourceType {
                status_subresource: true,
                short_names: &["po"],
                extra_field_selectors: POD_FIELDS,
                ..core("Pod", "pods", "pod")
            },
            ResourceType { extra_field_selectors: &["type"], ..core("Secret", "secrets", "secret") },
            ResourceType { short_names: &["cm"], ..core("ConfigMap", "configmaps", "configmap") },
            ResourceType {
                short_names: &["sa"],
                ..core("ServiceAccount", "serviceaccounts", "serviceaccount")
            },
            ResourceType {
                namespaced: false,
                status_subresource: true,
                short_names: &["ns"],
                extra_field_selectors: &["status.phase"],
                ..core("Namespace", "namespaces", "namespace")
            },
            rbac("Role", "roles", "role"),
            rbac("RoleBinding", "rolebindings", "rolebinding"),
            custom(
                "actions.github.com",
                "AutoscalingRunnerSet",
                "autoscalingrunnersets",
                "autoscalingrunnerset",
                &[],
            ),
            custom(
                "actions.github.com",
                "EphemeralRunnerSet",
                "ephemeralrunnersets",
                "ephemeralrunnerset",
                &[],
            ),
            custom("actions.github.com", "EphemeralRunner", "ephemeralrunners", "ephemeralrunner", &[]),
            custom(
                "actions.github.com",
                "AutoscalingListener",
                "autoscalinglisteners",
                "autoscalinglistener",
                &[],
            ),
            custom("actions.summerwind.dev", "Runner", "runners", "runner", &[]),
        ];
        Registry { types }
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
        self.types.iter().position(|t| t.group == group && t.version == version && t.plural == plural)
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
    pub fn group_versions(&self) -> Vec<(&'static str, &'static str)> {
        let mut out: Vec<(&'static str, &'static str)> = Vec::new();
        for t in self.types.iter().filter(|t| !t.group.is_empty()) {
            if !out.contains(&(t.group, t.version)) {
                out.push((t.group, t.version));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_the_kinds_arc_needs_with_their_scopes() {
        let r = Registry::arc_default();
        let pods = r.get(r.find("", "v1", "pods").unwrap());
        assert!(pods.namespaced && pods.status_subresource && pods.is_pod());
        let er = r.get(r.find("actions.github.com", "v1alpha1", "ephemeralrunners").unwrap());
        assert_eq!(er.qualified_plural(), "ephemeralrunners.actions.github.com");
        assert_eq!(er.api_version(), "actions.github.com/v1alpha1");
        assert!(!r.get(r.namespace_id()).namespaced);
        assert!(r.find("", "v1", "nodes").is_none());
        assert_eq!(r.group_versions().len(), 3);
    }
}
