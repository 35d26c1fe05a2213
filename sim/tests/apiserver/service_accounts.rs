//! Every namespace gets a `default` ServiceAccount from the serviceaccounts controller, and the
//! ServiceAccount admission plugin refuses pods naming an account that does not exist.

use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use kube::api::{Api, DeleteParams, PostParams};

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn namespaces_present_at_start_have_their_default_service_account() {
    let w = world();
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(w.server.object("serviceaccounts", ns, "default").is_some(), "{ns}");
    }
    let lines = w.record.trace().text();
    assert!(lines.contains("serviceaccount-controller create serviceaccounts default/default"), "{lines}");
}

#[tokio::test(start_paused = true)]
async fn a_new_namespace_gets_a_default_service_account_shortly_after() {
    let w = world();
    let (code, _) =
        raw(&w, "POST", "/api/v1/namespaces", "application/json", r#"{"metadata":{"name":"team"}}"#).await;
    assert_eq!(code, 201);
    assert!(w.server.object("serviceaccounts", "team", "default").is_none(), "not at once");
    settle().await;
    let sa = w.server.object("serviceaccounts", "team", "default").expect("created by the controller");
    assert_eq!(sa["kind"], "ServiceAccount");
}

#[tokio::test(start_paused = true)]
async fn a_deleted_default_service_account_comes_back() {
    let w = world();
    let accounts: Api<ServiceAccount> = Api::namespaced(w.client.clone(), "default");
    accounts.delete("default", &DeleteParams::default()).await.unwrap();
    assert!(w.server.object("serviceaccounts", "default", "default").is_none());
    settle().await;
    assert!(w.server.object("serviceaccounts", "default", "default").is_some());
}

#[tokio::test(start_paused = true)]
async fn a_pod_without_a_service_account_gets_default() {
    let w = world();
    let created = w.pods().create(&PostParams::default(), &pod("p")).await.unwrap();
    let spec = created.spec.unwrap();
    assert_eq!(spec.service_account_name.as_deref(), Some("default"));
    assert_eq!(spec.service_account.as_deref(), Some("default"));
}

#[tokio::test(start_paused = true)]
async fn a_pod_naming_a_missing_service_account_is_forbidden() {
    let w = world();
    let mut p = pod("x");
    p.spec.as_mut().unwrap().service_account_name = Some("builder".into());
    let status = status_of(w.pods().create(&PostParams::default(), &p).await);
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        "pods \"x\" is forbidden: error looking up service account default/builder: serviceaccount \"builder\" not found"
    );
    let details = status.details.unwrap();
    assert_eq!((details.name.as_str(), details.kind.as_str()), ("x", "pods"));
    assert!(w.server.object("pods", "default", "x").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_pod_in_a_namespace_whose_default_account_is_not_made_yet_is_forbidden() {
    let w = world();
    raw(&w, "POST", "/api/v1/namespaces", "application/json", r#"{"metadata":{"name":"fresh"}}"#).await;
    let pods: Api<Pod> = Api::namespaced(w.client.clone(), "fresh");
    let mut p = pod("");
    p.metadata.name = None;
    p.metadata.generate_name = Some("runner-".into());
    let status = status_of(pods.create(&PostParams::default(), &p).await);
    assert_eq!(
        status.message,
        "pods \"runner-\" is forbidden: error looking up service account fresh/default: serviceaccount \"default\" not found"
    );
    settle().await;
    assert!(pods.create(&PostParams::default(), &p).await.is_ok());
}
