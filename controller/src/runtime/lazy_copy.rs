//! `lazyCopy` (ARC-MODEL §5.3): hand a reconciler the cached object and deep-copy it only when the
//! reconciler first changes it.
//!
//! [`LazyCopy`] holds the informer's `Arc<K>`. [`LazyCopy::get`] reads the live object (the copy once
//! there is one, the cached object before). [`LazyCopy::mutate`] takes the copy on its first call only
//! and hands out the copy. The merge patch is the RFC 7386 diff between the cached original and the live
//! object; asking for it before any `mutate()` is a caller error, returned as
//! [`LazyCopyError::NotMutated`] (ARC panics there; we never do). [`CopyMode::Eager`] copies at
//! construction, which is what ARC did before the change, so benches can compare; the patches are the
//! same in both modes. Every copy is counted in `arc_deep_copies_total{kind}`.

use std::sync::Arc;

use kube::Resource;
use serde::Serialize;
use serde_json::{Map, Value};

use super::merge_patch;
use super::metrics::{DEEP_COPIES_TOTAL, Metrics};

/// When [`LazyCopy`] takes its deep copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CopyMode {
    /// On the first [`LazyCopy::mutate`] call (the change set's behaviour).
    #[default]
    Lazy,
    /// At construction, whether or not anything is changed (the behaviour before the change set).
    Eager,
}

/// Why no patch could be built.
#[derive(Debug, thiserror::Error)]
pub enum LazyCopyError {
    /// `merge_patch` was asked for before `mutate()`: there is nothing to write.
    #[error("no merge patch: the object was never mutated")]
    NotMutated,
    /// The optimistic lock needs the original's resourceVersion, and it has none.
    #[error("cannot lock optimistically: the original object has no metadata.resourceVersion")]
    MissingResourceVersion,
    /// The object could not be turned into JSON.
    #[error("cannot serialise the object for a merge patch: {0}")]
    Serialize(#[from] serde_json::Error),
}

/// A cached object and, once mutated, its private copy.
#[derive(Debug)]
pub struct LazyCopy<K> {
    original: Arc<K>,
    copy: Option<K>,
    mutated: bool,
    metrics: Metrics,
}

impl<K: Resource<DynamicType = ()> + Clone + Serialize> LazyCopy<K> {
    /// Wraps the cached object `original`; in [`CopyMode::Eager`] the copy is taken now.
    pub fn new(original: Arc<K>, mode: CopyMode, metrics: &Metrics) -> Self {
        let mut lazy = LazyCopy { original, copy: None, mutated: false, metrics: metrics.clone() };
        if mode == CopyMode::Eager {
            lazy.copy = Some(lazy.deep_copy());
        }
        lazy
    }

    /// The live object: the copy once `mutate()` was called, the cached object before.
    pub fn get(&self) -> &K {
        match (&self.copy, self.mutated) {
            (Some(copy), true) => copy,
            _ => &self.original,
        }
    }

    /// The cached object as it was handed in.
    pub fn original(&self) -> &K {
        &self.original
    }

    /// The live object for changing; the first call takes the deep copy (unless eager mode already did).
    pub fn mutate(&mut self) -> &mut K {
        self.mutated = true;
        let copy = match self.copy.take() {
            Some(copy) => copy,
            None => self.deep_copy(),
        };
        self.copy.insert(copy)
    }

    /// Whether `mutate()` was called.
    pub fn is_modified(&self) -> bool {
        self.mutated
    }

    /// The merge patch from the original to the live object (`client.MergeFrom(original)`): `{}` when
    /// the mutations changed nothing.
    pub fn merge_patch(&self) -> Result<Value, LazyCopyError> {
        let Some(live) = self.copy.as_ref().filter(|_| self.mutated) else {
            return Err(LazyCopyError::NotMutated);
        };
        let original = serde_json::to_value(self.original.as_ref())?;
        let live = serde_json::to_value(live)?;
        Ok(merge_patch::diff(&original, &live))
    }

    /// [`LazyCopy::merge_patch`] plus the original's `metadata.resourceVersion`, which makes the API
    /// server refuse the patch with a Conflict if the object changed since it was cached
    /// (`client.MergeFromWithOptimisticLock`).
    pub fn merge_patch_with_optimistic_lock(&self) -> Result<Value, LazyCopyError> {
        let patch = self.merge_patch()?;
        let resource_version =
            self.original.meta().resource_version.clone().ok_or(LazyCopyError::MissingResourceVersion)?;
        // Both sides serialise to JSON objects, so the patch is an object, and so is its metadata.
        let mut fields = match patch {
            Value::Object(fields) => fields,
            _ => Map::new(),
        };
        let metadata = fields.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if !metadata.is_object() {
            *metadata = Value::Object(Map::new());
        }
        if let Value::Object(metadata) = metadata {
            metadata.insert("resourceVersion".to_string(), Value::String(resource_version));
        }
        Ok(Value::Object(fields))
    }

    fn deep_copy(&self) -> K {
        self.metrics.inc(DEEP_COPIES_TOTAL, &[("kind", &K::kind(&()))]);
        K::clone(&self.original)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use serde_json::json;

    use super::*;

    fn cached() -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("arc".into()),
                name: Some("cm".into()),
                resource_version: Some("41".into()),
                labels: Some(BTreeMap::from([("keep".into(), "1".into()), ("drop".into(), "2".into())])),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([("k".into(), "v".into())])),
            ..ConfigMap::default()
        })
    }

    fn copies(metrics: &Metrics) -> i64 {
        metrics.get(DEEP_COPIES_TOTAL, &[("kind", "ConfigMap")])
    }

    fn edit(object: &mut ConfigMap) {
        let labels = object.metadata.labels.get_or_insert_with(BTreeMap::new);
        labels.remove("drop");
        labels.insert("add".into(), "3".into());
        object.data = Some(BTreeMap::from([("k".into(), "w".into())]));
    }

    #[test]
    fn nothing_is_copied_or_patched_without_mutate() {
        let metrics = Metrics::new();
        let original = cached();
        let lazy = LazyCopy::new(Arc::clone(&original), CopyMode::Lazy, &metrics);
        assert!(std::ptr::eq(lazy.get(), original.as_ref()), "reads see the cached object itself");
        assert!(!lazy.is_modified());
        assert!(matches!(lazy.merge_patch(), Err(LazyCopyError::NotMutated)));
        assert!(matches!(lazy.merge_patch_with_optimistic_lock(), Err(LazyCopyError::NotMutated)));
        assert_eq!(copies(&metrics), 0);
    }

    #[test]
    fn many_mutations_take_one_copy_and_leave_the_cache_alone() {
        let metrics = Metrics::new();
        let original = cached();
        let mut lazy = LazyCopy::new(Arc::clone(&original), CopyMode::Lazy, &metrics);
        lazy.mutate().metadata.labels = None;
        lazy.mutate().data = None;
        edit(lazy.mutate());
        assert_eq!(copies(&metrics), 1);
        assert!(lazy.is_modified());
        assert_eq!(lazy.get().data, Some(BTreeMap::from([("k".into(), "w".into())])));
        assert_eq!(*original, *cached(), "the cached object is never changed");
    }

    #[test]
    fn the_patch_is_the_diff_between_original_and_live() {
        let metrics = Metrics::new();
        let mut lazy = LazyCopy::new(cached(), CopyMode::Lazy, &metrics);
        edit(lazy.mutate());
        let patch = lazy.merge_patch().expect("mutated");
        assert_eq!(patch, json!({"metadata": {"labels": {"drop": null, "add": "3"}}, "data": {"k": "w"}}));
        let expected = merge_patch::diff(
            &serde_json::to_value(lazy.original()).expect("json"),
            &serde_json::to_value(lazy.get()).expect("json"),
        );
        assert_eq!(patch, expected);
    }

    #[test]
    fn a_mutation_that_changes_nothing_patches_nothing() {
        let mut lazy = LazyCopy::new(cached(), CopyMode::Lazy, &Metrics::new());
        lazy.mutate();
        assert_eq!(lazy.merge_patch().expect("mutated"), json!({}));
    }

    #[test]
    fn the_optimistic_lock_carries_the_original_resource_version() {
        let mut lazy = LazyCopy::new(cached(), CopyMode::Lazy, &Metrics::new());
        edit(lazy.mutate());
        lazy.mutate().metadata.resource_version = Some("99".into());
        let patch = lazy.merge_patch_with_optimistic_lock().expect("mutated");
        assert_eq!(patch["metadata"]["resourceVersion"], json!("41"));
        assert_eq!(patch["metadata"]["labels"], json!({"drop": null, "add": "3"}));

        let mut unchanged = LazyCopy::new(cached(), CopyMode::Lazy, &Metrics::new());
        unchanged.mutate();
        assert_eq!(
            unchanged.merge_patch_with_optimistic_lock().expect("mutated"),
            json!({"metadata": {"resourceVersion": "41"}})
        );
    }

    #[test]
    fn the_optimistic_lock_needs_a_resource_version() {
        let mut no_version = ConfigMap::clone(&cached());
        no_version.metadata.resource_version = None;
        let mut lazy = LazyCopy::new(Arc::new(no_version), CopyMode::Lazy, &Metrics::new());
        edit(lazy.mutate());
        assert!(matches!(
            lazy.merge_patch_with_optimistic_lock(),
            Err(LazyCopyError::MissingResourceVersion)
        ));
    }

    #[test]
    fn eager_mode_copies_at_once_and_patches_the_same() {
        let metrics = Metrics::new();
        let mut eager = LazyCopy::new(cached(), CopyMode::Eager, &metrics);
        assert_eq!(copies(&metrics), 1);
        assert!(!eager.is_modified());
        assert!(matches!(eager.merge_patch(), Err(LazyCopyError::NotMutated)));
        edit(eager.mutate());
        assert_eq!(copies(&metrics), 1);

        let mut lazy = LazyCopy::new(cached(), CopyMode::Lazy, &Metrics::new());
        edit(lazy.mutate());
        assert_eq!(eager.merge_patch().expect("mutated"), lazy.merge_patch().expect("mutated"));
    }
}
