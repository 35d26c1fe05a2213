//! The controller's one door to the API server for writes and uncached reads.
//!
//! Reconcilers read Pods and custom resources from informer caches; everything else (every write, and
//! reads that must not be stale, such as Secrets per ARC-MODEL §1.1) goes through [`KubeApi`]. Each call
//! is counted in `arc_api_calls_total{verb, kind, code}`. A success is counted as `201` for a create and
//! `200` otherwise (kube does not hand back the HTTP code of a success); a failure carries the code of
//! the API server's `Status`, or `transport` when no HTTP answer arrived. The `is_*` helpers classify
//! errors the way apimachinery's `errors.IsNotFound` & co. do.

use std::fmt::Debug;

use either::Either;
use k8s_openapi::NamespaceResourceScope;
use kube::api::{DeleteParams, ListParams, ObjectList, Patch, PatchParams, PostParams};
use kube::core::Status;
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::metrics::{API_CALLS_TOTAL, Metrics};

/// What [`KubeApi`] can read and write: a namespaced kube resource with a static type.
pub trait ApiResource:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + Serialize
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> ApiResource for K where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// A `kube::Client` that counts every call. Cheap to clone.
#[derive(Clone)]
pub struct KubeApi {
    client: Client,
    metrics: Metrics,
}

impl std::fmt::Debug for KubeApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeApi").finish_non_exhaustive()
    }
}

impl KubeApi {
    /// Wraps `client`, counting calls in `metrics`.
    pub fn new(client: Client, metrics: &Metrics) -> Self {
        KubeApi { client, metrics: metrics.clone() }
    }

    /// The underlying client (for informers, which watch through it uncounted).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Reads `namespace/name` from the API server (not the cache). NotFound is `Ok(None)`.
    pub async fn get<K: ApiResource>(&self, namespace: &str, name: &str) -> kube::Result<Option<K>> {
        let result = self.api::<K>(namespace).get(name).await;
        match result {
            Err(error) if is_not_found(&error) => {
                self.count::<K>("get", "404");
                Ok(None)
            }
            result => self.counted::<K, _>("get", "200", result.map(Some)),
        }
    }

    /// Creates `object` in `namespace`.
    pub async fn create<K: ApiResource>(&self, namespace: &str, object: &K) -> kube::Result<K> {
        let result = self.api::<K>(namespace).create(&PostParams::default(), object).await;
        self.counted::<K, _>("create", "201", result)
    }

    /// Sends a JSON merge patch (RFC 7386) to the main resource; `.status` in it is ignored by the
    /// server for kinds with a status subresource.
    pub async fn patch_merge<K: ApiResource>(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> kube::Result<K> {
        let result =
            self.api::<K>(namespace).patch(name, &PatchParams::default(), &Patch::Merge(patch)).await;
        self.counted::<K, _>("patch", "200", result)
    }

    /// Sends a JSON merge patch to the status subresource.
    pub async fn patch_merge_status<K: ApiResource>(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> kube::Result<K> {
        let params = PatchParams::default();
        let result = self.api::<K>(namespace).patch_status(name, &params, &Patch::Merge(patch)).await;
        self.counted::<K, _>("patch_status", "200", result)
    }

    /// Deletes `namespace/name`: `Left` with the object when the server returns it (deletion pending on
    /// finalizers or grace, or just finished), `Right` with a `Status` otherwise.
    pub async fn delete<K: ApiResource>(
        &self,
        namespace: &str,
        name: &str,
        params: &DeleteParams,
    ) -> kube::Result<Either<K, Status>> {
        let result = self.api::<K>(namespace).delete(name, params).await;
        self.counted::<K, _>("delete", "200", result)
    }

    /// Lists from the API server (not the cache); an empty `namespace` lists all namespaces.
    pub async fn list<K: ApiResource>(
        &self,
        namespace: &str,
        params: &ListParams,
    ) -> kube::Result<ObjectList<K>> {
        let api = if namespace.is_empty() { Api::all(self.client.clone()) } else { self.api::<K>(namespace) };
        let result = api.list(params).await;
        self.counted::<K, _>("list", "200", result)
    }

    /// Replaces `namespace/name` with `object` (an update: the server checks `metadata.resourceVersion`).
    pub async fn replace<K: ApiResource>(&self, namespace: &str, name: &str, object: &K) -> kube::Result<K> {
        let result = self.api::<K>(namespace).replace(name, &PostParams::default(), object).await;
        self.counted::<K, _>("update", "200", result)
    }

    fn api<K: ApiResource>(&self, namespace: &str) -> Api<K> {
        Api::namespaced(self.client.clone(), namespace)
    }

    fn counted<K: ApiResource, T>(
        &self,
        verb: &str,
        success_code: &str,
        result: kube::Result<T>,
    ) -> kube::Result<T> {
        match &result {
            Ok(_) => self.count::<K>(verb, success_code),
            Err(error) => self.count::<K>(verb, &error_code(error)),
        }
        result
    }

    fn count<K: ApiResource>(&self, verb: &str, code: &str) {
        let kind = K::kind(&());
        tracing::debug!(verb, kind = %kind, code, "api call");
        self.metrics.inc(API_CALLS_TOTAL, &[("verb", verb), ("kind", &kind), ("code", code)]);
    }
}

/// The `code` label for a failed call: the Status code, or `transport` without an HTTP answer.
fn error_code(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) if status.code != 0 => status.code.to_string(),
        kube::Error::Api(_) => "unknown".to_string(),
        _ => "transport".to_string(),
    }
}

fn api_status(error: &kube::Error) -> Option<&Status> {
    match error {
        kube::Error::Api(status) => Some(status),
        _ => None,
    }
}

/// Whether the API server answered NotFound (404).
pub(crate) fn is_not_found(error: &kube::Error) -> bool {
    api_status(error).is_some_and(Status::is_not_found)
}

/// Whether the API server answered AlreadyExists (a create of a taken name).
pub(crate) fn is_already_exists(error: &kube::Error) -> bool {
    api_status(error).is_some_and(Status::is_already_exists)
}

/// Whether the API server answered Conflict (409: stale resourceVersion or failed precondition).
pub(crate) fn is_conflict(error: &kube::Error) -> bool {
    api_status(error).is_some_and(Status::is_conflict)
}

/// Whether the API server answered Invalid (422: the object failed validation).
pub(crate) fn is_invalid(error: &kube::Error) -> bool {
    api_status(error).is_some_and(Status::is_invalid)
}

/// Whether the API server answered Forbidden (403: RBAC, or admission such as `exceeded quota`).
pub(crate) fn is_forbidden(error: &kube::Error) -> bool {
    api_status(error).is_some_and(Status::is_forbidden)
}

/// The API server's message for a failed call (`pods "p1" already exists`), or the error's own text
/// when no `Status` came back.
pub(crate) fn status_message(error: &kube::Error) -> String {
    match api_status(error) {
        Some(status) => status.message.clone(),
        None => error.to_string(),
    }
}

/// A short, stable reason for a failed call, for `ReconcileError::reason` implementations: the
/// `Status` reason kube-apiserver gave (`NotFound`, `AlreadyExists`, `Conflict`, `Invalid`,
/// `Forbidden`, `TooManyRequests`, `InternalError`, `ServiceUnavailable`, `Timeout`, `Expired`,
/// `BadRequest`, `UnsupportedMediaType`), `Unknown` for any other, `Transport` without a `Status`.
pub(crate) fn error_reason(error: &kube::Error) -> &'static str {
    let Some(status) = api_status(error) else { return "Transport" };
    match status.reason.as_str() {
        "AlreadyExists" => "AlreadyExists",
        "Conflict" => "Conflict",
        "NotFound" => "NotFound",
        "Invalid" => "Invalid",
        "Forbidden" => "Forbidden",
        "TooManyRequests" => "TooManyRequests",
        "InternalError" => "InternalError",
        "ServiceUnavailable" => "ServiceUnavailable",
        "Timeout" => "Timeout",
        "Expired" | "Gone" => "Expired",
        "BadRequest" => "BadRequest",
        "UnsupportedMediaType" => "UnsupportedMediaType",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;
    use crate::runtime::testing::{Reply, ScriptedApi, config_map, config_map_list, status};

    fn setup() -> (ScriptedApi, KubeApi, Metrics) {
        let script = ScriptedApi::new();
        let metrics = Metrics::new();
        let api = KubeApi::new(script.client(), &metrics);
        (script, api, metrics)
    }

    fn calls(metrics: &Metrics, verb: &str, code: &str) -> i64 {
        metrics.get(API_CALLS_TOTAL, &[("verb", verb), ("kind", "ConfigMap"), ("code", code)])
    }

    fn object(name: &str) -> ConfigMap {
        serde_json::from_value(config_map(name, "7")).expect("a config map")
    }

    #[tokio::test]
    async fn get_reads_the_server_and_turns_not_found_into_none() {
        let (script, api, metrics) = setup();
        script.push(Reply::Json(200, config_map("a", "7")));
        script.push(status(404, "NotFound", "configmaps \"b\" not found"));
        let found: Option<ConfigMap> = api.get("default", "a").await.expect("get a");
        let missing: Option<ConfigMap> = api.get("default", "b").await.expect("get b");
        assert_eq!(found.and_then(|cm| cm.metadata.resource_version), Some("7".into()));
        assert!(missing.is_none());
        assert_eq!(calls(&metrics, "get", "200"), 1);
        assert_eq!(calls(&metrics, "get", "404"), 1);
        assert_eq!(script.seen()[0].line, "GET /api/v1/namespaces/default/configmaps/a");
    }

    #[tokio::test]
    async fn a_taken_name_is_already_exists_with_the_servers_message() {
        let (script, api, metrics) = setup();
        script.push(status(409, "AlreadyExists", "configmaps \"a\" already exists"));
        let error = api.create("default", &object("a")).await.expect_err("taken");
        assert!(is_already_exists(&error));
        assert!(!is_conflict(&error), "a 409 with reason AlreadyExists is not a Conflict");
        assert_eq!(error_reason(&error), "AlreadyExists");
        assert_eq!(status_message(&error), "configmaps \"a\" already exists");
        assert_eq!(calls(&metrics, "create", "409"), 1);
        assert_eq!(script.seen()[0].line, "POST /api/v1/namespaces/default/configmaps?");
    }

    #[tokio::test]
    async fn merge_patches_go_to_the_object_or_its_status_as_merge_patch_json() {
        let (script, api, metrics) = setup();
        script.push(Reply::Json(200, config_map("a", "8")));
        script.push(Reply::Json(200, config_map("a", "9")));
        let patch = json!({"metadata": {"labels": {"x": "1"}}});
        let _: ConfigMap = api.patch_merge("default", "a", &patch).await.expect("patched");
        let _: ConfigMap = api.patch_merge_status("default", "a", &patch).await.expect("patched");
        let seen = script.seen();
        assert_eq!(seen[0].line, "PATCH /api/v1/namespaces/default/configmaps/a?");
        assert_eq!(seen[1].line, "PATCH /api/v1/namespaces/default/configmaps/a/status?");
        for request in &seen {
            assert_eq!(request.content_type.as_deref(), Some("application/merge-patch+json"));
            assert_eq!(serde_json::from_str::<Value>(&request.body).ok(), Some(patch.clone()));
        }
        assert_eq!(calls(&metrics, "patch", "200"), 1);
        assert_eq!(calls(&metrics, "patch_status", "200"), 1);
    }

    #[tokio::test]
    async fn delete_list_and_replace_are_counted_with_their_verbs() {
        let (script, api, metrics) = setup();
        script.push(Reply::Json(200, config_map("a", "10")));
        script.push(config_map_list("10", vec![config_map("b", "3")]));
        script.push(config_map_list("10", vec![]));
        script.push(status(409, "Conflict", "the object has been modified"));
        let deleted: Either<ConfigMap, Status> =
            api.delete("default", "a", &DeleteParams::default()).await.expect("deleted");
        assert!(deleted.is_left());
        let listed: ObjectList<ConfigMap> = api.list("default", &ListParams::default()).await.expect("list");
        assert_eq!(listed.items.len(), 1);
        let _: ObjectList<ConfigMap> = api.list("", &ListParams::default()).await.expect("list all");
        let error = api.replace("default", "b", &object("b")).await.expect_err("stale");
        assert!(is_conflict(&error));
        let lines: Vec<String> = script.seen().into_iter().map(|request| request.line).collect();
        assert_eq!(
            lines,
            [
                "DELETE /api/v1/namespaces/default/configmaps/a?",
                "GET /api/v1/namespaces/default/configmaps?",
                "GET /api/v1/configmaps?",
                "PUT /api/v1/namespaces/default/configmaps/b?",
            ]
        );
        assert_eq!(calls(&metrics, "delete", "200"), 1);
        assert_eq!(calls(&metrics, "list", "200"), 2);
        assert_eq!(calls(&metrics, "update", "409"), 1);
    }

    #[tokio::test]
    async fn a_call_without_an_http_answer_counts_as_transport() {
        let (script, api, metrics) = setup();
        script.push(Reply::TransportFailure);
        let error = api.get::<ConfigMap>("default", "a").await.expect_err("no answer");
        assert_eq!(error_reason(&error), "Transport");
        assert!(!is_not_found(&error));
        assert!(!status_message(&error).is_empty());
        assert_eq!(calls(&metrics, "get", "transport"), 1);
    }

    #[tokio::test]
    async fn invalid_and_forbidden_are_told_apart() {
        let (script, api, _) = setup();
        script.push(status(422, "Invalid", "ConfigMap \"a\" is invalid"));
        script.push(status(403, "Forbidden", "exceeded quota: compute"));
        let invalid = api.create("default", &object("a")).await.expect_err("invalid");
        let forbidden = api.create("default", &object("a")).await.expect_err("forbidden");
        assert!(is_invalid(&invalid) && !is_forbidden(&invalid));
        assert!(is_forbidden(&forbidden) && !is_invalid(&forbidden));
        assert_eq!(status_message(&forbidden), "exceeded quota: compute");
        assert_eq!((error_reason(&invalid), error_reason(&forbidden)), ("Invalid", "Forbidden"));
    }
}
