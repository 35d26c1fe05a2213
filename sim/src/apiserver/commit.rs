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
    if unchanged(old, &next) {
        return old.clone();
    }
    if lifecycle::is_ready_for_removal(&next) {
        return st.store.remove(key).expect("present under the lock");
    }
    st.store.update(key, next)
}

/// Whether `next` equals `old`. The status, where most writes differ, is compared first, so a changed
/// object is told without walking its metadata and spec (a map compares its keys in order, status last).
fn unchanged(old: &Value, next: &Value) -> bool {
    let (Some(old), Some(next)) = (old.as_object(), next.as_object()) else { return old == next };
    old.len() == next.len()
        && old.get("status") == next.get("status")
        && old.iter().filter(|(k, _)| *k != "status").all(|(k, v)| next.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::unchanged;

    #[test]
    fn unchanged_is_equality() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"a": 1}, "status": {"phase": "Running"}});
        let cases = [
            (pod.clone(), true),
            (json!({"metadata": {"name": "p"}, "spec": {"a": 1}, "status": {"phase": "Failed"}}), false),
            (json!({"metadata": {"name": "p"}, "spec": {"a": 2}, "status": {"phase": "Running"}}), false),
            (json!({"metadata": {"name": "p"}, "spec": {"a": 1}}), false),
            (
                json!({"metadata": {"name": "p"}, "spec": {"a": 1}, "status": {"phase": "Running"}, "x": 1}),
                false,
            ),
            (json!({"metadata": {"name": "p"}, "other": {"a": 1}, "status": {"phase": "Running"}}), false),
            (json!("not an object"), false),
        ];
        for (next, same) in cases {
            assert_eq!(unchanged(&pod, &next), same, "{next}");
            assert_eq!(unchanged(&pod, &next), pod == next, "{next}");
            assert_eq!(unchanged(&next, &pod), same, "{next}, reversed");
        }
        let bare = json!({"metadata": {"name": "p"}});
        assert!(unchanged(&bare, &bare.clone()));
    }
}
