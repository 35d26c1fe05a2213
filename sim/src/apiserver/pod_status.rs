//! `ValidatePodStatusUpdate` (`pkg/apis/core/validation/validation.go`) for writes to `pods/status`:
//! a terminated container may not go back to waiting or running unless the pod's restart policy lets
//! it (`Always`; `OnFailure` after a non-zero exit; restartable init containers always), and custom
//! condition types must be qualified names (upstream reports them under `metadata.conditions`).
//!
//! As upstream, a pod's phase may move out of Succeeded or Failed through the API: the kubelet refuses
//! that itself, the API server does not.

use crate::json_at::At;
use serde_json::Value;

use super::labels;
use super::status::Cause;

/// Conditions the system owns; any other type must be a qualified name.
const SYSTEM_CONDITIONS: &[&str] = &["PodScheduled", "Ready", "Initialized"];

/// The causes of a 422 for a status update from `old` to `new` (empty when it is allowed).
pub fn validate_update(old: &Value, new: &Value) -> Vec<Cause> {
    let mut causes = conditions(new);
    let policy = old.at("/spec/restartPolicy").and_then(Value::as_str).unwrap_or("Always");
    fn statuses<'a>(pod: &'a Value, list: &str) -> &'a [Value] {
        pod.get("status").and_then(|s| s.get(list)).and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }
    let restartable = |name: &str| restartable_init_container(old, name);
    for (list, init) in [("containerStatuses", false), ("initContainerStatuses", true)] {
        let allowed = |status: &Value| {
            let name = status.get("name").and_then(Value::as_str).unwrap_or("");
            may_leave_terminated(policy, exit_code(status)) || (init && restartable(name))
        };
        causes.extend(transitions(statuses(new, list), statuses(old, list), list, allowed));
    }
    let never = |_: &Value| false;
    let ephemeral = "ephemeralContainerStatuses";
    causes.extend(transitions(statuses(new, ephemeral), statuses(old, ephemeral), ephemeral, never));
    causes
}

/// `validatePodConditions`: custom condition types are qualified names.
fn conditions(pod: &Value) -> Vec<Cause> {
    let list = pod.at("/status/conditions").and_then(Value::as_array);
    let mut causes = Vec::new();
    for (i, condition) in list.into_iter().flatten().enumerate() {
        let kind = condition.get("type").and_then(Value::as_str).unwrap_or("");
        if SYSTEM_CONDITIONS.contains(&kind) {
            continue;
        }
        for message in labels::is_qualified_name(kind) {
            let bad = super::gofmt::bad_value(&Value::String(kind.into()));
            causes.push(Cause {
                reason: "FieldValueInvalid",
                field: format!("metadata.conditions[{i}].Type"),
                message: format!("Invalid value: {bad}: {message}"),
            });
        }
    }
    causes
}

/// The exit code of a terminated container status, or `None` when it is not terminated.
fn exit_code(status: &Value) -> Option<i64> {
    let terminated = status.at("/state/terminated").filter(|t| t.is_object())?;
    Some(terminated.get("exitCode").and_then(Value::as_i64).unwrap_or(0))
}

/// Whether a container that exited with `code` may run again under the pod's restart policy.
fn may_leave_terminated(policy: &str, code: Option<i64>) -> bool {
    policy == "Always" || (policy == "OnFailure" && code.is_some_and(|c| c != 0))
}

/// Whether the pod's init container `name` has `restartPolicy: Always` (a sidecar).
fn restartable_init_container(pod: &Value, name: &str) -> bool {
    let init = pod.at("/spec/initContainers").and_then(Value::as_array);
    init.into_iter()
        .flatten()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
        .is_some_and(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always"))
}

/// `ValidateContainerStateTransition`: every old terminated status whose container is not allowed to
/// restart and reappears not terminated is a cause, at the old status's index.
fn transitions(new: &[Value], old: &[Value], list: &str, allowed: impl Fn(&Value) -> bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, before) in old.iter().enumerate() {
        if exit_code(before).is_none() || allowed(before) {
            continue;
        }
        let name = before.get("name");
        let back = new.iter().filter(|after| after.get("name") == name && exit_code(after).is_none());
        for _ in back {
            causes.push(Cause {
                reason: "FieldValueForbidden",
                field: format!("status.{list}[{i}].state"),
                message: "Forbidden: may not be transitioned to non-terminated state".into(),
            });
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(policy: &str, state: Value) -> Value {
        json!({"spec": {"restartPolicy": policy, "containers": [{"name": "runner"}]},
            "status": {"containerStatuses": [{"name": "runner", "state": state}]}})
    }

    #[test]
    fn a_terminated_container_may_not_run_again_under_restart_policy_never() {
        let done = pod("Never", json!({"terminated": {"exitCode": 0}}));
        let running = pod("Never", json!({"running": {"startedAt": "t"}}));
        let causes = validate_update(&done, &running);
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "status.containerStatuses[0].state");
        assert_eq!(causes[0].message, "Forbidden: may not be transitioned to non-terminated state");
        assert!(validate_update(&running, &done).is_empty(), "running to terminated is fine");
        assert!(validate_update(&done, &done).is_empty());
    }

    #[test]
    fn restart_policies_always_and_on_failure_let_containers_restart() {
        let running = |policy| pod(policy, json!({"waiting": {"reason": "CrashLoopBackOff"}}));
        let failed = |policy| pod(policy, json!({"terminated": {"exitCode": 1}}));
        let succeeded = |policy| pod(policy, json!({"terminated": {"exitCode": 0}}));
        assert!(validate_update(&failed("Always"), &running("Always")).is_empty());
        assert!(validate_update(&failed("OnFailure"), &running("OnFailure")).is_empty());
        assert_eq!(validate_update(&succeeded("OnFailure"), &running("OnFailure")).len(), 1);
    }

    #[test]
    fn sidecar_init_containers_may_restart_and_custom_conditions_must_be_qualified() {
        let old = json!({"spec": {"restartPolicy": "Never", "initContainers": [{"name": "side", "restartPolicy": "Always"}, {"name": "once"}]},
            "status": {"initContainerStatuses": [{"name": "side", "state": {"terminated": {"exitCode": 1}}}, {"name": "once", "state": {"terminated": {"exitCode": 0}}}]}});
        let mut new = old.clone();
        new["status"]["initContainerStatuses"] =
            json!([{"name": "side", "state": {"running": {}}}, {"name": "once", "state": {"running": {}}}]);
        new["status"]["conditions"] = json!([{"type": "Ready"}, {"type": "bad type"}]);
        let fields: Vec<String> = validate_update(&old, &new).into_iter().map(|c| c.field).collect();
        assert_eq!(fields, ["metadata.conditions[1].Type", "status.initContainerStatuses[1].state"]);
    }

    #[test]
    fn a_phase_may_leave_a_terminal_phase_as_upstream_allows() {
        let old = json!({"spec": {"restartPolicy": "Never"}, "status": {"phase": "Failed"}});
        let new = json!({"spec": {"restartPolicy": "Never"}, "status": {"phase": "Running"}});
        assert!(validate_update(&old, &new).is_empty());
    }
}
