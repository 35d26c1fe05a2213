//! Reading and building object metadata, for reconcilers and builders of both families: names,
//! namespaces, labels and annotations, finalizers, controller ownerReferences, literal env vars.
//! Label and annotation maps are `BTreeMap`, so every built object serializes to the same bytes on
//! every run.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::EnvVar;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;

use super::build::{BuildError, BuildResult};
use crate::runtime::api::ApiResource;
use crate::runtime::lazy_copy::LazyCopy;

/// Whether `object` carries `finalizer`.
pub(crate) fn has_finalizer<K: Resource>(object: &K, finalizer: &str) -> bool {
    object.meta().finalizers.as_ref().is_some_and(|all| all.iter().any(|f| f == finalizer))
}

/// Removes `finalizer` from the live copy of `object`; true when it was there.
pub(crate) fn remove_finalizer<K: ApiResource>(object: &mut LazyCopy<K>, finalizer: &str) -> bool {
    if !has_finalizer(object.get(), finalizer) {
        return false;
    }
    if let Some(finalizers) = object.mutate().meta_mut().finalizers.as_mut() {
        finalizers.retain(|f| f != finalizer);
    }
    true
}

/// `object`'s namespace and name (empty when unset).
pub(crate) fn namespace_and_name<K: Resource>(object: &K) -> (&str, &str) {
    let meta = object.meta();
    (meta.namespace.as_deref().unwrap_or_default(), meta.name.as_deref().unwrap_or_default())
}

/// The name of `object`, or [`BuildError::MissingName`].
pub(crate) fn name_of<K: Resource<DynamicType = ()>>(object: &K) -> BuildResult<&str> {
    object.meta().name.as_deref().ok_or(BuildError::MissingName { kind: kind_of::<K>() })
}

/// The namespace of `object`, or `""` for a cluster-scoped or not-yet-defaulted object.
pub(crate) fn namespace_of<K: Resource<DynamicType = ()>>(object: &K) -> &str {
    object.meta().namespace.as_deref().unwrap_or_default()
}

/// `object`'s labels, or an empty map.
pub(crate) fn labels_of<K: Resource<DynamicType = ()>>(object: &K) -> BTreeMap<String, String> {
    object.meta().labels.clone().unwrap_or_default()
}

/// `object`'s annotations, or an empty map.
pub(crate) fn annotations_of<K: Resource<DynamicType = ()>>(object: &K) -> BTreeMap<String, String> {
    object.meta().annotations.clone().unwrap_or_default()
}

/// The kind of `K` as a static string (`object` for a kind known only at run time).
pub(crate) fn kind_of<K: Resource<DynamicType = ()>>() -> &'static str {
    match K::kind(&()) {
        std::borrow::Cow::Borrowed(kind) => kind,
        std::borrow::Cow::Owned(_) => "object",
    }
}

/// controller-runtime's `SetControllerReference`: a controller ownerReference with
/// `blockOwnerDeletion`, so garbage collection removes the child with its owner.
pub(crate) fn controller_reference<K: Resource<DynamicType = ()>>(owner: &K) -> BuildResult<OwnerReference> {
    let name = name_of(owner)?.to_string();
    let Some(uid) = owner.meta().uid.clone() else {
        return Err(BuildError::OwnerWithoutUid { kind: kind_of::<K>(), name });
    };
    Ok(OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name,
        uid,
        controller: Some(true),
        block_owner_deletion: Some(true),
    })
}

/// Builds a string map from literal pairs.
pub(crate) fn string_map<const N: usize>(pairs: [(&str, &str); N]) -> BTreeMap<String, String> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// An env var with a literal value.
pub(crate) fn plain_env(name: &str, value: &str) -> EnvVar {
    EnvVar { name: name.to_string(), value: Some(value.to_string()), value_from: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::EphemeralRunnerSet;

    #[test]
    fn controller_reference_points_at_the_owner_and_blocks_its_deletion() {
        let mut ers = EphemeralRunnerSet::new("arc", Default::default());
        ers.metadata.uid = Some("u1".into());
        let owner = controller_reference(&ers).unwrap();
        assert_eq!(owner.api_version, "actions.github.com/v1alpha1");
        assert_eq!(owner.kind, "EphemeralRunnerSet");
        assert_eq!((owner.name.as_str(), owner.uid.as_str()), ("arc", "u1"));
        assert_eq!((owner.controller, owner.block_owner_deletion), (Some(true), Some(true)));
    }

    #[test]
    fn an_owner_without_uid_is_an_error() {
        let ers = EphemeralRunnerSet::new("arc", Default::default());
        let err = controller_reference(&ers).unwrap_err();
        assert!(matches!(err, BuildError::OwnerWithoutUid { kind: "EphemeralRunnerSet", .. }), "{err}");
    }

    #[test]
    fn finalizers_are_found_by_name() {
        let mut ers = EphemeralRunnerSet::new("arc", Default::default());
        assert!(!has_finalizer(&ers, "a"));
        ers.metadata.finalizers = Some(vec!["a".into(), "b".into()]);
        assert!(has_finalizer(&ers, "b") && !has_finalizer(&ers, "c"));
        assert_eq!(namespace_and_name(&ers), ("", "arc"));
    }
}
