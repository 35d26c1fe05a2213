//! The last step of every write: a new version of an object stored (or, once it has finished deleting,
//! removed), or nothing when it changes nothing. Below the engine, so the writers the engine calls
//! (quota admission charging `status.used`) and the in-server controllers share it.

use std::sync::Arc;

use serde_json::Value;

use super::State;
use super::lifecycle;
use super::store::StoreKey;

/// Stores `next` unless it changes nothing; removes the object instead once it has finished deleting.
/// A write that changes nothing returns the stored object: same resourceVersion, no event.
pub fn commit(st: &mut State, key: &StoreKey, old: &Arc<Value>, next: Value) -> Arc<Value> {
    if **old == next {
        return old.clone();
    }
    if lifecycle::is_ready_for_removal(&next) {
        return st.store.remove(key).expect("present under the lock");
    }
    st.store.update(key, next)
}
