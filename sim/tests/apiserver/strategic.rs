//! Strategic merge patch honours the list merge keys of the core types (containers by name,
//! conditions by type, ownerReferences by uid, finalizers as a set) and the `$patch` directives;
//! custom resources still answer it 415.

use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn a_strategic_patch_changes_one_containers_image_by_name() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("p")).await.unwrap();
    let pp = PatchParams::default();
    let image = json!({"spec": {"containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:2.331.0"}]}});
    let patched = w.pods().patch("p", &pp, &Patch::Strategic(image.clone())).await.unwrap();
    let container = &patched.spec.unwrap().containers[0];
    assert_eq!(container.image.as_deref(), Some("ghcr.io/actions/actions-runner:2.331.0"));
    assert_eq!(
        container.termination_message_path.as_deref(),
        Some("/dev/termination-log"),
        "the rest is kept"
    );
    let status = status_of(w.pods().patch("p", &pp, &Patch::Merge(image)).await);
    assert_eq!(status.code, 422, "a merge patch replaces the list, which changes the immutable spec");
}

#[tokio::test(start_paused = true)]
async fn owner_references_merge_by_uid_and_finalizers_as_a_set() {
    let w = world();
    let mut p = pod("p");
    p.metadata.finalizers = Some(vec!["a".into()]);
    w.pods().create(&PostParams::default(), &p).await.unwrap();
    let pp = PatchParams::default();
    let owner = |uid: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": uid, "uid": uid});
    let add = json!({"metadata": {"ownerReferences": [owner("u1")], "finalizers": ["b"]}});
    w.pods().patch("p", &pp, &Patch::Strategic(add)).await.unwrap();
    let add = json!({"metadata": {"ownerReferences": [owner("u2")]}});
    let patched = w.pods().patch("p", &pp, &Patch::Strategic(add)).await.unwrap();
    let uids: Vec<String> = patched.metadata.owner_references.unwrap().into_iter().map(|o| o.uid).collect();
    assert_eq!(uids, ["u2", "u1"], "new items come first, as upstream orders them");
    assert_eq!(patched.metadata.finalizers.unwrap(), ["b", "a"]);
    let remove = json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "u1"}],
        "$deleteFromPrimitiveList/finalizers": ["a"]}});
    let patched = w.pods().patch("p", &pp, &Patch::Strategic(remove)).await.unwrap();
    assert_eq!(patched.metadata.owner_references.unwrap().len(), 1);
    assert_eq!(patched.metadata.finalizers.unwrap(), ["b"]);
}

#[tokio::test(start_paused = true)]
async fn status_conditions_merge_by_type() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("p")).await.unwrap();
    let pp = PatchParams::default();
    let cond = |kind: &str, status: &str| json!({"type": kind, "status": status});
    let first = json!({"status": {"conditions": [cond("PodScheduled", "True"), cond("Ready", "False")]}});
    Api::<Pod>::namespaced(w.client.clone(), "default")
        .patch_status("p", &pp, &Patch::Strategic(first))
        .await
        .unwrap();
    let ready = json!({"status": {"conditions": [cond("Ready", "True")]}});
    let patched = w.pods().patch_status("p", &pp, &Patch::Strategic(ready)).await.unwrap();
    let conditions: Vec<(String, String)> =
        patched.status.unwrap().conditions.unwrap().into_iter().map(|c| (c.type_, c.status)).collect();
    assert_eq!(conditions, [("PodScheduled".into(), "True".into()), ("Ready".into(), "True".into())]);
}

#[tokio::test(start_paused = true)]
async fn patch_replace_and_merge_key_errors_are_answered_as_upstream_answers_them() {
    let w = world();
    let accounts: Api<ServiceAccount> = Api::namespaced(w.client.clone(), "default");
    let pp = PatchParams::default();
    let secrets = json!({"secrets": [{"name": "a"}, {"name": "b"}]});
    accounts.patch("default", &pp, &Patch::Strategic(secrets)).await.unwrap();
    let replace = json!({"secrets": [{"$patch": "replace"}, {"name": "c"}]});
    let patched = accounts.patch("default", &pp, &Patch::Strategic(replace)).await.unwrap();
    let names: Vec<String> = patched.secrets.unwrap().into_iter().filter_map(|s| s.name).collect();
    assert_eq!(names, ["c"]);
    let (code, body) = raw(
        &w,
        "PATCH",
        "/api/v1/namespaces/default/serviceaccounts/default",
        "application/strategic-merge-patch+json",
        r#"{"secrets":[{"namespace":"x"}]}"#,
    )
    .await;
    assert_eq!(code, 500);
    assert_eq!(body["message"], "map: map[namespace:x] does not contain declared merge key: name");
}

#[tokio::test(start_paused = true)]
async fn custom_resources_still_refuse_strategic_merge_with_415() {
    let w = world();
    w.runners().create(&PostParams::default(), &runner("r")).await.unwrap();
    let status =
        status_of(w.runners().patch("r", &PatchParams::default(), &Patch::Strategic(json!({}))).await);
    assert_eq!((status.code, status.reason.as_str()), (415, "UnsupportedMediaType"));
}
