//! Garbage collection: background, orphan and foreground propagation; dangling owners; namespaces.

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DeleteParams, PostParams};
use kube::core::DynamicObject;

use crate::apiserver::support::*;

fn owned_by(owner: &DynamicObject, block: bool) -> OwnerReference {
    OwnerReference {
        api_version: "actions.github.com/v1alpha1".into(),
        kind: "EphemeralRunner".into(),
        name: owner.metadata.name.clone().unwrap(),
        uid: owner.metadata.uid.clone().unwrap(),
        controller: Some(true),
        block_owner_deletion: Some(block),
    }
}

async fn owner_and_pod(w: &World, block: bool) -> DynamicObject {
    let owner = w.runners().create(&PostParams::default(), &runner("owner")).await.unwrap();
    let mut p = pod("owner");
    p.metadata.owner_references = Some(vec![owned_by(&owner, block)]);
    w.pods().create(&PostParams::default(), &p).await.unwrap();
    owner
}

#[tokio::test(start_paused = true)]
async fn dependents_are_collected_after_their_owner_is_removed() {
    let w = world();
    owner_and_pod(&w, false).await;
    w.runners().delete("owner", &DeleteParams::default()).await.unwrap();
    assert!(w.server.object("pods", "default", "owner").is_some(), "collection is asynchronous");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(w.server.object("pods", "default", "owner").is_none());
    assert!(w.record.trace().lines().iter().any(|l| l.contains("apiserver gc delete pods default/owner")));
}

#[tokio::test(start_paused = true)]
async fn orphan_propagation_leaves_dependents_without_the_reference() {
    let w = world();
    owner_and_pod(&w, false).await;
    w.runners().delete("owner", &DeleteParams::orphan()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(w.server.object("ephemeralrunners", "default", "owner").is_none());
    let pod = w.pods().get("owner").await.expect("the dependent survives");
    assert!(pod.metadata.owner_references.unwrap_or_default().is_empty());
}

#[tokio::test(start_paused = true)]
async fn foreground_propagation_removes_blocking_dependents_first() {
    let w = world();
    owner_and_pod(&w, true).await;
    let owner = w.runners().delete("owner", &DeleteParams::foreground()).await.unwrap().left().expect("held");
    assert!(owner.metadata.finalizers.unwrap().contains(&"foregroundDeletion".to_string()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(w.server.object("pods", "default", "owner").is_none());
    assert!(w.server.object("ephemeralrunners", "default", "owner").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_dependent_of_an_owner_that_is_already_gone_is_collected() {
    let w = world();
    let owner = w.runners().create(&PostParams::default(), &runner("gone")).await.unwrap();
    w.runners().delete("gone", &DeleteParams::default()).await.unwrap();
    let mut p = pod("late");
    p.metadata.owner_references = Some(vec![owned_by(&owner, false)]);
    w.pods().create(&PostParams::default(), &p).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(w.server.object("pods", "default", "late").is_none());
}

#[tokio::test(start_paused = true)]
async fn deleting_a_namespace_empties_it_then_removes_it() {
    let w = world();
    let namespaces: Api<Namespace> = Api::all(w.client.clone());
    let ns: Namespace = serde_json::from_value(
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "arc"}}),
    )
    .unwrap();
    namespaces.create(&PostParams::default(), &ns).await.unwrap();
    // The service-account controller gives the namespace its `default` account a moment later.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(w.client.clone(), "arc");
    pods.create(&PostParams::default(), &pod("p")).await.unwrap();
    let terminating =
        namespaces.delete("arc", &DeleteParams::default()).await.unwrap().left().expect("terminating");
    assert_eq!(terminating.status.unwrap().phase.as_deref(), Some("Terminating"));
    let refused = status_of(pods.create(&PostParams::default(), &pod("q")).await);
    assert_eq!(refused.code, 403);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(w.server.object("pods", "arc", "p").is_none());
    assert!(w.server.object("namespaces", "", "arc").is_none());
}
