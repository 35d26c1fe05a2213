//! Finding an object's controller: the one ownerReference with `controller: true`.
//!
//! Both the cache's `.metadata.controller` field index (ARC-MODEL §1.1) and `Owns(...)` watches need it.
//! Other ownerReferences (without `controller: true`) never count, exactly as in controller-runtime's
//! `metav1.GetControllerOf`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;

/// The ownerReference of `object` marked `controller: true`, if any.
pub(crate) fn controller_of<K: Resource>(object: &K) -> Option<&OwnerReference> {
    object.meta().owner_references.as_deref()?.iter().find(|owner| owner.controller == Some(true))
}

/// Whether `owner` names an object of this apiVersion and kind.
pub(crate) fn refers_to(owner: &OwnerReference, api_version: &str, kind: &str) -> bool {
    owner.api_version == api_version && owner.kind == kind
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    fn owner(name: &str, controller: Option<bool>) -> OwnerReference {
        OwnerReference {
            api_version: "actions.github.com/v1alpha1".into(),
            kind: "EphemeralRunner".into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller,
            ..OwnerReference::default()
        }
    }

    fn owned_by(owners: Vec<OwnerReference>) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta { owner_references: Some(owners), ..ObjectMeta::default() },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn only_the_reference_marked_controller_counts() {
        let cm = owned_by(vec![owner("plain", None), owner("not", Some(false)), owner("boss", Some(true))]);
        assert_eq!(controller_of(&cm).map(|o| o.name.as_str()), Some("boss"));
        assert!(controller_of(&owned_by(vec![owner("plain", None)])).is_none());
        assert!(controller_of(&ConfigMap::default()).is_none());
    }

    #[test]
    fn refers_to_compares_api_version_and_kind() {
        let o = owner("x", Some(true));
        assert!(refers_to(&o, "actions.github.com/v1alpha1", "EphemeralRunner"));
        assert!(!refers_to(&o, "actions.github.com/v1beta1", "EphemeralRunner"));
        assert!(!refers_to(&o, "actions.github.com/v1alpha1", "EphemeralRunnerSet"));
    }
}
