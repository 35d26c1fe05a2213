//! The object store: every object as JSON, one global resourceVersion counter, a bounded per-resource
//! history of changes for watch resumption, and the subscribers that changes fan out to.
//!
//! The store applies changes it is given; it does not validate them (admission and lifecycle decide
//! what a write becomes). Every commit bumps the global resourceVersion, stamps it into the object and
//! emits one [`Change`]. Keys are ordered (resource, namespace, name), so lists come out in the order
//! kube-apiserver returns them.

use crate::json_at::At;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use futures::channel::mpsc::UnboundedSender;
use serde_json::Value;

use super::registry::ResourceId;
use super::wire::Wire;

/// Where an object lives.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreKey {
    /// Its resource type.
    pub resource: ResourceId,
    /// Its namespace; empty for cluster-scoped kinds.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl StoreKey {
    /// The key `object` is stored under as a `resource`.
    pub fn of(resource: ResourceId, object: &Value) -> StoreKey {
        let meta = |field: &str| object.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str);
        StoreKey {
            resource,
            namespace: meta("namespace").unwrap_or_default().to_string(),
            name: meta("name").unwrap_or_default().to_string(),
        }
    }

    /// `namespace/name`, or `name` when cluster-scoped.
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
}

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// An object was created (or started matching a selector).
    Added,
    /// An object changed.
    Modified,
    /// An object was removed (or stopped matching a selector).
    Deleted,
}

impl EventType {
    /// The wire name (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One committed change.
#[derive(Debug, Clone)]
pub struct Change {
    /// The resourceVersion the change committed at.
    pub rv: u64,
    /// What happened.
    pub kind: EventType,
    /// Which object.
    pub key: StoreKey,
    /// The object after the change (for a deletion: its last state, at the new resourceVersion).
    pub object: Arc<Value>,
    /// The object before the change (absent for creations); selectors need it.
    pub old: Option<Arc<Value>>,
    /// `object`'s JSON, encoded once for every watch that sends it.
    pub wire: Wire,
}

impl Change {
    /// This change without its encoding: what a record keeps for the whole run, while the bytes go
    /// once the watches have sent them.
    pub fn without_encoding(&self) -> Change {
        Change {
            rv: self.rv,
            kind: self.kind,
            key: self.key.clone(),
            object: self.object.clone(),
            old: self.old.clone(),
            wire: Wire::default(),
        }
    }
}

#[derive(Debug, Default)]
struct History {
    changes: VecDeque<Arc<Change>>,
    /// The highest resourceVersion evicted from `changes` (0 when nothing has been).
    evicted_through: u64,
}

/// A change listener: changes of one resource (or all), optionally in one namespace.
struct Subscriber {
    resource: Option<ResourceId>,
    namespace: Option<String>,
    tx: UnboundedSender<Arc<Change>>,
}

/// Resuming from a resourceVersion older than the retained history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooOld {
    /// The oldest resourceVersion a watch can still resume from.
    pub oldest: u64,
}

/// Called with every change as it commits (the API server puts it into the run's record).
pub type CommitSink = Box<dyn Fn(&Arc<Change>) + Send + Sync>;

/// The object store.
pub struct Store {
    objects: BTreeMap<StoreKey, Arc<Value>>,
    uids: BTreeMap<String, StoreKey>,
    /// Owner uid → the keys of the objects whose ownerReferences name it (for garbage collection).
    dependents: BTreeMap<String, BTreeSet<StoreKey>>,
    rv: u64,
    history: BTreeMap<ResourceId, History>,
    history_capacity: usize,
    subscribers: Vec<Subscriber>,
    on_commit: CommitSink,
    /// Each stored object's last change, whose encoding answers share with watches.
    latest: BTreeMap<StoreKey, Arc<Change>>,
}

impl Store {
    /// An empty store keeping up to `history_capacity` changes per resource, calling `on_commit` with
    /// every change as it commits.
    pub fn new(history_capacity: usize, on_commit: CommitSink) -> Self {
        Store {
            objects: BTreeMap::new(),
            uids: BTreeMap::new(),
            dependents: BTreeMap::new(),
            rv: 0,
            history: BTreeMap::new(),
            history_capacity: history_capacity.max(1),
            subscribers: Vec::new(),
            on_commit,
            latest: BTreeMap::new(),
        }
    }

    /// The latest committed resourceVersion.
    pub fn current_rv(&self) -> u64 {
        self.rv
    }

    /// The object at `key`.
    pub fn get(&self, key: &StoreKey) -> Option<&Arc<Value>> {
        self.objects.get(key)
    }

    /// The key of the object with this uid.
    pub fn key_of_uid(&self, uid: &str) -> Option<&StoreKey> {
        self.uids.get(uid)
    }

    /// Objects of `resource` (in `namespace` if given), ordered by namespace then name.
    pub fn list(&self, resource: ResourceId, namespace: Option<&str>) -> Vec<(&StoreKey, &Arc<Value>)> {
        let start =
            StoreKey { resource, namespace: namespace.unwrap_or("").to_string(), name: String::new() };
        self.objects
            .range(start..)
            .take_while(|(k, _)| k.resource == resource && namespace.is_none_or(|ns| k.namespace == ns))
            .collect()
    }

    /// Every object in `namespace`, across resources.
    pub fn keys_in_namespace(&self, namespace: &str) -> Vec<StoreKey> {
        self.objects.keys().filter(|k| k.namespace == namespace).cloned().collect()
    }

    /// Every object whose ownerReferences name `owner_uid`, in key order.
    pub fn dependents_of(&self, owner_uid: &str) -> Vec<StoreKey> {
        self.dependents.get(owner_uid).map(|keys| keys.iter().cloned().collect()).unwrap_or_default()
    }

    /// Moves `key` in the owner index from the owners `old` names to those `new` names.
    fn index_owners(&mut self, key: &StoreKey, old: Option<&Value>, new: Option<&Value>) {
        if let (Some(old), Some(new)) = (old, new)
            && owner_uids(old).eq(owner_uids(new))
        {
            return; // the same owners: most updates leave them alone
        }
        for uid in old.into_iter().flat_map(owner_uids) {
            if let Some(keys) = self.dependents.get_mut(uid) {
                keys.remove(key);
                if keys.is_empty() {
                    self.dependents.remove(uid);
                }
            }
        }
        for uid in new.into_iter().flat_map(owner_uids) {
            self.dependents.entry(uid.to_string()).or_default().insert(key.clone());
        }
    }

    /// Commits a new object; the caller has checked the key is free.
    pub fn create(&mut self, key: StoreKey, mut object: Value) -> Arc<Value> {
        let rv = self.bump(&mut object);
        let object = Arc::new(object);
        if let Some(uid) = uid_of(&object) {
            self.uids.insert(uid, key.clone());
        }
        self.index_owners(&key, None, Some(&object));
        self.objects.insert(key.clone(), object.clone());
        self.emit(Change {
            rv,
            kind: EventType::Added,
            key,
            object: object.clone(),
            old: None,
            wire: Wire::default(),
        });
        object
    }

    /// Commits a changed object at an existing key.
    pub fn update(&mut self, key: &StoreKey, mut object: Value) -> Arc<Value> {
        let rv = self.bump(&mut object);
        let object = Arc::new(object);
        let old = match self.objects.get_mut(key) {
            Some(held) => Some(std::mem::replace(held, object.clone())),
            None => self.objects.insert(key.clone(), object.clone()),
        };
        self.index_owners(key, old.as_deref(), Some(&object));
        self.emit(Change {
            rv,
            kind: EventType::Modified,
            key: key.clone(),
            object: object.clone(),
            old,
            wire: Wire::default(),
        });
        object
    }

    /// Removes the object at `key`; the DELETED event carries its last state at a new resourceVersion.
    pub fn remove(&mut self, key: &StoreKey) -> Option<Arc<Value>> {
        let old = self.objects.remove(key)?;
        if let Some(uid) = uid_of(&old) {
            self.uids.remove(&uid);
        }
        self.index_owners(key, Some(&old), None);
        let mut last = (*old).clone();
        let rv = self.bump(&mut last);
        let last = Arc::new(last);
        self.emit(Change {
            rv,
            kind: EventType::Deleted,
            key: key.clone(),
            object: last.clone(),
            old: Some(old),
            wire: Wire::default(),
        });
        Some(last)
    }

    /// Retained changes of `resource` after `rv`, or [`TooOld`] when some have been evicted.
    pub fn changes_since(&self, resource: ResourceId, rv: u64) -> Result<Vec<Arc<Change>>, TooOld> {
        let Some(history) = self.history.get(&resource) else { return Ok(Vec::new()) };
        if rv < history.evicted_through {
            return Err(TooOld { oldest: history.evicted_through });
        }
        Ok(history.changes.iter().filter(|c| c.rv > rv).cloned().collect())
    }

    /// The objects of `resource` (in `namespace` if given) as they stood at resourceVersion `rv`, in key
    /// order: today's objects with every retained later change undone. [`TooOld`] when changes after
    /// `rv` have left the history (etcd's compaction).
    pub fn objects_at(
        &self,
        resource: ResourceId,
        namespace: Option<&str>,
        rv: u64,
    ) -> Result<Vec<(StoreKey, Arc<Value>)>, TooOld> {
        let later = self.changes_since(resource, rv)?;
        let mut objects: BTreeMap<StoreKey, Arc<Value>> =
            self.list(resource, namespace).into_iter().map(|(k, o)| (k.clone(), o.clone())).collect();
        let in_scope = |key: &StoreKey| namespace.is_none_or(|ns| key.namespace == ns);
        for change in later.iter().rev().filter(|c| in_scope(&c.key)) {
            match (change.kind, &change.old) {
                (EventType::Added, _) => {
                    objects.remove(&change.key);
                }
                (_, Some(old)) => {
                    objects.insert(change.key.clone(), old.clone());
                }
                (_, None) => {}
            }
        }
        Ok(objects.into_iter().collect())
    }

    /// Registers a listener for future changes of `resource` (all when `None`), optionally one namespace.
    pub fn subscribe(
        &mut self,
        resource: Option<ResourceId>,
        namespace: Option<String>,
        tx: UnboundedSender<Arc<Change>>,
    ) {
        self.subscribers.push(Subscriber { resource, namespace, tx });
    }

    fn bump(&mut self, object: &mut Value) -> u64 {
        self.rv += 1;
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(self.rv.to_string()));
        }
        self.rv
    }

    /// The JSON of `object`, the object stored under `key`, encoded once for answers and watches alike
    /// (`None` when `object` is not what its last change stored).
    pub fn encoded(&self, key: &StoreKey, object: &Arc<Value>) -> Option<bytes::Bytes> {
        let change = self.latest.get(key).filter(|c| Arc::ptr_eq(&c.object, object))?;
        Some(change.wire.of(&change.object))
    }

    /// The JSON of `object`, the last state of an object just removed from `key`'s resource, from the
    /// removal's change (`None` when a later change of the resource came since).
    pub fn encoded_removal(&self, key: &StoreKey, object: &Arc<Value>) -> Option<bytes::Bytes> {
        let last = self.history.get(&key.resource)?.changes.back()?;
        let removal =
            Some(last).filter(|c| c.kind == EventType::Deleted && Arc::ptr_eq(&c.object, object))?;
        Some(removal.wire.of(&removal.object))
    }

    fn emit(&mut self, change: Change) {
        #[cfg(debug_assertions)]
        self.check(&change);
        let change = Arc::new(change);
        (self.on_commit)(&change);
        match (change.kind, self.latest.get_mut(&change.key)) {
            (EventType::Deleted, _) => drop(self.latest.remove(&change.key)),
            (_, Some(latest)) => *latest = change.clone(),
            (_, None) => drop(self.latest.insert(change.key.clone(), change.clone())),
        }
        let history = self.history.entry(change.key.resource).or_default();
        history.changes.push_back(change.clone());
        while history.changes.len() > self.history_capacity {
            let evicted = history.changes.pop_front().expect("non-empty");
            history.evicted_through = evicted.rv;
        }
        self.subscribers.retain(|s| !s.tx.is_closed());
        for s in &self.subscribers {
            let resource_matches = s.resource.is_none_or(|r| r == change.key.resource);
            let namespace_matches = s.namespace.as_deref().is_none_or(|ns| ns == change.key.namespace);
            if resource_matches && namespace_matches {
                let _ = s.tx.unbounded_send(change.clone());
            }
        }
    }
}

/// The object's `metadata.uid`.
pub fn uid_of(object: &Value) -> Option<String> {
    object.at("/metadata/uid").and_then(Value::as_str).map(str::to_string)
}

/// The store checks its own invariants on every change in debug builds (as a VOPR-style checker
/// would): resourceVersions only grow, each resource's history is in resourceVersion order, and, every
/// [`FULL_CHECK_EVERY`] changes, the uid and owner indexes equal a scan of the objects.
#[cfg(debug_assertions)]
impl Store {
    fn check(&self, change: &Change) {
        assert_eq!(change.rv, self.rv, "a change carries the resourceVersion just taken");
        if let Some(last) = self.history.get(&change.key.resource).and_then(|h| h.changes.back()) {
            assert!(last.rv < change.rv, "history in resourceVersion order: {} then {}", last.rv, change.rv);
        }
        if change.rv.is_multiple_of(FULL_CHECK_EVERY) {
            self.check_indexes();
        }
    }

    /// The uid and owner indexes are what a scan of the objects gives.
    fn check_indexes(&self) {
        let uids: BTreeMap<String, StoreKey> = self
            .objects
            .iter()
            .filter_map(|(key, object)| uid_of(object).map(|uid| (uid, key.clone())))
            .collect();
        assert_eq!(uids, self.uids, "the uid index matches a scan");
        let mut dependents: BTreeMap<String, BTreeSet<StoreKey>> = BTreeMap::new();
        for (key, object) in &self.objects {
            for uid in owner_uids(object) {
                dependents.entry(uid.to_string()).or_default().insert(key.clone());
            }
        }
        assert_eq!(dependents, self.dependents, "the owner index matches a scan");
    }
}

/// How often (in resourceVersions) a debug build scans the store to check its indexes.
#[cfg(debug_assertions)]
const FULL_CHECK_EVERY: u64 = 32;

/// The uids named by the object's ownerReferences.
pub fn owner_uids(object: &Value) -> impl Iterator<Item = &str> {
    object
        .get("metadata")
        .and_then(|meta| meta.get("ownerReferences"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("uid").and_then(Value::as_str))
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use serde_json::json;

    use super::*;

    fn key(resource: usize, ns: &str, name: &str) -> StoreKey {
        StoreKey { resource, namespace: ns.into(), name: name.into() }
    }

    fn obj(name: &str, uid: &str) -> Value {
        json!({"metadata": {"name": name, "uid": uid}})
    }

    #[test]
    fn every_commit_bumps_the_global_resource_version() {
        let mut s = Store::new(10, Box::new(|_| {}));
        let a = s.create(key(0, "ns", "a"), obj("a", "u1"));
        let b = s.create(key(1, "ns", "b"), obj("b", "u2"));
        assert_eq!(a["metadata"]["resourceVersion"], "1");
        assert_eq!(b["metadata"]["resourceVersion"], "2");
        let a2 = s.update(&key(0, "ns", "a"), obj("a", "u1"));
        assert_eq!(a2["metadata"]["resourceVersion"], "3");
        let gone = s.remove(&key(0, "ns", "a")).unwrap();
        assert_eq!(gone["metadata"]["resourceVersion"], "4");
        assert!(s.key_of_uid("u1").is_none());
        assert_eq!(s.current_rv(), 4);
    }

    #[test]
    fn lists_are_ordered_by_namespace_then_name_and_scoped() {
        let mut s = Store::new(10, Box::new(|_| {}));
        for (ns, name) in [("b", "z"), ("a", "y"), ("a", "x"), ("c", "w")] {
            s.create(key(0, ns, name), obj(name, &format!("{ns}{name}")));
        }
        s.create(key(1, "a", "other"), obj("other", "o"));
        let names: Vec<String> = s.list(0, None).iter().map(|(k, _)| k.display()).collect();
        assert_eq!(names, ["a/x", "a/y", "b/z", "c/w"]);
        assert_eq!(s.list(0, Some("a")).len(), 2);
    }

    #[test]
    fn history_is_bounded_per_resource_and_reports_too_old() {
        let mut s = Store::new(2, Box::new(|_| {}));
        for i in 0..4 {
            s.create(key(0, "ns", &format!("p{i}")), obj("p", &format!("u{i}")));
        }
        assert_eq!(s.changes_since(0, 0).unwrap_err(), TooOld { oldest: 2 });
        let tail = s.changes_since(0, 2).unwrap();
        assert_eq!(tail.iter().map(|c| c.rv).collect::<Vec<_>>(), [3, 4]);
        assert!(s.changes_since(1, 0).unwrap().is_empty());
    }

    #[test]
    fn the_objects_at_an_old_version_undo_every_later_change() {
        let mut s = Store::new(10, Box::new(|_| {}));
        s.create(key(0, "ns", "a"), obj("a", "u1"));
        s.create(key(0, "ns", "b"), obj("b", "u2"));
        let at_2: Vec<String> = s.list(0, None).iter().map(|(k, _)| k.display()).collect();
        s.update(&key(0, "ns", "a"), json!({"metadata": {"name": "a", "uid": "u1", "labels": {"x": "1"}}}));
        s.remove(&key(0, "ns", "b"));
        s.create(key(0, "ns", "c"), obj("c", "u3"));
        let then = s.objects_at(0, None, 2).unwrap();
        assert_eq!(then.iter().map(|(k, _)| k.display()).collect::<Vec<_>>(), at_2);
        assert_eq!(then[0].1["metadata"]["resourceVersion"], "1");
        assert!(then[0].1["metadata"].get("labels").is_none());
        assert_eq!(s.objects_at(0, None, 5).unwrap().len(), 2);
        let mut small = Store::new(1, Box::new(|_| {}));
        small.create(key(0, "ns", "a"), obj("a", "u1"));
        small.create(key(0, "ns", "b"), obj("b", "u2"));
        assert_eq!(small.objects_at(0, None, 0).unwrap_err(), TooOld { oldest: 1 });
    }

    #[tokio::test]
    async fn subscribers_get_changes_of_their_resource_and_namespace_only() {
        let mut s = Store::new(10, Box::new(|_| {}));
        let (tx, mut rx) = futures::channel::mpsc::unbounded();
        s.subscribe(Some(0), Some("a".into()), tx);
        s.create(key(0, "a", "x"), obj("x", "1"));
        s.create(key(0, "b", "y"), obj("y", "2"));
        s.create(key(1, "a", "z"), obj("z", "3"));
        let first = rx.next().await.unwrap();
        assert_eq!((first.key.display(), first.kind), ("a/x".to_string(), EventType::Added));
        drop(s);
        assert!(rx.next().await.is_none());
    }
}
