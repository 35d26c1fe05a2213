//! The name of one object: its namespace and name, the unit a workqueue holds and a cache is keyed by.
//!
//! controller-runtime calls this a `reconcile.Request` (a `types.NamespacedName`). It orders by namespace,
//! then name, which is the order the API server lists in, so every iteration over keys is reproducible.

use std::fmt;

use kube::Resource;

/// The namespace and name of an object. Cluster-scoped objects have an empty namespace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ObjectKey {
    /// The object's namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// The object's name.
    pub name: String,
}

impl ObjectKey {
    /// A key from its parts.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectKey { namespace: namespace.into(), name: name.into() }
    }

    /// The key of `object`, read from its metadata. A missing name (an object not yet created with a
    /// `generateName`) gives an empty name.
    pub fn from_resource<K: Resource>(object: &K) -> Self {
        let meta = object.meta();
        ObjectKey {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for ObjectKey {
    /// `namespace/name`, like `types.NamespacedName.String()` in Go.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    #[test]
    fn key_is_read_from_metadata_and_displays_as_namespace_slash_name() {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("arc".into()),
                name: Some("runner-1".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let key = ObjectKey::from_resource(&cm);
        assert_eq!(key, ObjectKey::new("arc", "runner-1"));
        assert_eq!(key.to_string(), "arc/runner-1");
    }

    #[test]
    fn keys_order_by_namespace_then_name() {
        let mut keys = vec![ObjectKey::new("b", "a"), ObjectKey::new("a", "z"), ObjectKey::new("a", "b")];
        keys.sort();
        assert_eq!(keys, vec![ObjectKey::new("a", "b"), ObjectKey::new("a", "z"), ObjectKey::new("b", "a")]);
    }
}
