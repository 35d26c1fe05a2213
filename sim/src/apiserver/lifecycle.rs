//! Deletion lifecycle: what a DELETE does to an object.
//!
//! Preconditions (uid, resourceVersion); graceful deletion of pods (deletionTimestamp = now + grace,
//! removal later by the kubelet's grace-0 delete); finalizers (deletionTimestamp set once, the object
//! stays until the last finalizer goes); propagation policies (`orphan` and `foregroundDeletion`
//! finalizers for the garbage collector). Decisions are pure: [`plan_delete`] says what to do, the
//! engine does it.

use crate::json_at::At;
use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;
use serde_json::{Value, json};

use super::admission::{finalizers, meta_mut, meta_str, timestamp_seconds};
use super::registry::ResourceType;
use super::status::{self, ApiError};

/// Finalizer the garbage collector honours for `propagationPolicy: Orphan`.
pub const ORPHAN_FINALIZER: &str = "orphan";
/// Finalizer the garbage collector honours for `propagationPolicy: Foreground`.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// How dependents are treated when their owner is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Propagation {
    /// Delete dependents after the owner is gone (the default).
    #[default]
    Background,
    /// Delete dependents first; the owner waits under `foregroundDeletion`.
    Foreground,
    /// Leave dependents, stripping their ownerReferences.
    Orphan,
}

/// `DeleteOptions`, from the body and query parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteOptions {
    /// Grace period override.
    #[serde(default)]
    pub grace_period_seconds: Option<i64>,
    /// Propagation policy.
    #[serde(default)]
    pub propagation_policy: Option<Propagation>,
    /// The deprecated boolean form of Orphan.
    #[serde(default)]
    pub orphan_dependents: Option<bool>,
    /// Preconditions.
    #[serde(default)]
    pub preconditions: Option<Preconditions>,
}

/// Delete preconditions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Preconditions {
    /// Required uid.
    #[serde(default)]
    pub uid: Option<String>,
    /// Required resourceVersion.
    #[serde(default)]
    pub resource_version: Option<String>,
}

impl DeleteOptions {
    /// The effective propagation policy.
    pub fn propagation(&self) -> Propagation {
        match (self.propagation_policy, self.orphan_dependents) {
            (Some(p), _) => p,
            (None, Some(true)) => Propagation::Orphan,
            _ => Propagation::Background,
        }
    }
}

/// What a delete does.
#[derive(Debug, Clone, PartialEq)]
pub enum DeletePlan {
    /// Remove the object now (DELETED event).
    Remove,
    /// Store this updated object (deletionTimestamp set or shortened; MODIFIED event).
    Mark(Value),
    /// Nothing changes: deletion is already under way.
    Unchanged,
}

/// Decides what deleting `object` with `opts` at `now` does.
pub fn plan_delete(
    rt: &ResourceType,
    object: &Value,
    opts: &DeleteOptions,
    now: Timestamp,
) -> Result<DeletePlan, ApiError> {
    check_preconditions(rt, object, opts)?;
    let grace = grace_period(rt, object, opts);
    if meta_str(object, "deletionTimestamp").is_some() {
        return Ok(plan_while_deleting(object, grace, now));
    }
    let mut wanted = finalizers(object);
    match opts.propagation() {
        Propagation::Orphan => push_unique(&mut wanted, ORPHAN_FINALIZER),
        Propagation::Foreground => push_unique(&mut wanted, FOREGROUND_FINALIZER),
        Propagation::Background => {}
    }
    if wanted.is_empty() && grace == 0 && namespace_finalizers(object).is_empty() {
        return Ok(DeletePlan::Remove);
    }
    let mut marked = object.clone();
    if rt.is_namespace() {
        marked["status"] = json!({"phase": "Terminating"});
    }
    let generation = object.at("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
    let meta = meta_mut(&mut marked);
    meta.insert("deletionTimestamp".into(), json!(timestamp_seconds(now + SignedDuration::from_secs(grace))));
    meta.insert("deletionGracePeriodSeconds".into(), json!(grace));
    if !wanted.is_empty() {
        meta.insert("finalizers".into(), json!(wanted));
    }
    if generation > 0 {
        meta.insert("generation".into(), json!(generation + 1));
    }
    Ok(DeletePlan::Mark(marked))
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|f| f == item) {
        list.push(item.to_string());
    }
}

fn check_preconditions(rt: &ResourceType, object: &Value, opts: &DeleteOptions) -> Result<(), ApiError> {
    let Some(pre) = &opts.preconditions else { return Ok(()) };
    let name = meta_str(object, "name").unwrap_or_default();
    let actual_uid = meta_str(object, "uid").unwrap_or_default();
    if let Some(uid) = pre.uid.as_deref().filter(|u| *u != actual_uid) {
        return Err(status::precondition_failed(rt, name, "UID", uid, actual_uid));
    }
    let actual_rv = meta_str(object, "resourceVersion").unwrap_or_default();
    if let Some(rv) = pre.resource_version.as_deref().filter(|r| *r != actual_rv) {
        return Err(status::precondition_failed(rt, name, "ResourceVersion", rv, actual_rv));
    }
    Ok(())
}

/// Pods are deleted gracefully unless unscheduled or already terminal; nothing else is.
fn grace_period(rt: &ResourceType, object: &Value, opts: &DeleteOptions) -> i64 {
    if !rt.is_pod() {
        return 0;
    }
    let unscheduled = object.at("/spec/nodeName").and_then(Value::as_str).is_none_or(str::is_empty);
    let phase = object.at("/status/phase").and_then(Value::as_str).unwrap_or("");
    if unscheduled || phase == "Succeeded" || phase == "Failed" {
        return 0;
    }
    let default = object.at("/spec/terminationGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(30);
    let grace = opts.grace_period_seconds.unwrap_or(default);
    if grace < 0 { 1 } else { grace }
}

/// A repeated delete may only shorten a pod's pending grace period; otherwise it changes nothing.
fn plan_while_deleting(object: &Value, grace: i64, now: Timestamp) -> DeletePlan {
    let pending = object.at("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0);
    if pending == 0 || grace >= pending {
        return DeletePlan::Unchanged;
    }
    if grace == 0 && finalizers(object).is_empty() {
        return DeletePlan::Remove;
    }
    let mut marked = object.clone();
    let meta = meta_mut(&mut marked);
    let deadline = now + SignedDuration::from_secs(grace);
    meta.insert("deletionTimestamp".into(), json!(timestamp_seconds(deadline)));
    meta.insert("deletionGracePeriodSeconds".into(), json!(grace));
    DeletePlan::Mark(marked)
}

/// A Namespace's `spec.finalizers` (the namespace controller's, e.g. `kubernetes`); empty for other kinds.
pub fn namespace_finalizers(object: &Value) -> Vec<String> {
    let is_namespace = object.get("kind").and_then(Value::as_str) == Some("Namespace")
        && object.get("apiVersion").and_then(Value::as_str) == Some("v1");
    if !is_namespace {
        return Vec::new();
    }
    object
        .at("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Whether an updated object has finished deleting: deletion begun, no finalizers, no grace pending.
pub fn is_ready_for_removal(object: &Value) -> bool {
    meta_str(object, "deletionTimestamp").is_some()
        && finalizers(object).is_empty()
        && namespace_finalizers(object).is_empty()
        && object.at("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64).unwrap_or(0) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(plural: &str) -> ResourceType {
        crate::apiserver::fixtures::resource(plural)
    }

    fn now() -> Timestamp {
        Timestamp::from_second(1000).unwrap()
    }

    #[test]
    fn objects_without_finalizers_are_removed_at_once() {
        let obj = json!({"metadata": {"name": "x", "uid": "u"}});
        assert_eq!(
            plan_delete(&rt("secrets"), &obj, &DeleteOptions::default(), now()),
            Ok(DeletePlan::Remove)
        );
    }

    #[test]
    fn finalizers_hold_the_object_with_a_deletion_timestamp_set_once() {
        let obj = json!({"metadata": {"name": "x", "generation": 1, "finalizers": ["f"]}});
        let DeletePlan::Mark(marked) =
            plan_delete(&rt("ephemeralrunners"), &obj, &DeleteOptions::default(), now()).unwrap()
        else {
            panic!("expected a mark")
        };
        assert_eq!(marked["metadata"]["deletionTimestamp"], "1970-01-01T00:16:40Z");
        assert_eq!(marked["metadata"]["generation"], 2);
        let again = plan_delete(&rt("ephemeralrunners"), &marked, &DeleteOptions::default(), now());
        assert_eq!(again, Ok(DeletePlan::Unchanged));
        assert!(!is_ready_for_removal(&marked));
    }

    #[test]
    fn scheduled_pods_are_deleted_gracefully_and_grace_can_only_shorten() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n", "terminationGracePeriodSeconds": 30}, "status": {"phase": "Running"}});
        let DeletePlan::Mark(marked) =
            plan_delete(&rt("pods"), &pod, &DeleteOptions::default(), now()).unwrap()
        else {
            panic!("expected a mark")
        };
        assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 30);
        let longer = DeleteOptions { grace_period_seconds: Some(60), ..Default::default() };
        assert_eq!(plan_delete(&rt("pods"), &marked, &longer, now()), Ok(DeletePlan::Unchanged));
        let zero = DeleteOptions { grace_period_seconds: Some(0), ..Default::default() };
        assert_eq!(plan_delete(&rt("pods"), &marked, &zero, now()), Ok(DeletePlan::Remove));
    }

    #[test]
    fn unscheduled_and_terminal_pods_go_at_once() {
        let unscheduled = json!({"metadata": {"name": "p"}, "spec": {}});
        assert_eq!(
            plan_delete(&rt("pods"), &unscheduled, &DeleteOptions::default(), now()),
            Ok(DeletePlan::Remove)
        );
        let done =
            json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n"}, "status": {"phase": "Failed"}});
        assert_eq!(plan_delete(&rt("pods"), &done, &DeleteOptions::default(), now()), Ok(DeletePlan::Remove));
    }

    #[test]
    fn namespaces_terminate_until_their_spec_finalizers_are_done() {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}, "spec": {"finalizers": ["kubernetes"]}});
        let DeletePlan::Mark(marked) =
            plan_delete(&rt("namespaces"), &ns, &DeleteOptions::default(), now()).unwrap()
        else {
            panic!("expected a mark")
        };
        assert_eq!(marked["status"]["phase"], "Terminating");
        assert!(!is_ready_for_removal(&marked));
        let mut emptied = marked.clone();
        emptied["spec"] = json!({});
        assert!(is_ready_for_removal(&emptied));
    }

    #[test]
    fn preconditions_guard_the_delete() {
        let obj = json!({"metadata": {"name": "x", "uid": "u1", "resourceVersion": "7"}});
        let wrong_uid = DeleteOptions {
            preconditions: Some(Preconditions { uid: Some("u2".into()), resource_version: None }),
            ..Default::default()
        };
        let err = plan_delete(&rt("secrets"), &obj, &wrong_uid, now()).unwrap_err();
        assert_eq!(err.message(), "Precondition failed: UID in precondition: u2, UID in object meta: u1");
        let stale = DeleteOptions {
            preconditions: Some(Preconditions { uid: None, resource_version: Some("6".into()) }),
            ..Default::default()
        };
        assert_eq!(plan_delete(&rt("secrets"), &obj, &stale, now()).unwrap_err().code, 409);
    }

    #[test]
    fn orphan_and_foreground_add_their_gc_finalizers() {
        let obj = json!({"metadata": {"name": "x"}});
        for (policy, finalizer) in
            [(Propagation::Orphan, ORPHAN_FINALIZER), (Propagation::Foreground, FOREGROUND_FINALIZER)]
        {
            let opts = DeleteOptions { propagation_policy: Some(policy), ..Default::default() };
            let DeletePlan::Mark(marked) = plan_delete(&rt("secrets"), &obj, &opts, now()).unwrap() else {
                panic!("expected a mark")
            };
            assert_eq!(finalizers(&marked), vec![finalizer.to_string()]);
        }
    }
}
