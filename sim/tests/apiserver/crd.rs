//! Custom resources learnt from CRD manifests: structural-schema validation with kube-apiserver's 422
//! bodies, pruning of unknown fields and the `fieldValidation` parameter, the status subresource as the
//! CRD declares it, and another controller's CRD (`fixtures/widgets.yaml`) served end to end.

use std::time::Duration;

use arc_sim::Seed;
use arc_sim::apiserver::ApiServerConfig;
use arc_sim::faults::FaultPlan;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use http_body_util::{BodyExt, Full};
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
    WatchEvent, WatchParams,
};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::apiserver::support::*;

const ERS_PATH: &str = "/apis/actions.github.com/v1alpha1/namespaces/default/ephemeralrunnersets";
const WIDGETS_PATH: &str = "/apis/example.com/v1/widgets";

/// An answer as it went over the wire.
struct Raw {
    code: u16,
    warnings: Vec<String>,
    body: Value,
}

/// Sends one request to the server's tower service, bypassing kube's client, to see headers and body.
async fn raw(w: &World, method: &str, uri: &str, content_type: &str, body: &Value) -> Raw {
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = w.server.service().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let warnings = parts.headers.get_all("warning").iter().map(|v| v.to_str().unwrap().to_string()).collect();
    Raw { code: parts.status.as_u16(), warnings, body: serde_json::from_slice(&bytes).unwrap() }
}

async fn post(w: &World, uri: &str, body: &Value) -> Raw {
    raw(w, "POST", uri, "application/json", body).await
}

fn ers(spec: Value) -> Value {
    json!({"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunnerSet",
        "metadata": {"name": "x", "namespace": "default"}, "spec": spec})
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

fn widgets_world() -> World {
    world_serving(Seed(1), ApiServerConfig::default(), FaultPlan::none(), &widget_crds())
}

fn widget_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets")
}

fn widgets(w: &World) -> Api<DynamicObject> {
    Api::all_with(w.client.clone(), &widget_resource())
}

fn dynamic(value: Value) -> DynamicObject {
    serde_json::from_value(value).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_string_replicas_is_kube_apiservers_exact_422() {
    let w = world();
    let answer = post(&w, ERS_PATH, &ers(json!({"replicas": "string", "patchID": 0}))).await;
    let cause = "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"";
    assert_eq!(answer.code, 422);
    assert_eq!(
        answer.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("EphemeralRunnerSet.actions.github.com \"x\" is invalid: spec.replicas: {cause}"),
            "reason": "Invalid",
            "details": {"name": "x", "group": "actions.github.com", "kind": "EphemeralRunnerSet",
                "causes": [{"reason": "FieldValueTypeInvalid", "message": cause, "field": "spec.replicas"}]},
            "code": 422})
    );
    assert_eq!(w.server.objects("ephemeralrunnersets").len(), 0, "nothing stored");
}

#[tokio::test(start_paused = true)]
async fn kube_clients_see_the_same_422_as_a_status() {
    let w = world();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("actions.github.com", "v1alpha1", "EphemeralRunnerSet"),
        "ephemeralrunnersets",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(w.client.clone(), "default", &resource);
    let status =
        status_of(api.create(&PostParams::default(), &dynamic(ers(json!({"replicas": "string"})))).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        "EphemeralRunnerSet.actions.github.com \"x\" is invalid: spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
    );
    let details = status.details.expect("details");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str(), details.name.as_str()),
        ("actions.github.com", "EphemeralRunnerSet", "x")
    );
    assert_eq!(details.causes[0].field, "spec.replicas");
}

#[tokio::test(start_paused = true)]
async fn a_negative_min_runners_is_refused_by_arcs_minimum() {
    let w = world();
    let ars = json!({"apiVersion": "actions.github.com/v1alpha1", "kind": "AutoscalingRunnerSet",
        "metadata": {"name": "arc", "namespace": "default"},
        "spec": {"githubConfigUrl": "https://github.com/o", "githubConfigSecret": "s", "minRunners": -1, "maxRunners": 2}});
    let answer =
        post(&w, "/apis/actions.github.com/v1alpha1/namespaces/default/autoscalingrunnersets", &ars).await;
    assert_eq!(answer.code, 422);
    assert_eq!(
        answer.body["message"],
        "AutoscalingRunnerSet.actions.github.com \"arc\" is invalid: spec.minRunners: Invalid value: -1: spec.minRunners in body should be greater than or equal to 0"
    );
}

#[tokio::test(start_paused = true)]
async fn required_enum_and_bounds_are_checked_and_joined_as_kube_apiserver_joins_them() {
    let w = widgets_world();
    let missing = post(&w, WIDGETS_PATH, &widget("w", json!({"color": "red"}))).await;
    assert_eq!(missing.body["message"], "Widget.example.com \"w\" is invalid: spec.size: Required value");
    assert_eq!(missing.body["details"]["causes"][0]["reason"], "FieldValueRequired");
    let all = post(
        &w,
        WIDGETS_PATH,
        &widget("w", json!({"color": "purple", "size": 0, "name": "Bad", "tags": ["a", "b", "c", "d"]})),
    )
    .await;
    assert_eq!(all.code, 422);
    assert_eq!(
        all.body["message"],
        "Widget.example.com \"w\" is invalid: [spec.color: Unsupported value: \"purple\": supported values: \"red\", \"green\", \"blue\", \
         spec.name: Invalid value: \"Bad\": spec.name in body should match '^[a-z][a-z0-9-]*$', \
         spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1, \
         spec.tags: Too many: 4: must have at most 3 items]"
    );
    let reasons: Vec<&str> = all.body["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        ["FieldValueNotSupported", "FieldValueInvalid", "FieldValueInvalid", "FieldValueTooMany"]
    );
    let no_spec = post(
        &w,
        WIDGETS_PATH,
        &json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}),
    )
    .await;
    assert_eq!(no_spec.body["message"], "Widget.example.com \"w\" is invalid: spec: Required value");
    assert!(w.server.objects("widgets").is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_unknown_field_is_pruned_on_create_with_a_warning() {
    let w = widgets_world();
    let body = widget("w", json!({"color": "red", "size": 2, "foo": 1, "config": {"free": {"form": true}}}));
    let answer = post(&w, WIDGETS_PATH, &body).await;
    assert_eq!(answer.code, 201);
    assert_eq!(answer.warnings, ["299 - \"unknown field \\\"spec.foo\\\"\""]);
    assert!(answer.body["spec"].get("foo").is_none());
    assert_eq!(
        answer.body["spec"]["config"],
        json!({"free": {"form": true}}),
        "preserve-unknown-fields keeps it"
    );
    let stored = w.server.object("widgets", "", "w").unwrap();
    assert!(stored["spec"].get("foo").is_none() && stored["metadata"]["uid"].is_string());
    let ignored = post(
        &w,
        &format!("{WIDGETS_PATH}?fieldValidation=Ignore"),
        &widget("v", json!({"color": "red", "size": 2, "bar": 1})),
    )
    .await;
    assert_eq!((ignored.code, ignored.warnings.len()), (201, 0));
    assert!(ignored.body["spec"].get("bar").is_none());
}

#[tokio::test(start_paused = true)]
async fn strict_field_validation_refuses_unknown_fields() {
    let w = widgets_world();
    let strict = format!("{WIDGETS_PATH}?fieldValidation=Strict");
    let answer = post(&w, &strict, &widget("w", json!({"color": "red", "size": 2, "foo": 1}))).await;
    assert_eq!((answer.code, answer.body["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(
        answer.body["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.foo\""
    );
    let bad_value = post(&w, &format!("{WIDGETS_PATH}?fieldValidation=Loud"), &widget("w", json!({}))).await;
    assert_eq!(bad_value.code, 422);
    assert_eq!(
        bad_value.body["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Loud\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );
    assert!(w.server.objects("widgets").is_empty());
}

#[tokio::test(start_paused = true)]
async fn unknown_fields_are_pruned_on_update_and_patch() {
    let w = widgets_world();
    assert_eq!(post(&w, WIDGETS_PATH, &widget("w", json!({"color": "red", "size": 2}))).await.code, 201);
    let mut updated = w.server.object("widgets", "", "w").unwrap();
    updated["spec"]["extra"] = json!("x");
    let put = raw(&w, "PUT", &format!("{WIDGETS_PATH}/w"), "application/json", &updated).await;
    assert_eq!(
        (put.code, put.warnings.as_slice()),
        (200, ["299 - \"unknown field \\\"spec.extra\\\"\"".to_string()].as_slice())
    );
    assert!(put.body["spec"].get("extra").is_none());
    let patch = json!({"spec": {"size": 3, "tags": ["a"], "other": {"deep": 1}}});
    let merged = raw(&w, "PATCH", &format!("{WIDGETS_PATH}/w"), "application/merge-patch+json", &patch).await;
    assert_eq!(merged.code, 200);
    assert_eq!(merged.warnings, ["299 - \"unknown field \\\"spec.other\\\"\""]);
    assert_eq!((merged.body["spec"]["size"].as_i64(), merged.body["spec"].get("other")), (Some(3), None));
    let strict = raw(
        &w,
        "PATCH",
        &format!("{WIDGETS_PATH}/w?fieldValidation=Strict"),
        "application/merge-patch+json",
        &json!({"spec": {"nope": 1}}),
    )
    .await;
    assert_eq!((strict.code, strict.body["reason"].as_str()), (422, Some("Invalid")));
    let message = strict.body["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            " \"\" is invalid: patch: Invalid value: \"{\\\"apiVersion\\\":\\\"example.com/v1\\\""
        ),
        "{message}"
    );
    assert!(message.ends_with("\": strict decoding error: unknown field \"spec.nope\""), "{message}");
    assert_eq!(strict.body["details"]["causes"][0]["field"], "patch");
    let invalid = raw(
        &w,
        "PATCH",
        &format!("{WIDGETS_PATH}/w"),
        "application/merge-patch+json",
        &json!({"spec": {"size": 11}}),
    )
    .await;
    assert_eq!(
        invalid.body["message"],
        "Widget.example.com \"w\" is invalid: spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"
    );
    assert_eq!(
        w.server.object("widgets", "", "w").unwrap()["spec"]["size"],
        3,
        "the refused patches changed nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn a_null_for_a_non_nullable_field_is_dropped_a_nullable_one_kept() {
    let w = widgets_world();
    let answer =
        post(&w, WIDGETS_PATH, &widget("w", json!({"color": "red", "size": 2, "name": null, "owner": null})))
            .await;
    assert_eq!(answer.code, 201);
    assert_eq!(answer.body["spec"], json!({"color": "red", "size": 2, "owner": null}));
}

#[tokio::test(start_paused = true)]
async fn the_status_subresource_follows_the_crd() {
    let w = world();
    let created = post(
        &w,
        ERS_PATH,
        &json!({"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunnerSet",
        "metadata": {"name": "x"}, "spec": {"replicas": 1, "patchID": 0}, "status": {"currentReplicas": 5}}),
    )
    .await;
    assert_eq!(created.code, 201);
    assert!(created.body.get("status").is_none(), "a status subresource: create drops status");
    let mut with_status = created.body.clone();
    with_status["status"] = json!({"currentReplicas": "five"});
    let bad = raw(&w, "PUT", &format!("{ERS_PATH}/x/status"), "application/json", &with_status).await;
    assert_eq!(bad.code, 422);
    assert_eq!(bad.body["details"]["causes"][0]["field"], "status.currentReplicas");
    assert_eq!(
        bad.body["details"]["causes"][0]["message"],
        "Invalid value: \"string\": currentReplicas in body must be of type integer: \"string\""
    );
    let w2 = widgets_world();
    let widget_with_status = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"color": "red", "size": 1}, "status": {"ready": true}});
    let created = post(&w2, WIDGETS_PATH, &widget_with_status).await;
    assert_eq!(
        created.body["status"],
        json!({"ready": true}),
        "no status subresource: status is part of the object"
    );
    let status_path =
        raw(&w2, "GET", &format!("{WIDGETS_PATH}/w/status"), "application/json", &json!({})).await;
    assert_eq!(status_path.code, 404);
}

#[tokio::test(start_paused = true)]
async fn another_controllers_crd_is_served_end_to_end() {
    let w = widgets_world();
    let api = widgets(&w);
    let mut watch = api.watch(&WatchParams::default(), "0").await.unwrap().boxed();
    for (name, color) in [("a", "red"), ("b", "blue"), ("c", "red")] {
        api.create(&PostParams::default(), &dynamic(widget(name, json!({"color": color, "size": 1}))))
            .await
            .unwrap();
    }
    let reds = api.list(&ListParams::default().fields("spec.color=red")).await.unwrap();
    let names: Vec<String> = reds.items.iter().map(|o| o.metadata.name.clone().unwrap()).collect();
    assert_eq!(names, ["a", "c"], "spec.color is a selectable field");
    assert!(reds.items.iter().all(|o| o.metadata.namespace.is_none()), "cluster-scoped");
    let mut added = Vec::new();
    while added.len() < 3 {
        if let Some(WatchEvent::Added(o)) =
            tokio::time::timeout(Duration::from_secs(5), watch.try_next()).await.unwrap().unwrap()
        {
            added.push(o.metadata.name.unwrap());
        }
    }
    assert_eq!(added, ["a", "b", "c"]);
    let status = status_of(
        api.create(&PostParams::default(), &dynamic(widget("d", json!({"color": "red", "size": 99})))).await,
    );
    assert_eq!(
        status.message,
        "Widget.example.com \"d\" is invalid: spec.size: Invalid value: 99: spec.size in body should be less than or equal to 10"
    );
    let patched = api
        .patch("a", &PatchParams::default(), &Patch::Merge(json!({"spec": {"port": "http"}})))
        .await
        .unwrap();
    assert_eq!(patched.data["spec"]["port"], "http", "int-or-string takes a string");
    let status = status_of(
        api.patch("a", &PatchParams::default(), &Patch::Merge(json!({"spec": {"port": true}}))).await,
    );
    assert_eq!(
        status.message,
        "Widget.example.com \"a\" is invalid: spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\""
    );
}

#[tokio::test(start_paused = true)]
async fn only_the_served_storage_version_and_the_crds_scope_are_routed() {
    let w = widgets_world();
    let namespaced =
        raw(&w, "GET", "/apis/example.com/v1/namespaces/default/widgets", "application/json", &json!({}))
            .await;
    assert_eq!(namespaced.code, 404, "widgets are cluster-scoped");
    let unserved = raw(&w, "GET", "/apis/example.com/v1alpha1/widgets", "application/json", &json!({})).await;
    assert_eq!(unserved.code, 404);
    let arc = raw(&w, "GET", ERS_PATH, "application/json", &json!({})).await;
    assert_eq!(arc.code, 404, "this server was given the widget CRD only");
    let list = raw(&w, "GET", "/apis/example.com/v1", "application/json", &json!({})).await;
    assert_eq!(list.body["resources"][0]["shortNames"], json!(["wdg"]));
    assert_eq!(list.body["resources"][0]["namespaced"], false);
}
