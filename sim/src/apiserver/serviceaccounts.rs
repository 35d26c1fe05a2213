//! kube-controller-manager's serviceaccounts controller: every namespace that is not terminating has a
//! ServiceAccount `default`. It is created (again) a seeded delay after the namespace appears or the
//! account is deleted (`ApiServerConfig::controller_delay`, default 5–50 ms); namespaces that exist
//! when the server starts get theirs at once, as in a cluster that has been running. Writes go through
//! the engine, into the trace as actor `serviceaccount-controller`.
//!
//! Simplification: the controller writes straight to the store, not over HTTP (no audit entry, no
//! faults); the real one is an API client with retries.

use std::sync::Arc;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use serde_json::json;

use crate::clock::sleep_until_some;

use super::admission::meta_str;
use super::delay_queue::DelayQueue;
use super::engine;
use super::events::ControllerWrote;
use super::serviceaccount_admission::{DEFAULT_ACCOUNT, service_account_id};
use super::store::{Change, EventType, StoreKey};
use super::{Shared, State};

/// The controller's name as the trace shows its actor.
pub const CONTROLLER: &str = "serviceaccount-controller";
/// Creates `namespace`'s `default` ServiceAccount if the namespace is active and has none.
pub fn ensure_default(sh: &Shared, st: &mut State, namespace: &str) {
    let ns_key =
        StoreKey { resource: sh.registry.namespace_id(), namespace: String::new(), name: namespace.into() };
    let active = st.store.get(&ns_key).is_some_and(|ns| meta_str(ns, "deletionTimestamp").is_none());
    let resource = service_account_id(sh);
    let key = StoreKey { resource, namespace: namespace.into(), name: DEFAULT_ACCOUNT.into() };
    if !active || st.store.get(&key).is_some() {
        return;
    }
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT_ACCOUNT}});
    if engine::create(sh, st, resource, Some(namespace), account).is_ok() {
        let key = key.display();
        sh.record.emit(ControllerWrote {
            controller: CONTROLLER,
            action: "create",
            resource: "serviceaccounts".into(),
            key,
        });
    }
}

struct Controller {
    shared: Arc<Shared>,
    changes: UnboundedReceiver<Arc<Change>>,
    queue: DelayQueue<String>,
}

/// Starts the controller on the current runtime; it follows namespaces and service accounts.
pub fn spawn(shared: Arc<Shared>) {
    let (tx, changes) = futures::channel::mpsc::unbounded();
    {
        let mut st = shared.lock();
        st.store.subscribe(Some(shared.registry.namespace_id()), None, tx.clone());
        st.store.subscribe(Some(service_account_id(&shared)), None, tx);
    }
    let rng = shared.seed.named_rng("apiserver/serviceaccounts");
    let queue = DelayQueue::new(rng, shared.config.controller_delay);
    tokio::spawn(Controller { shared, changes, queue }.run());
}

impl Controller {
    async fn run(mut self) {
        loop {
            let next = self.queue.next_due();
            tokio::select! {
                biased;
                _ = sleep_until_some(next), if next.is_some() => {
                    if let Some(namespace) = self.queue.pop() {
                        let mut st = self.shared.lock();
                        ensure_default(&self.shared, &mut st, &namespace);
                    }
                }
                change = self.changes.next() => match change {
                    Some(change) => self.observe(&change),
                    None => break,
                },
            }
        }
    }

    /// A namespace that appeared or changed, or a deleted `default` account, calls for a sync.
    fn observe(&mut self, change: &Change) {
        let key = &change.key;
        if key.resource == self.shared.registry.namespace_id() {
            let live =
                change.kind != EventType::Deleted && meta_str(&change.object, "deletionTimestamp").is_none();
            if live {
                self.queue.enqueue(key.name.clone());
            }
        } else if change.kind == EventType::Deleted && key.name == DEFAULT_ACCOUNT {
            self.queue.enqueue(key.namespace.clone());
        }
    }
}
