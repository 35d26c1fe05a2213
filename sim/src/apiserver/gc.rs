//! The garbage collector and namespace finalizer, run as one task beside the server.
//!
//! It follows every change and, after a seeded short delay, does what kube-controller-manager's
//! garbage collector and namespace controller do: deletes dependents whose owners are all gone
//! (background propagation), strips dangling ownerReferences when some owners remain, carries out
//! `foregroundDeletion` and `orphan` finalizers, and empties then removes terminating namespaces. Its
//! writes go through the same engine as API requests, and into the trace as actor `apiserver gc`.

use crate::json_at::At;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::clock::sleep_until_some;

use super::admission::{finalizers, meta_mut, meta_str};
use super::commit::commit;
use super::engine;
use super::events::Collected;
use super::lifecycle::{DeleteOptions, FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
use super::store::{Change, EventType, StoreKey, owner_uids, uid_of};
use super::{Shared, State};

/// One piece of collector work.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Work {
    /// Check a dependent's owners; delete it or strip dangling references.
    Dependent(StoreKey),
    /// Carry out foreground deletion of this owner.
    Foreground(StoreKey),
    /// Orphan this owner's dependents.
    Orphan(StoreKey),
    /// Empty and finalize this terminating namespace.
    Namespace(String),
}

struct Collector {
    shared: Arc<Shared>,
    changes: UnboundedReceiver<Arc<Change>>,
    queue: BTreeMap<(Instant, u64), Work>,
    /// The work in `queue`, to find a duplicate without a scan.
    queued: BTreeSet<Work>,
    seq: u64,
    rng: ChaCha8Rng,
}

/// Starts the collector on the current runtime.
pub fn spawn(shared: Arc<Shared>) {
    let (tx, changes) = futures::channel::mpsc::unbounded();
    shared.lock().store.subscribe(None, None, tx);
    let rng = shared.seed.named_rng("apiserver/gc");
    let collector =
        Collector { shared, changes, queue: BTreeMap::new(), queued: BTreeSet::new(), seq: 0, rng };
    tokio::spawn(collector.run());
}

impl Collector {
    async fn run(mut self) {
        loop {
            let next = self.queue.keys().next().map(|(due, _)| *due);
            tokio::select! {
                biased;
                _ = sleep_until_some(next), if next.is_some() => {
                    let (_, work) = self.queue.pop_first().expect("due work");
                    self.queued.remove(&work);
                    self.perform(work);
                }
                change = self.changes.next() => match change {
                    Some(change) => self.observe(&change),
                    None => break,
                },
            }
        }
    }

    fn enqueue(&mut self, work: Work) {
        if !self.queued.insert(work.clone()) {
            return;
        }
        let range = self.shared.config.gc_delay;
        let ms = if range.max_ms == 0 { 0 } else { self.rng.random_range(range.min_ms..=range.max_ms) };
        self.seq += 1;
        let due = Instant::now() + Duration::from_millis(ms); // allow-nondeterminism: tokio clock, paused in the sim
        self.queue.insert((due, self.seq), work);
    }

    /// Turns a change into the work it calls for.
    fn observe(&mut self, change: &Change) {
        let object = &change.object;
        let ns_type = self.shared.registry.namespace_id();
        if change.kind == EventType::Deleted {
            let dependents =
                uid_of(object).map(|uid| self.shared.lock().store.dependents_of(&uid)).unwrap_or_default();
            dependents.into_iter().for_each(|k| self.enqueue(Work::Dependent(k)));
            for owner in self.deleting_owners_of(object) {
                self.enqueue(Work::Foreground(owner));
            }
            if !change.key.namespace.is_empty() && self.namespace_terminating(&change.key.namespace) {
                self.enqueue(Work::Namespace(change.key.namespace.clone()));
            }
            return;
        }
        if self.has_dangling_owner(object) {
            self.enqueue(Work::Dependent(change.key.clone()));
        }
        if meta_str(object, "deletionTimestamp").is_none() {
            return;
        }
        let fins = finalizers(object);
        if fins.iter().any(|f| f == FOREGROUND_FINALIZER) {
            self.enqueue(Work::Foreground(change.key.clone()));
        }
        if fins.iter().any(|f| f == ORPHAN_FINALIZER) {
            self.enqueue(Work::Orphan(change.key.clone()));
        }
        if change.key.resource == ns_type {
            self.enqueue(Work::Namespace(change.key.name.clone()));
        }
    }

    fn has_dangling_owner(&self, object: &Value) -> bool {
        let st = self.shared.lock();
        owner_uids(object).any(|uid| st.store.key_of_uid(uid).is_none())
    }

    fn deleting_owners_of(&self, object: &Value) -> Vec<StoreKey> {
        let st = self.shared.lock();
        owner_uids(object)
            .filter_map(|uid| st.store.key_of_uid(uid).cloned())
            .filter(|k| {
                st.store.get(k).is_some_and(|o| finalizers(o).iter().any(|f| f == FOREGROUND_FINALIZER))
            })
            .collect()
    }

    fn namespace_terminating(&self, namespace: &str) -> bool {
        let ns_key = StoreKey {
            resource: self.shared.registry.namespace_id(),
            namespace: String::new(),
            name: namespace.into(),
        };
        self.shared.lock().store.get(&ns_key).is_some_and(|ns| meta_str(ns, "deletionTimestamp").is_some())
    }

    fn perform(&mut self, work: Work) {
        let shared = self.shared.clone();
        let mut st = shared.lock();
        match work {
            Work::Dependent(key) => collect_dependent(&shared, &mut st, &key),
            Work::Foreground(key) => delete_foreground(&shared, &mut st, &key),
            Work::Orphan(key) => orphan_dependents(&shared, &mut st, &key),
            Work::Namespace(name) => finalize_namespace(&shared, &mut st, &name),
        }
    }
}

fn trace(shared: &Shared, action: &'static str, key: &StoreKey) {
    let resource = shared.registry.get(key.resource).plural.clone();
    shared.record.emit(Collected { action, resource, key: key.display() });
}

/// Deletes a dependent whose owners are all gone, or strips the references to the gone ones.
fn collect_dependent(shared: &Shared, st: &mut State, key: &StoreKey) {
    let Some(object) = st.store.get(key).cloned() else { return };
    let owners: Vec<String> = owner_uids(&object).map(str::to_string).collect();
    let live: Vec<&String> = owners.iter().filter(|u| st.store.key_of_uid(u).is_some()).collect();
    if owners.is_empty() || live.len() == owners.len() {
        return;
    }
    if live.is_empty() {
        if meta_str(&object, "deletionTimestamp").is_none() {
            trace(shared, "delete", key);
            let _ = engine::delete(shared, st, key, &DeleteOptions::default());
        }
        return;
    }
    let live: Vec<String> = live.into_iter().cloned().collect();
    trace(shared, "strip-dangling-owners", key);
    let stripped = retain_owner_refs(&object, |uid| live.iter().any(|l| l == uid));
    commit(st, key, &object, stripped);
}

fn retain_owner_refs(object: &Value, keep: impl Fn(&str) -> bool) -> Value {
    let mut next = object.clone();
    let refs: Vec<Value> = object
        .at("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| r.get("uid").and_then(Value::as_str).is_some_and(&keep))
        .cloned()
        .collect();
    let meta = meta_mut(&mut next);
    if refs.is_empty() {
        meta.remove("ownerReferences");
    } else {
        meta.insert("ownerReferences".into(), json!(refs));
    }
    next
}

fn without_finalizer(object: &Value, finalizer: &str) -> Value {
    let mut next = object.clone();
    let remaining: Vec<String> = finalizers(object).into_iter().filter(|f| f != finalizer).collect();
    let meta = meta_mut(&mut next);
    if remaining.is_empty() {
        meta.remove("finalizers");
    } else {
        meta.insert("finalizers".into(), json!(remaining));
    }
    next
}

/// Deletes the owner's dependents; drops `foregroundDeletion` once none that block remain.
fn delete_foreground(shared: &Shared, st: &mut State, owner_key: &StoreKey) {
    let Some(owner) = st.store.get(owner_key).cloned() else { return };
    if !finalizers(&owner).iter().any(|f| f == FOREGROUND_FINALIZER) {
        return;
    }
    let owner_uid = uid_of(&owner).unwrap_or_default();
    let mut blocking = 0;
    for dep in st.store.dependents_of(&owner_uid) {
        let Some(object) = st.store.get(&dep).cloned() else { continue };
        if blocks(&object, &owner_uid) {
            blocking += 1;
        }
        if meta_str(&object, "deletionTimestamp").is_none() {
            trace(shared, "delete", &dep);
            let _ = engine::delete(shared, st, &dep, &DeleteOptions::default());
        }
    }
    if blocking == 0 {
        trace(shared, "finalize-foreground", owner_key);
        commit(st, owner_key, &owner, without_finalizer(&owner, FOREGROUND_FINALIZER));
    }
}

fn blocks(dependent: &Value, owner_uid: &str) -> bool {
    dependent.at("/metadata/ownerReferences").and_then(Value::as_array).into_iter().flatten().any(|r| {
        r.get("uid").and_then(Value::as_str) == Some(owner_uid)
            && r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true)
    })
}

/// Strips the owner's references from its dependents, then drops `orphan`.
fn orphan_dependents(shared: &Shared, st: &mut State, owner_key: &StoreKey) {
    let Some(owner) = st.store.get(owner_key).cloned() else { return };
    if !finalizers(&owner).iter().any(|f| f == ORPHAN_FINALIZER) {
        return;
    }
    let owner_uid = uid_of(&owner).unwrap_or_default();
    for dep in st.store.dependents_of(&owner_uid) {
        let Some(object) = st.store.get(&dep).cloned() else { continue };
        trace(shared, "orphan", &dep);
        commit(st, &dep, &object, retain_owner_refs(&object, |uid| uid != owner_uid));
    }
    let owner = st.store.get(owner_key).cloned().expect("the owner is still held by its finalizer");
    trace(shared, "finalize-orphan", owner_key);
    commit(st, owner_key, &owner, without_finalizer(&owner, ORPHAN_FINALIZER));
}

/// Deletes everything in a terminating namespace; removes the namespace once it is empty.
fn finalize_namespace(shared: &Shared, st: &mut State, name: &str) {
    let ns_key =
        StoreKey { resource: shared.registry.namespace_id(), namespace: String::new(), name: name.into() };
    let Some(ns) = st.store.get(&ns_key).cloned() else { return };
    if meta_str(&ns, "deletionTimestamp").is_none() {
        return;
    }
    let contents = st.store.keys_in_namespace(name);
    for key in &contents {
        let deleting = st.store.get(key).is_some_and(|o| meta_str(o, "deletionTimestamp").is_some());
        if !deleting {
            trace(shared, "delete", key);
            let _ = engine::delete(shared, st, key, &DeleteOptions::default());
        }
    }
    if !st.store.keys_in_namespace(name).is_empty() {
        return;
    }
    let mut finalized = ns.as_ref().clone();
    finalized["spec"] = json!({});
    finalized["status"] = json!({"phase": "Terminating"});
    trace(shared, "finalize-namespace", &ns_key);
    commit(st, &ns_key, &ns, finalized);
}
