//! The informer cache: every object of one type the informer has seen, keyed by [`ObjectKey`].
//!
//! [`Store`] is a cloneable read handle. Reads come back in key order (namespace, then name), never in
//! hash order, so a reconciler that walks a list decides the same way on every run. Besides the objects
//! the store keeps the `.metadata.controller` field index of ARC-MODEL §1.1: for each namespace and
//! controller ownerReference (apiVersion, kind, name) the objects it controls, by key, so listing a
//! set's thousand runners walks one map instead of looking each key up. Only the informer writes; its
//! write methods are crate-private.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use kube::Resource;

use super::controller_ref::controller_of;
use super::object_key::ObjectKey;

/// An entry of the controller field index: namespace, owner apiVersion, owner kind, owner name.
type ControllerIndexKey = (String, String, String, String);

/// The objects controlled by one owner, by key (the same `Arc`s as the cache's).
type Controlled<K> = BTreeMap<ObjectKey, Arc<K>>;

/// The objects and the field index, updated together under one lock.
struct Cache<K> {
    objects: BTreeMap<ObjectKey, Arc<K>>,
    by_controller: BTreeMap<ControllerIndexKey, Controlled<K>>,
}

impl<K> Default for Cache<K> {
    fn default() -> Self {
        Cache { objects: BTreeMap::new(), by_controller: BTreeMap::new() }
    }
}

/// A read handle on an informer's cache. Clones share the cache.
pub struct Store<K> {
    cache: Arc<RwLock<Cache<K>>>,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store { cache: Arc::clone(&self.cache) }
    }
}

impl<K> Default for Store<K> {
    fn default() -> Self {
        Store { cache: Arc::default() }
    }
}

impl<K> std::fmt::Debug for Store<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("len", &self.len()).finish()
    }
}

impl<K> Store<K> {
    /// The cached object under `key`.
    pub fn get(&self, key: &ObjectKey) -> Option<Arc<K>> {
        self.read().objects.get(key).cloned()
    }

    /// Every cached object, in key order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.read().objects.values().cloned().collect()
    }

    /// The cached objects in `namespace`, in name order.
    pub fn list_in(&self, namespace: &str) -> Vec<Arc<K>> {
        let from = ObjectKey::new(namespace, "");
        let cache = self.read();
        cache
            .objects
            .range(from..)
            .take_while(|(key, _)| key.namespace == namespace)
            .map(|(_, object)| Arc::clone(object))
            .collect()
    }

    /// The cached objects in `namespace` whose controller ownerReference (the one with
    /// `controller: true`) has this apiVersion, kind and name, in name order: controller-runtime's
    /// `InNamespace(ns) + MatchingFields{".metadata.controller": owner_name}`.
    pub fn list_controlled_by(
        &self,
        namespace: &str,
        owner_api_version: &str,
        owner_kind: &str,
        owner_name: &str,
    ) -> Vec<Arc<K>> {
        let index_key = (
            namespace.to_string(),
            owner_api_version.to_string(),
            owner_kind.to_string(),
            owner_name.to_string(),
        );
        let cache = self.read();
        cache
            .by_controller
            .get(&index_key)
            .map(|controlled| controlled.values().cloned().collect())
            .unwrap_or_default()
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.read().objects.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.read().objects.is_empty()
    }

    fn read(&self) -> RwLockReadGuard<'_, Cache<K>> {
        self.cache.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Cache<K>> {
        self.cache.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Resource> Store<K> {
    /// A store holding `objects` and fed by no informer: for tests, benches and tools that want to hand a
    /// reconciler a fixed cache. A later object with the same key replaces an earlier one.
    pub fn from_objects(objects: impl IntoIterator<Item = K>) -> Self {
        let store = Store::default();
        for object in objects {
            store.insert(Arc::new(object));
        }
        store
    }

    /// Caches `object`, returning the object it replaced.
    pub(crate) fn insert(&self, object: Arc<K>) -> Option<Arc<K>> {
        let key = ObjectKey::from_resource(object.as_ref());
        let mut cache = self.write();
        let old = cache.objects.insert(key.clone(), Arc::clone(&object));
        if let Some(old) = &old {
            unindex(&mut cache.by_controller, &key, old.as_ref());
        }
        index(&mut cache.by_controller, &key, &object);
        old
    }

    /// Drops the object under `key`, returning it.
    pub(crate) fn remove(&self, key: &ObjectKey) -> Option<Arc<K>> {
        let mut cache = self.write();
        let old = cache.objects.remove(key)?;
        unindex(&mut cache.by_controller, key, old.as_ref());
        Some(old)
    }

    /// Replaces the whole cache with `objects` (a relist), returning the previous contents.
    pub(crate) fn replace(&self, objects: BTreeMap<ObjectKey, Arc<K>>) -> BTreeMap<ObjectKey, Arc<K>> {
        let mut by_controller = BTreeMap::new();
        for (key, object) in &objects {
            index(&mut by_controller, key, object);
        }
        let mut cache = self.write();
        cache.by_controller = by_controller;
        std::mem::replace(&mut cache.objects, objects)
    }
}

/// The index entry `object` belongs under, if it has a controller.
fn index_key_of<K: Resource>(key: &ObjectKey, object: &K) -> Option<ControllerIndexKey> {
    let owner = controller_of(object)?;
    Some((key.namespace.clone(), owner.api_version.clone(), owner.kind.clone(), owner.name.clone()))
}

fn index<K: Resource>(
    by_controller: &mut BTreeMap<ControllerIndexKey, Controlled<K>>,
    key: &ObjectKey,
    object: &Arc<K>,
) {
    if let Some(index_key) = index_key_of(key, object.as_ref()) {
        by_controller.entry(index_key).or_default().insert(key.clone(), Arc::clone(object));
    }
}

fn unindex<K: Resource>(
    by_controller: &mut BTreeMap<ControllerIndexKey, Controlled<K>>,
    key: &ObjectKey,
    object: &K,
) {
    let Some(index_key) = index_key_of(key, object) else {
        return;
    };
    if let Some(keys) = by_controller.get_mut(&index_key) {
        keys.remove(key);
        if keys.is_empty() {
            by_controller.remove(&index_key);
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use kube::api::ObjectMeta;

    use super::*;

    const ER_API: &str = "actions.github.com/v1alpha1";

    fn config_map(namespace: &str, name: &str, owners: Vec<OwnerReference>) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                owner_references: Some(owners),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn owner(kind: &str, name: &str, controller: Option<bool>) -> OwnerReference {
        OwnerReference {
            api_version: ER_API.into(),
            kind: kind.into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            controller,
            ..OwnerReference::default()
        }
    }

    fn names(objects: &[Arc<ConfigMap>]) -> Vec<String> {
        objects.iter().map(|o| ObjectKey::from_resource(o.as_ref()).to_string()).collect()
    }

    #[test]
    fn lists_come_back_in_key_order_and_by_namespace() {
        let store = Store::from_objects([
            config_map("b", "x", vec![]),
            config_map("a", "z", vec![]),
            config_map("a", "b", vec![]),
            config_map("ab", "c", vec![]),
        ]);
        assert_eq!(names(&store.list()), ["a/b", "a/z", "ab/c", "b/x"]);
        assert_eq!(names(&store.list_in("a")), ["a/b", "a/z"]);
        assert!(store.list_in("none").is_empty());
        assert_eq!(store.len(), 4);
        assert!(store.get(&ObjectKey::new("a", "z")).is_some());
        assert!(store.get(&ObjectKey::new("a", "q")).is_none());
    }

    #[test]
    fn controlled_by_counts_only_the_controller_reference_with_matching_kind() {
        let store = Store::from_objects([
            config_map("ns", "r1", vec![owner("EphemeralRunnerSet", "ers", Some(true))]),
            config_map("ns", "r2", vec![owner("EphemeralRunnerSet", "ers", None)]),
            config_map("ns", "r3", vec![owner("AutoscalingRunnerSet", "ers", Some(true))]),
            config_map("other", "r4", vec![owner("EphemeralRunnerSet", "ers", Some(true))]),
            config_map(
                "ns",
                "r0",
                vec![owner("EphemeralRunnerSet", "x", None), owner("EphemeralRunnerSet", "ers", Some(true))],
            ),
        ]);
        let controlled = store.list_controlled_by("ns", ER_API, "EphemeralRunnerSet", "ers");
        assert_eq!(names(&controlled), ["ns/r0", "ns/r1"]);
        assert!(store.list_controlled_by("ns", "v1", "EphemeralRunnerSet", "ers").is_empty());
    }

    #[test]
    fn index_follows_updates_removals_and_replacement() {
        let store =
            Store::from_objects([config_map("ns", "r1", vec![owner("EphemeralRunnerSet", "a", Some(true))])]);
        store.insert(Arc::new(config_map("ns", "r1", vec![owner("EphemeralRunnerSet", "b", Some(true))])));
        assert!(store.list_controlled_by("ns", ER_API, "EphemeralRunnerSet", "a").is_empty());
        assert_eq!(store.list_controlled_by("ns", ER_API, "EphemeralRunnerSet", "b").len(), 1);

        store.remove(&ObjectKey::new("ns", "r1"));
        assert!(store.list_controlled_by("ns", ER_API, "EphemeralRunnerSet", "b").is_empty());
        assert!(store.is_empty());

        let replacement = [config_map("ns", "r2", vec![owner("EphemeralRunnerSet", "c", Some(true))])]
            .into_iter()
            .map(|o| (ObjectKey::from_resource(&o), Arc::new(o)))
            .collect();
        let previous = store.replace(replacement);
        assert!(previous.is_empty());
        assert_eq!(names(&store.list_controlled_by("ns", ER_API, "EphemeralRunnerSet", "c")), ["ns/r2"]);
    }

    #[test]
    fn an_update_under_the_same_owner_lists_the_new_version_not_the_old() {
        let owners = || vec![owner("EphemeralRunnerSet", "a", Some(true))];
        let store = Store::from_objects([config_map("ns", "r1", owners())]);
        let mut updated = config_map("ns", "r1", owners());
        updated.data = Some(BTreeMap::from([("phase".to_string(), "Running".to_string())]));
        store.insert(Arc::new(updated.clone()));
        let listed = store.list_controlled_by("ns", ER_API, "EphemeralRunnerSet", "a");
        assert_eq!(listed.iter().map(|o| o.as_ref()).collect::<Vec<_>>(), [&updated]);
        assert!(Arc::ptr_eq(&listed[0], &store.get(&ObjectKey::new("ns", "r1")).unwrap()));
    }
}
