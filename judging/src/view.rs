//! Reading stored objects (JSON) in oracles and probes.

use arc_sim::json_at::At;
use serde_json::Value;

/// Whether an API actor is the controller: the one process (`controller`), or one of its replicas
/// (`controller#<i>`, in worlds with leader election).
pub fn is_controller(actor: &str) -> bool {
    actor == "controller" || actor.starts_with("controller#")
}

/// The actor of a Lease holder identity (`controller#<i>.<incarnation>` → `controller#<i>`).
pub fn holder_actor(holder: &str) -> &str {
    holder.split('.').next().unwrap_or(holder)
}

/// The string at JSON pointer `ptr`, if any and non-empty.
pub fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.at(ptr).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `namespace/name` of an object.
pub fn key_of(v: &Value) -> String {
    let (namespace, name) = key_parts(v);
    format!("{namespace}/{name}")
}

/// The namespace and name of an object (empty when unset), borrowed: [`key_of`] without building it.
pub fn key_parts(v: &Value) -> (&str, &str) {
    let meta = v.get("metadata");
    let text = |field: &str| meta.and_then(|m| m.get(field)).and_then(Value::as_str).unwrap_or("");
    (text("namespace"), text("name"))
}

/// The object's uid.
pub fn uid_of(v: &Value) -> &str {
    str_at(v, "/metadata/uid").unwrap_or("")
}

/// An EphemeralRunner's phase as ARC reads it (empty = Pending).
pub fn runner_phase(v: &Value) -> &str {
    str_at(v, "/status/phase").unwrap_or("Pending")
}

/// Whether a phase is terminal (Succeeded, Failed, Outdated).
pub fn is_terminal(phase: &str) -> bool {
    matches!(phase, "Succeeded" | "Failed" | "Outdated")
}

/// An EphemeralRunner's registered runner id (0 when unregistered).
pub fn runner_id(v: &Value) -> i64 {
    v.at("/status/runnerId").and_then(Value::as_i64).unwrap_or(0)
}

/// The uid of the object's controller ownerReference.
pub fn controller_uid(v: &Value) -> Option<&str> {
    v.at("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))?
        .get("uid")?
        .as_str()
}

/// Whether the object is being deleted.
pub fn is_deleting(v: &Value) -> bool {
    str_at(v, "/metadata/deletionTimestamp").is_some()
}
