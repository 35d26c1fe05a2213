//! DELETE: finalizers and deletionTimestamp, repeated deletes, preconditions, graceful pod deletion.

use std::time::Duration;

use futures::StreamExt;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions, WatchEvent, WatchParams};
use serde_json::json;

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn finalizers_hold_an_object_until_the_last_one_goes() {
    let w = world();
    let mut obj = runner("x");
    obj.metadata.finalizers = Some(vec!["a".into(), "b".into()]);
    let created = w.runners().create(&PostParams::default(), &obj).await.unwrap();
    let rv = created.metadata.resource_version.clone().unwrap();
    let mut events = w.runners().watch(&WatchParams::default(), &rv).await.unwrap().boxed();

    let marked =
        w.runners().delete("x", &DeleteParams::default()).await.unwrap().left().expect("still present");
    let stamp = marked.metadata.deletion_timestamp.clone().expect("deletionTimestamp set");
    let again = w.runners().delete("x", &DeleteParams::default()).await.unwrap().left().unwrap();
    assert_eq!(again.metadata.deletion_timestamp, Some(stamp), "set once");
    assert_eq!(
        again.metadata.resource_version, marked.metadata.resource_version,
        "a repeated delete changes nothing"
    );

    let pp = PatchParams::default();
    w.runners().patch("x", &pp, &Patch::Merge(json!({"metadata": {"finalizers": ["b"]}}))).await.unwrap();
    w.runners().patch("x", &pp, &Patch::Merge(json!({"metadata": {"finalizers": null}}))).await.unwrap();
    assert!(w.server.object("ephemeralrunners", "default", "x").is_none());

    let mut kinds = Vec::new();
    for _ in 0..3 {
        let event =
            tokio::time::timeout(Duration::from_secs(5), events.next()).await.unwrap().unwrap().unwrap();
        kinds.push(match event {
            WatchEvent::Modified(_) => "MODIFIED",
            WatchEvent::Deleted(_) => "DELETED",
            other => panic!("unexpected {other:?}"),
        });
    }
    assert_eq!(kinds, ["MODIFIED", "MODIFIED", "DELETED"]);
}

#[tokio::test(start_paused = true)]
async fn no_finalizer_can_be_added_once_deletion_has_begun() {
    let w = world();
    let mut obj = runner("x");
    obj.metadata.finalizers = Some(vec!["a".into()]);
    w.runners().create(&PostParams::default(), &obj).await.unwrap();
    w.runners().delete("x", &DeleteParams::default()).await.unwrap();
    let add = Patch::Merge(json!({"metadata": {"finalizers": ["a", "late"]}}));
    let status = status_of(w.runners().patch("x", &PatchParams::default(), &add).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
}

#[tokio::test(start_paused = true)]
async fn delete_preconditions_on_uid_and_resource_version() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let wrong_uid = DeleteParams::default()
        .preconditions(Preconditions { uid: Some("other".into()), resource_version: None });
    let status = status_of(w.runners().delete("x", &wrong_uid).await);
    assert_eq!(status.code, 409);
    assert!(
        status.message.starts_with("Precondition failed: UID in precondition: other"),
        "{}",
        status.message
    );
    let stale = DeleteParams::default()
        .preconditions(Preconditions { uid: None, resource_version: Some("1".into()) });
    assert_eq!(status_of(w.runners().delete("x", &stale).await).code, 409);
    let right = DeleteParams::default().preconditions(Preconditions {
        uid: created.metadata.uid.clone(),
        resource_version: created.metadata.resource_version.clone(),
    });
    assert!(
        w.runners().delete("x", &right).await.unwrap().is_right()
            || w.server.object("ephemeralrunners", "default", "x").is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn scheduled_pods_are_deleted_gracefully_and_removed_by_a_grace_zero_delete() {
    let w = world();
    let mut p = pod("p");
    p.spec.as_mut().unwrap().node_name = Some("node-1".into());
    w.pods().create(&PostParams::default(), &p).await.unwrap();
    let marked = w.pods().delete("p", &DeleteParams::default()).await.unwrap().left().expect("graceful");
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(30));
    let deadline = marked.metadata.deletion_timestamp.unwrap().0;
    assert_eq!(deadline.as_second(), marked.metadata.creation_timestamp.unwrap().0.as_second() + 30);
    assert!(w.server.object("pods", "default", "p").is_some());
    w.pods().delete("p", &DeleteParams::default().grace_period(0)).await.unwrap();
    assert!(w.server.object("pods", "default", "p").is_none());
}

#[tokio::test(start_paused = true)]
async fn unscheduled_pods_are_removed_at_once() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("p")).await.unwrap();
    assert!(
        w.pods().delete("p", &DeleteParams::default()).await.unwrap().is_right()
            || w.server.object("pods", "default", "p").is_none()
    );
    assert!(w.server.object("pods", "default", "p").is_none());
}

#[tokio::test(start_paused = true)]
async fn deleting_a_missing_object_is_404() {
    let w = world();
    let status = status_of(w.runners().delete("ghost", &DeleteParams::default()).await);
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
}

#[tokio::test(start_paused = true)]
async fn an_object_that_stays_answers_200_with_the_object_and_202_only_when_orphan_dependents_is_false() {
    let w = world();
    let mut obj = runner("x");
    obj.metadata.finalizers = Some(vec!["f".into()]);
    w.runners().create(&PostParams::default(), &obj).await.unwrap();
    let path = "/apis/actions.github.com/v1alpha1/namespaces/default/ephemeralrunners/x";
    let (code, body) = raw(&w, "DELETE", path, "application/json", "").await;
    assert_eq!((code, body["kind"].as_str()), (200, Some("EphemeralRunner")));
    assert!(body["metadata"]["deletionTimestamp"].is_string());
    let (code, body) =
        raw(&w, "DELETE", &format!("{path}?orphanDependents=false"), "application/json", "").await;
    assert_eq!((code, body["kind"].as_str()), (202, Some("EphemeralRunner")));
    let (code, _) = raw(&w, "DELETE", path, "application/json", r#"{"orphanDependents":false}"#).await;
    assert_eq!(code, 202);
}

#[tokio::test(start_paused = true)]
async fn a_gracefully_deleted_pod_answers_200_with_the_pod() {
    let w = world();
    let mut p = pod("p");
    p.spec.as_mut().unwrap().node_name = Some("node-1".into());
    w.pods().create(&PostParams::default(), &p).await.unwrap();
    let (code, body) = raw(&w, "DELETE", "/api/v1/namespaces/default/pods/p", "application/json", "").await;
    assert_eq!((code, body["kind"].as_str()), (200, Some("Pod")));
    assert_eq!(body["metadata"]["deletionGracePeriodSeconds"], 30);
}

#[tokio::test(start_paused = true)]
async fn a_removed_object_of_a_kind_that_does_not_return_it_answers_a_success_status() {
    let w = world();
    let created = w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let (code, body) = raw(
        &w,
        "DELETE",
        "/apis/actions.github.com/v1alpha1/namespaces/default/ephemeralrunners/x",
        "application/json",
        "",
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": "x", "group": "actions.github.com", "kind": "ephemeralrunners",
                "uid": created.metadata.uid.unwrap()}})
    );
    let status = w.runners().create(&PostParams::default(), &runner("y")).await.unwrap();
    let answer = w.runners().delete("y", &DeleteParams::default()).await.unwrap();
    let status_body = answer.right().expect("a Status");
    assert_eq!(status_body.details.unwrap().uid, status.metadata.uid.unwrap());
    w.pods().create(&PostParams::default(), &pod("p")).await.unwrap();
    assert!(
        w.pods().delete("p", &DeleteParams::default()).await.unwrap().is_left(),
        "pods return the object"
    );
}
