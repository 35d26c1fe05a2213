//! Update predicates: filters that drop an update event before it reaches a workqueue.
//!
//! A predicate sees the old and the new object and says whether the update passes. Create and delete
//! events never meet a predicate (ARC-MODEL §5.1). [`resource_version_changed`] is the global filter every
//! watch applies first (controller-runtime's `ResourceVersionChangedPredicate`); the ARC-specific
//! projections are built elsewhere with [`UpdatePredicate::new`]. Each drop is counted in
//! `arc_predicate_dropped_updates_total{predicate}`.

use std::sync::Arc;

use kube::Resource;

use super::metrics::{Metrics, PREDICATE_DROPPED_TOTAL};

/// The name [`resource_version_changed`] counts its drops under.
pub(crate) const RESOURCE_VERSION_CHANGED: &str = "resource_version_changed";

/// The test itself: `(old, new) -> passes`.
type UpdateTest<K> = Arc<dyn Fn(&K, &K) -> bool + Send + Sync>;

/// A named test on an update: `true` lets it through.
pub struct UpdatePredicate<K> {
    name: String,
    passes: UpdateTest<K>,
}

impl<K> Clone for UpdatePredicate<K> {
    fn clone(&self) -> Self {
        UpdatePredicate { name: self.name.clone(), passes: Arc::clone(&self.passes) }
    }
}

impl<K> std::fmt::Debug for UpdatePredicate<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpdatePredicate").field("name", &self.name).finish_non_exhaustive()
    }
}

impl<K> UpdatePredicate<K> {
    /// A predicate called `name` (its metric label) that passes an update when `passes(old, new)`.
    pub fn new(name: &str, passes: impl Fn(&K, &K) -> bool + Send + Sync + 'static) -> Self {
        UpdatePredicate { name: name.to_string(), passes: Arc::new(passes) }
    }

    /// The predicate's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the update from `old` to `new` passes, without counting anything.
    pub fn passes(&self, old: &K, new: &K) -> bool {
        (self.passes)(old, new)
    }

    /// Whether the update passes; a drop is counted in `metrics`.
    pub fn filter(&self, old: &K, new: &K, metrics: &Metrics) -> bool {
        let passes = self.passes(old, new);
        if !passes {
            metrics.inc(PREDICATE_DROPPED_TOTAL, &[("predicate", &self.name)]);
        }
        passes
    }
}

/// Passes an update only when `metadata.resourceVersion` changed; drops resyncs and repeats.
pub(crate) fn resource_version_changed<K: Resource>() -> UpdatePredicate<K> {
    UpdatePredicate::new(RESOURCE_VERSION_CHANGED, |old: &K, new: &K| {
        old.meta().resource_version != new.meta().resource_version
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    fn at_version(version: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta { resource_version: Some(version.into()), ..ObjectMeta::default() },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn unchanged_resource_versions_are_dropped_and_counted() {
        let metrics = Metrics::new();
        let predicate = resource_version_changed::<ConfigMap>();
        assert!(predicate.filter(&at_version("1"), &at_version("2"), &metrics));
        assert!(!predicate.filter(&at_version("2"), &at_version("2"), &metrics));
        assert!(!predicate.filter(&at_version("3"), &at_version("3"), &metrics));
        assert_eq!(metrics.get(PREDICATE_DROPPED_TOTAL, &[("predicate", RESOURCE_VERSION_CHANGED)]), 2);
    }

    #[test]
    fn custom_predicates_count_drops_under_their_own_name() {
        let metrics = Metrics::new();
        let data_changed =
            UpdatePredicate::new("data", |old: &ConfigMap, new: &ConfigMap| old.data != new.data);
        let mut changed = at_version("2");
        changed.data = Some([("k".to_string(), "v".to_string())].into());
        assert!(data_changed.filter(&at_version("1"), &changed, &metrics));
        assert!(!data_changed.filter(&at_version("1"), &at_version("2"), &metrics));
        assert!(!data_changed.passes(&at_version("1"), &at_version("2")));
        assert_eq!(metrics.get(PREDICATE_DROPPED_TOTAL, &[("predicate", "data")]), 1);
        assert_eq!(data_changed.name(), "data");
    }
}
