//! PATCH: merge and JSON patches on the resource and /status, optimistic locks, no-op patches,
//! strategic merge for core kinds, server-side apply refused.

use std::time::Duration;

use futures::StreamExt;
use kube::api::{Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn merge_and_json_patches_apply_to_the_resource_and_to_status() {
    let w = world();
    w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let pp = PatchParams::default();
    let merged = w
        .runners()
        .patch("x", &pp, &Patch::Merge(json!({"metadata": {"labels": {"a": "1"}}})))
        .await
        .unwrap();
    assert_eq!(merged.metadata.labels.unwrap()["a"], "1");
    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "add", "path": "/spec/runnerScaleSetId", "value": 4}])).unwrap();
    let patched = w.runners().patch("x", &pp, &Patch::<()>::Json(ops)).await.unwrap();
    assert_eq!(patched.data["spec"]["runnerScaleSetId"], 4);
    let status = w
        .runners()
        .patch_status("x", &pp, &Patch::Merge(json!({"status": {"phase": "Pending", "runnerId": 9}})))
        .await
        .unwrap();
    assert_eq!(status.data["status"]["runnerId"], 9);
    let ignored =
        w.runners().patch("x", &pp, &Patch::Merge(json!({"status": {"phase": "Failed"}}))).await.unwrap();
    assert_eq!(ignored.data["status"]["phase"], "Pending", "a main-resource patch ignores status");
}

#[tokio::test(start_paused = true)]
async fn a_patch_carrying_a_stale_resource_version_is_an_optimistic_lock() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let rv = created.metadata.resource_version.clone().unwrap();
    let pp = PatchParams::default();
    let locked = json!({"metadata": {"resourceVersion": rv}, "status": {"phase": "Running"}});
    w.runners().patch_status("x", &pp, &Patch::Merge(&locked)).await.unwrap();
    let status = status_of(w.runners().patch_status("x", &pp, &Patch::Merge(&locked)).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    let unlocked =
        w.runners().patch_status("x", &pp, &Patch::Merge(json!({"status": {"phase": "Failed"}}))).await;
    assert!(unlocked.is_ok(), "a merge patch without resourceVersion never conflicts");
}

#[tokio::test(start_paused = true)]
async fn a_patch_that_changes_nothing_bumps_no_version_and_emits_no_event() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let rv = created.metadata.resource_version.clone().unwrap();
    let mut events = w.runners().watch(&WatchParams::default(), &rv).await.unwrap().boxed();
    let pp = PatchParams::default();
    let noop = json!({"spec": {"githubConfigUrl": "https://github.com/arcsim/repo"}});
    let same = w.runners().patch("x", &pp, &Patch::Merge(&noop)).await.unwrap();
    assert_eq!(same.metadata.resource_version.as_deref(), Some(rv.as_str()));
    let real = w
        .runners()
        .patch("x", &pp, &Patch::Merge(json!({"metadata": {"labels": {"b": "2"}}})))
        .await
        .unwrap();
    let next = tokio::time::timeout(Duration::from_secs(5), events.next()).await.unwrap().unwrap().unwrap();
    let WatchEvent::Modified(obj) = next else { panic!("expected MODIFIED, got {next:?}") };
    assert_eq!(obj.metadata.resource_version, real.metadata.resource_version, "the no-op patch sent nothing");
}

#[tokio::test(start_paused = true)]
async fn strategic_merge_is_taken_for_core_kinds_and_refused_for_custom_ones() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("p")).await.unwrap();
    w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let pp = PatchParams::default();
    let labels = json!({"metadata": {"labels": {"s": "1"}}});
    let patched = w.pods().patch("p", &pp, &Patch::Strategic(&labels)).await.unwrap();
    assert_eq!(patched.metadata.labels.unwrap()["s"], "1");
    let status = status_of(w.runners().patch("x", &pp, &Patch::Strategic(&labels)).await);
    assert_eq!((status.code, status.reason.as_str()), (415, "UnsupportedMediaType"));
}

#[tokio::test(start_paused = true)]
async fn server_side_apply_is_refused_with_a_clear_415() {
    let w = world();
    w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let apply = json!({"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner", "metadata": {"name": "x"}});
    let status = status_of(w.runners().patch("x", &PatchParams::apply("test"), &Patch::Apply(&apply)).await);
    assert_eq!(status.code, 415);
    assert!(status.message.contains("server-side apply"), "{}", status.message);
}

#[tokio::test(start_paused = true)]
async fn patching_a_missing_object_is_404() {
    let w = world();
    let status =
        status_of(w.runners().patch("ghost", &PatchParams::default(), &Patch::Merge(json!({}))).await);
    assert_eq!(status.code, 404);
}
