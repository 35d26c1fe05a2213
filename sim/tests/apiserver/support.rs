//! Building a world around the fake API server, and object fixtures.

use arc_sim::apiserver::{ApiServerConfig, CrdSet, FakeApiServer};
use arc_sim::faults::FaultPlan;
use arc_sim::record::Recorder;
use arc_sim::{Seed, SimClock, TraceMode};
use arc_world::arc_crds;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::core::Status;
use serde_json::json;

/// A fake API server, a real client on it, and the run's trace.
pub(super) struct World {
    pub server: FakeApiServer,
    pub client: kube::Client,
    pub record: Recorder,
}

pub(super) fn world() -> World {
    world_with(Seed(1), ApiServerConfig::default(), FaultPlan::none())
}

pub(super) fn world_with(seed: Seed, config: ApiServerConfig, faults: FaultPlan) -> World {
    world_serving(seed, config, faults, arc_crds())
}

/// A world whose server serves the custom resources of `crds` (instead of ARC's).
pub(super) fn world_serving(seed: Seed, config: ApiServerConfig, faults: FaultPlan, crds: &CrdSet) -> World {
    let trace = Recorder::new(SimClock::start(), TraceMode::Full);
    let server = FakeApiServer::new(seed, trace.clock(), trace.clone(), config, &faults, crds);
    let client = server.client();
    World { server, client, record: trace }
}

/// The Widget CRD of `fixtures/widgets.yaml`: another controller's custom resource.
pub(super) fn widget_crds() -> CrdSet {
    CrdSet::from_manifests("widgets.yaml", include_str!("fixtures/widgets.yaml")).expect("a valid fixture")
}

/// A configuration whose requests take no simulated time, for tests that assert exact durations.
pub(super) fn instant_requests() -> ApiServerConfig {
    ApiServerConfig { request_latency: arc_sim::apiserver::LagRange::fixed(0), ..Default::default() }
}

impl World {
    pub(super) fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), "default")
    }

    /// EphemeralRunners in `default`, as dynamic objects.
    pub(super) fn runners(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), "default", &ephemeral_runner_resource())
    }
}

pub(super) fn ephemeral_runner_resource() -> ApiResource {
    let gvk = GroupVersionKind::gvk("actions.github.com", "v1alpha1", "EphemeralRunner");
    ApiResource::from_gvk_with_plural(&gvk, "ephemeralrunners")
}

pub(super) fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:2.330.0"}]}
    }))
    .expect("a valid pod")
}

pub(super) fn runner(name: &str) -> DynamicObject {
    let mut obj = DynamicObject::new(name, &ephemeral_runner_resource());
    obj.data = json!({"spec": {"githubConfigUrl": "https://github.com/arcsim/repo"}});
    obj
}

pub(super) fn runner_with(name: &str, data: serde_json::Value) -> DynamicObject {
    let mut obj = DynamicObject::new(name, &ephemeral_runner_resource());
    obj.data = data;
    obj
}

/// The `Status` of an API error; panics on any other outcome.
pub(super) fn status_of<T: std::fmt::Debug>(result: kube::Result<T>) -> Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

pub(super) fn rv_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> u64 {
    meta.resource_version.as_deref().expect("a resourceVersion").parse().expect("numeric")
}

/// Sends a raw request straight to the server's tower service; returns the HTTP status and the JSON
/// body (`Null` when the body is not JSON).
pub(super) async fn raw(
    w: &World,
    method: &str,
    uri: &str,
    content_type: &str,
    body: &str,
) -> (u16, serde_json::Value) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(http_body_util::Full::new(bytes::Bytes::from(body.to_string())))
        .expect("a valid request");
    let response = w.server.service().oneshot(request).await.expect("the service never fails");
    let code = response.status().as_u16();
    let bytes = response.into_body().collect().await.expect("a body").to_bytes();
    (code, serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null))
}

/// Lets simulated time pass (the controllers' delays are at most 50 ms; the collector's 200 ms).
pub(super) async fn settle() {
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
}
