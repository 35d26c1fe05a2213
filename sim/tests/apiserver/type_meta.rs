//! `kind` and `apiVersion` default from the path for built-in kinds, as kube-apiserver's decoder fills
//! them (the official Python client's typed models send neither); a wrong kind stays a 400.

use crate::apiserver::support::*;

#[tokio::test(start_paused = true)]
async fn a_create_without_kind_or_api_version_takes_them_from_the_path() {
    let w = world();
    let (code, body) =
        raw(&w, "POST", "/api/v1/namespaces", "application/json", r#"{"metadata":{"name":"typed"}}"#).await;
    assert_eq!(code, 201, "{body}");
    assert_eq!((body["kind"].as_str(), body["apiVersion"].as_str()), (Some("Namespace"), Some("v1")));
    let stored = w.server.object("namespaces", "", "typed").unwrap();
    assert_eq!(stored["kind"], "Namespace");
    let role = r#"{"apiVersion":"","metadata":{"name":"r"},"rules":[]}"#;
    let (code, body) = raw(
        &w,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
        "application/json",
        role,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        (body["kind"].as_str(), body["apiVersion"].as_str()),
        (Some("Role"), Some("rbac.authorization.k8s.io/v1"))
    );
}

#[tokio::test(start_paused = true)]
async fn an_update_without_kind_or_api_version_takes_them_from_the_path() {
    let w = world();
    let cm = r#"{"metadata":{"name":"c"},"data":{"a":"1"}}"#;
    assert_eq!(raw(&w, "POST", "/api/v1/namespaces/default/configmaps", "application/json", cm).await.0, 201);
    let update = r#"{"metadata":{"name":"c"},"data":{"a":"2"}}"#;
    let (code, body) =
        raw(&w, "PUT", "/api/v1/namespaces/default/configmaps/c", "application/json", update).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!((body["kind"].as_str(), body["data"]["a"].as_str()), (Some("ConfigMap"), Some("2")));
}

#[tokio::test(start_paused = true)]
async fn a_present_but_wrong_kind_is_still_a_400_and_custom_resources_must_name_their_kind() {
    let w = world();
    let secret = r#"{"kind":"Secret","metadata":{"name":"s"}}"#;
    let (code, body) =
        raw(&w, "POST", "/api/v1/namespaces/default/configmaps", "application/json", secret).await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
    let runner = r#"{"apiVersion":"actions.github.com/v1alpha1","metadata":{"name":"r"}}"#;
    let path = "/apis/actions.github.com/v1alpha1/namespaces/default/ephemeralrunners";
    let (code, body) = raw(&w, "POST", path, "application/json", runner).await;
    assert_eq!(code, 400);
    assert!(body["message"].as_str().unwrap().starts_with("Object 'Kind' is missing in '"), "{body}");
}
