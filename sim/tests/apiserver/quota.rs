//! ResourceQuota: served as core/v1 `resourcequotas`, its status kept by the quota controller, pod
//! creates over a `pods` hard limit refused with kube-apiserver's 403.

use k8s_openapi::api::core::v1::{Pod, ResourceQuota};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::apiserver::support::*;

fn quota(pods: &str) -> ResourceQuota {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "pods-quota"}, "spec": {"hard": {"pods": pods, "requests.cpu": "2"}}}))
    .unwrap()
}

fn quotas(w: &World) -> Api<ResourceQuota> {
    Api::namespaced(w.client.clone(), "default")
}

async fn status(w: &World) -> serde_json::Value {
    serde_json::to_value(quotas(w).get("pods-quota").await.unwrap().status).unwrap()
}

#[tokio::test(start_paused = true)]
async fn the_quota_controller_fills_status_hard_and_used() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let created = quotas(&w).create(&PostParams::default(), &quota("2")).await.unwrap();
    assert!(created.status.is_none_or(|s| s.hard.is_none()), "a new quota has no status yet");
    settle().await;
    assert_eq!(status(&w).await, json!({"hard": {"pods": "2", "requests.cpu": "2"}, "used": {"pods": "1"}}));
    let lines = w.record.trace().text();
    assert!(
        lines.contains("resourcequota-controller update-status resourcequotas default/pods-quota"),
        "{lines}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_pod_over_the_pods_hard_limit_is_forbidden_with_kube_apiservers_body() {
    let w = world();
    quotas(&w).create(&PostParams::default(), &quota("2")).await.unwrap();
    settle().await;
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    w.pods().create(&PostParams::default(), &pod("b")).await.unwrap();
    assert_eq!(status(&w).await["used"]["pods"], "2", "admission charges the quota in the request");
    let (code, body) = raw(
        &w,
        "POST",
        "/api/v1/namespaces/default/pods",
        "application/json",
        r#"{"metadata":{"name":"c"},"spec":{"containers":[{"name":"x","image":"y"}]}}"#,
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "pods \"c\" is forbidden: exceeded quota: pods-quota, requested: pods=1, used: pods=2, limited: pods=2",
            "reason": "Forbidden", "details": {"name": "c", "kind": "pods"}, "code": 403})
    );
    assert!(w.server.object("pods", "default", "c").is_none());
}

#[tokio::test(start_paused = true)]
async fn deleted_and_terminal_pods_give_their_quota_back() {
    let w = world();
    quotas(&w).create(&PostParams::default(), &quota("1")).await.unwrap();
    settle().await;
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    assert_eq!(status_of(w.pods().create(&PostParams::default(), &pod("b")).await).code, 403);
    w.pods().delete("a", &DeleteParams::default()).await.unwrap();
    settle().await;
    assert_eq!(status(&w).await["used"]["pods"], "0");
    w.pods().create(&PostParams::default(), &pod("b")).await.unwrap();
    let done = json!({"status": {"phase": "Succeeded"}});
    Api::<Pod>::namespaced(w.client.clone(), "default")
        .patch_status("b", &PatchParams::default(), &Patch::Merge(done))
        .await
        .unwrap();
    settle().await;
    assert_eq!(status(&w).await["used"]["pods"], "0", "a Succeeded pod is not charged");
    assert!(w.pods().create(&PostParams::default(), &pod("c")).await.is_ok());
}
