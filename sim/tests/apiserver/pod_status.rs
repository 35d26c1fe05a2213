//! Pod status writes are validated as `ValidatePodStatusUpdate` validates them: a terminated
//! container does not run again under `restartPolicy: Never`.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use crate::apiserver::support::*;

fn with_policy(name: &str, policy: &str) -> Pod {
    let mut p = pod(name);
    p.spec.as_mut().unwrap().restart_policy = Some(policy.into());
    p
}

fn state(state: serde_json::Value) -> Patch<serde_json::Value> {
    Patch::Merge(json!({"status": {"containerStatuses": [{"name": "runner", "image": "i", "imageID": "",
        "ready": false, "restartCount": 0, "state": state}]}}))
}

#[tokio::test(start_paused = true)]
async fn a_terminated_container_may_not_run_again_under_restart_policy_never() {
    let w = world();
    w.pods().create(&PostParams::default(), &with_policy("p", "Never")).await.unwrap();
    let pp = PatchParams::default();
    w.pods().patch_status("p", &pp, &state(json!({"terminated": {"exitCode": 0}}))).await.unwrap();
    let status = status_of(w.pods().patch_status("p", &pp, &state(json!({"running": {}}))).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        "Pod \"p\" is invalid: status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state"
    );
    let cause = &status.details.unwrap().causes[0];
    assert_eq!(cause.reason, "FieldValueForbidden");
}

#[tokio::test(start_paused = true)]
async fn restart_policy_always_lets_a_container_run_again() {
    let w = world();
    w.pods().create(&PostParams::default(), &with_policy("p", "Always")).await.unwrap();
    let pp = PatchParams::default();
    w.pods().patch_status("p", &pp, &state(json!({"terminated": {"exitCode": 1}}))).await.unwrap();
    assert!(w.pods().patch_status("p", &pp, &state(json!({"running": {}}))).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn the_api_server_lets_a_phase_leave_a_terminal_phase_as_upstream_does() {
    let w = world();
    w.pods().create(&PostParams::default(), &with_policy("p", "Never")).await.unwrap();
    let pp = PatchParams::default();
    w.pods().patch_status("p", &pp, &Patch::Merge(json!({"status": {"phase": "Failed"}}))).await.unwrap();
    let back = w.pods().patch_status("p", &pp, &Patch::Merge(json!({"status": {"phase": "Running"}}))).await;
    assert_eq!(
        back.unwrap().status.unwrap().phase.as_deref(),
        Some("Running"),
        "only the kubelet refuses this"
    );
}
