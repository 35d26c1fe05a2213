//! Bad input gets the Status kube-apiserver gives it: never a panic, never a half-applied write.

use http::Request;

use crate::apiserver::support::*;

fn request(method: &str, uri: &str, content_type: &str, body: &str) -> Request<Vec<u8>> {
    let request = Request::builder().method(method).uri(uri).header("content-type", content_type);
    request.body(body.as_bytes().to_vec()).unwrap()
}

async fn send(w: &World, method: &str, uri: &str, content_type: &str, body: &str) -> kube::core::Status {
    status_of(w.client.request_text(request(method, uri, content_type, body)).await)
}

#[tokio::test(start_paused = true)]
async fn malformed_json_is_400_bad_request() {
    let w = world();
    let status = send(&w, "POST", "/api/v1/namespaces/default/pods", "application/json", "{not json").await;
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        w.server.resource_version(),
        8,
        "only the four namespaces and their default service accounts exist"
    );
}

#[tokio::test(start_paused = true)]
async fn an_unknown_resource_is_404() {
    let w = world();
    let status =
        send(&w, "GET", "/apis/example.com/v1/namespaces/default/widgets", "application/json", "").await;
    assert_eq!(
        (status.code, status.message.as_str()),
        (404, "the server could not find the requested resource")
    );
    let status = send(&w, "GET", "/api/v1/namespaces/default/pods/p/exec", "application/json", "").await;
    assert_eq!(status.code, 404);
}

#[tokio::test(start_paused = true)]
async fn an_unsupported_content_type_is_415() {
    let w = world();
    let status =
        send(&w, "POST", "/api/v1/namespaces/default/pods", "application/vnd.kubernetes.protobuf", "x").await;
    assert_eq!((status.code, status.reason.as_str()), (415, "UnsupportedMediaType"));
    let status = send(&w, "PATCH", "/api/v1/namespaces/default/pods/p", "text/plain", "{}").await;
    assert_eq!(status.code, 415);
}

#[tokio::test(start_paused = true)]
async fn a_body_whose_kind_disagrees_with_the_path_is_400() {
    let w = world();
    let secret = r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}"#;
    let status = send(&w, "POST", "/api/v1/namespaces/default/pods", "application/json", secret).await;
    assert_eq!(status.code, 400);
    let wrong_group = r#"{"apiVersion":"v1","kind":"EphemeralRunner","metadata":{"name":"s"}}"#;
    let status = send(
        &w,
        "POST",
        "/apis/actions.github.com/v1alpha1/namespaces/default/ephemeralrunners",
        "application/json",
        wrong_group,
    )
    .await;
    assert_eq!(status.code, 400);
    assert!(status.message.contains("does not match the expected API version"), "{}", status.message);
}

#[tokio::test(start_paused = true)]
async fn a_wrongly_typed_field_in_a_core_kind_is_400() {
    let w = world();
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":"nope"}}"#;
    let status = send(&w, "POST", "/api/v1/namespaces/default/pods", "application/json", pod).await;
    assert_eq!(status.code, 400);
    assert!(w.server.object("pods", "default", "p").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_status_write_decodes_its_status_a_wrongly_typed_one_is_400() {
    let w = world();
    let ok = |method: &str, uri: &str, content_type: &str, body: &str| {
        w.client.request_text(request(method, uri, content_type, body))
    };
    let pod = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#;
    ok("POST", "/api/v1/namespaces/default/pods", "application/json", pod).await.expect("created");
    let path = "/api/v1/namespaces/default/pods/p/status";
    let merge = "application/merge-patch+json";
    let good = r#"{"status":{"phase":"Running","podIP":"10.0.0.1"}}"#;
    ok("PATCH", path, merge, good).await.expect("a well-typed status is stored");
    let bad = send(&w, "PATCH", path, merge, r#"{"status":{"conditions":"nope"}}"#).await;
    assert_eq!(bad.code, 400, "{}", bad.message);
    let stored = w.server.object("pods", "default", "p").unwrap();
    assert_eq!(stored["status"]["phase"], "Running", "the refused write changed nothing");
}

#[tokio::test(start_paused = true)]
async fn bad_selectors_and_numbers_are_400() {
    let w = world();
    let status =
        send(&w, "GET", "/api/v1/namespaces/default/pods?labelSelector=app%20in%20web", "", "").await;
    assert_eq!(status.code, 400);
    let status = send(&w, "GET", "/api/v1/namespaces/default/pods?limit=many", "", "").await;
    assert_eq!(status.code, 400);
    let status =
        send(&w, "DELETE", "/api/v1/namespaces/default/pods/p?propagationPolicy=Sideways", "", "").await;
    assert_eq!(status.code, 400);
}
