//! POST: server-set metadata, generateName, AlreadyExists, Invalid, namespace rules, status dropped.

use arc_sim::Seed;
use arc_sim::apiserver::ApiServerConfig;
use arc_sim::faults::FaultPlan;
use kube::api::PostParams;
use serde_json::json;

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn create_sets_uid_timestamp_version_and_generation() {
    let w = world();
    tokio::time::sleep(std::time::Duration::from_secs(90)).await;
    let created = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let meta = &created.metadata;
    assert_eq!(meta.uid.as_ref().map(String::len), Some(36));
    assert_eq!(meta.creation_timestamp.as_ref().unwrap().0.to_string(), "2026-01-01T00:01:30Z");
    assert_eq!(meta.generation, Some(1));
    assert_eq!(meta.namespace.as_deref(), Some("default"));
    assert_eq!(created.status.unwrap().phase.as_deref(), Some("Pending"));
}

#[tokio::test(start_paused = true)]
async fn resource_versions_come_from_one_global_counter_across_kinds() {
    let w = world();
    let p = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let r = w.runners().create(&PostParams::default(), &runner("r")).await.unwrap();
    let p2 = w.pods().create(&PostParams::default(), &pod("b")).await.unwrap();
    assert_eq!(rv_of(&r.metadata), rv_of(&p.metadata) + 1);
    assert_eq!(rv_of(&p2.metadata), rv_of(&r.metadata) + 1);
}

#[tokio::test(start_paused = true)]
async fn generate_name_appends_five_seeded_characters() {
    let names = |seed| async move {
        let w = world_with(Seed(seed), ApiServerConfig::default(), FaultPlan::none());
        let mut obj = runner("");
        obj.metadata.name = None;
        obj.metadata.generate_name = Some("set-runner-".into());
        let mut out = Vec::new();
        for _ in 0..3 {
            out.push(w.runners().create(&PostParams::default(), &obj).await.unwrap().metadata.name.unwrap());
        }
        out
    };
    let first = names(7).await;
    for name in &first {
        let suffix = name.strip_prefix("set-runner-").expect("the prefix is kept");
        assert_eq!(suffix.len(), 5);
        assert!(suffix.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)), "{name}");
    }
    assert_eq!(first, names(7).await, "the same seed generates the same names");
    assert_ne!(first, names(8).await);
}

#[tokio::test(start_paused = true)]
async fn creating_a_taken_name_is_409_already_exists_with_details() {
    let w = world();
    w.runners().create(&PostParams::default(), &runner("x")).await.unwrap();
    let status = status_of(w.runners().create(&PostParams::default(), &runner("x")).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(status.message, "ephemeralrunners.actions.github.com \"x\" already exists");
    let details = status.details.unwrap();
    assert_eq!(
        (details.name.as_str(), details.kind.as_str(), details.group.as_str()),
        ("x", "ephemeralrunners", "actions.github.com")
    );
}

#[tokio::test(start_paused = true)]
async fn creating_without_a_name_is_422_invalid_with_causes() {
    let w = world();
    let mut nameless = pod("x");
    nameless.metadata.name = None;
    let status = status_of(w.pods().create(&PostParams::default(), &nameless).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required"
    );
    let causes = status.details.unwrap().causes;
    assert_eq!(causes[0].field, "metadata.name");
    assert_eq!(causes[0].reason, "FieldValueRequired");
}

#[tokio::test(start_paused = true)]
async fn creating_with_a_mismatched_namespace_is_400() {
    let w = world();
    let mut elsewhere = pod("x");
    elsewhere.metadata.namespace = Some("kube-system".into());
    let status = status_of(w.pods().create(&PostParams::default(), &elsewhere).await);
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        status.message,
        "the namespace of the provided object does not match the namespace sent on the request"
    );
}

#[tokio::test(start_paused = true)]
async fn creating_in_a_missing_namespace_is_404() {
    let w = world();
    let api: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::namespaced(w.client.clone(), "nowhere");
    let status = status_of(api.create(&PostParams::default(), &pod("x")).await);
    assert_eq!((status.code, status.message.as_str()), (404, "namespaces \"nowhere\" not found"));
}

#[tokio::test(start_paused = true)]
async fn create_drops_status_for_kinds_with_a_status_subresource() {
    let w = world();
    let obj = runner_with("x", json!({"spec": {}, "status": {"phase": "Running", "runnerId": 7}}));
    let created = w.runners().create(&PostParams::default(), &obj).await.unwrap();
    assert!(created.data.get("status").is_none(), "{:?}", created.data);
    let stored = w.server.object("ephemeralrunners", "default", "x").unwrap();
    assert!(stored.get("status").is_none());
}

#[tokio::test(start_paused = true)]
async fn an_invalid_pod_is_422_and_stores_nothing() {
    let w = world();
    let mut bad = pod("x");
    bad.spec.as_mut().unwrap().containers[0].image = None;
    let before = w.server.resource_version();
    let status = status_of(w.pods().create(&PostParams::default(), &bad).await);
    assert_eq!(status.code, 422);
    assert_eq!(status.details.unwrap().causes[0].field, "spec.containers[0].image");
    assert_eq!(w.server.resource_version(), before);
    assert!(w.server.object("pods", "default", "x").is_none());
}

#[tokio::test(start_paused = true)]
async fn creating_the_name_of_a_terminating_object_says_it_is_being_deleted() {
    let w = world();
    let mut obj = runner("x");
    obj.metadata.finalizers = Some(vec!["f".into()]);
    w.runners().create(&PostParams::default(), &obj).await.unwrap();
    let status = status_of(w.runners().create(&PostParams::default(), &runner("x")).await);
    assert_eq!(status.message, "ephemeralrunners.actions.github.com \"x\" already exists");
    w.runners().delete("x", &kube::api::DeleteParams::default()).await.unwrap();
    let status = status_of(w.runners().create(&PostParams::default(), &runner("x")).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(
        status.message,
        "object is being deleted: ephemeralrunners.actions.github.com \"x\" already exists"
    );
}
