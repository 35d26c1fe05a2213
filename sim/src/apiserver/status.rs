//! `Status` bodies: every error the fake API server answers, shaped exactly as kube-apiserver shapes them
//! (see `shared/APISERVER-RESPONSES.md`), so clients take the same error paths they take in production.

use crate::json_at::At;
use serde_json::{Value, json};

use super::gofmt;
use super::registry::ResourceType;

/// An error answer: HTTP code plus its `Status` body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The HTTP status code (repeated in the body's `code`).
    pub code: u16,
    /// The `Status` object.
    pub body: Value,
    /// `Retry-After` seconds, for 429.
    pub retry_after_seconds: Option<u32>,
}

impl ApiError {
    fn new(code: u16, reason: &str, message: String, details: Option<Value>) -> Self {
        let mut body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        });
        if let Some(details) = details {
            body["details"] = details;
        }
        ApiError { code, body, retry_after_seconds: None }
    }

    /// The `reason` field.
    pub fn reason(&self) -> &str {
        self.body["reason"].as_str().unwrap_or("")
    }

    /// The `message` field.
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or("")
    }
}

fn details(rt: &ResourceType, name: &str) -> Value {
    let mut d = json!({"name": name, "kind": rt.plural.as_str()});
    if !rt.group.is_empty() {
        d["group"] = json!(rt.group.as_str());
    }
    d
}

/// 409 AlreadyExists on create.
pub fn already_exists(rt: &ResourceType, name: &str) -> ApiError {
    let message = format!("{} \"{name}\" already exists", rt.qualified_plural());
    ApiError::new(409, "AlreadyExists", message, Some(details(rt, name)))
}

/// 409 AlreadyExists on create when the object with that name is terminating: the registry prefixes
/// the message with `object is being deleted: ` (genericregistry `Store.Create`).
pub fn already_exists_terminating(rt: &ResourceType, name: &str) -> ApiError {
    let mut e = already_exists(rt, name);
    let message = format!("object is being deleted: {}", e.message());
    e.body["message"] = json!(message);
    e
}

/// The `Status` a DELETE that removed an object answers with when its kind does not return the deleted
/// object (genericregistry `finalizeDelete`: `details.kind` is the resource, as upstream sets it).
pub fn delete_success(rt: &ResourceType, object: &Value) -> Value {
    let name = object.at("/metadata/name").cloned().unwrap_or(json!(""));
    let mut details = json!({"name": name, "kind": rt.plural.as_str()});
    if !rt.group.is_empty() {
        details["group"] = json!(rt.group.as_str());
    }
    if let Some(uid) = object.at("/metadata/uid") {
        details["uid"] = uid.clone();
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}

/// 500 for an error that is not a `Status` (no reason), as `ErrorToAPIStatus` wraps it: the strategic
/// merge patch library's errors come back this way.
pub fn unknown_internal(message: impl Into<String>) -> ApiError {
    let mut e = ApiError::new(500, "", message.into(), None);
    e.body.as_object_mut().expect("an object").remove("reason");
    e
}

/// 404 NotFound for a named object.
pub fn not_found(rt: &ResourceType, name: &str) -> ApiError {
    let message = format!("{} \"{name}\" not found", rt.qualified_plural());
    ApiError::new(404, "NotFound", message, Some(details(rt, name)))
}

/// 404 for a path that names no resource.
pub fn unknown_resource() -> ApiError {
    ApiError::new(404, "NotFound", "the server could not find the requested resource".into(), Some(json!({})))
}

/// 409 Conflict for a stale resourceVersion.
pub fn conflict(rt: &ResourceType, name: &str) -> ApiError {
    let message = format!(
        "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
        rt.qualified_plural()
    );
    ApiError::new(409, "Conflict", message, Some(details(rt, name)))
}

/// 409 Conflict for a failed delete or update precondition.
pub fn precondition_failed(
    rt: &ResourceType,
    name: &str,
    what: &str,
    expected: &str,
    actual: &str,
) -> ApiError {
    let message =
        format!("Precondition failed: {what} in precondition: {expected}, {what} in object meta: {actual}");
    ApiError::new(409, "Conflict", message, Some(details(rt, name)))
}

/// One cause of a 422 Invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueForbidden`…
    pub reason: &'static str,
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// The cause's message, e.g. `Required value: name or generateName is required`.
    pub message: String,
}

/// 422 Invalid with its causes, for an object of `rt`.
pub fn invalid(rt: &ResourceType, name: &str, causes: &[Cause]) -> ApiError {
    invalid_of(&rt.group, &rt.kind, name, causes)
}

/// 422 Invalid as `errors.NewInvalid(GroupKind{group, kind}, name, causes)` builds it: the message
/// names `Kind.group` and joins the distinct causes (`[a, b]` when more than one); details carry
/// name, group and kind when not empty, and every cause.
pub fn invalid_of(group: &str, kind: &str, name: &str, causes: &[Cause]) -> ApiError {
    let qualified = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
    let mut distinct: Vec<String> = Vec::new();
    for c in causes {
        let line = format!("{}: {}", c.field, c.message);
        if !distinct.contains(&line) {
            distinct.push(line);
        }
    }
    let message = match distinct.len() {
        0 => format!("{qualified} {} is invalid", gofmt::quote(name)),
        1 => format!("{qualified} {} is invalid: {}", gofmt::quote(name), distinct[0]),
        _ => format!("{qualified} {} is invalid: [{}]", gofmt::quote(name), distinct.join(", ")),
    };
    let causes: Vec<Value> =
        causes.iter().map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field})).collect();
    let mut d = json!({"causes": causes});
    for (key, value) in [("name", name), ("group", group), ("kind", kind)] {
        if !value.is_empty() {
            d[key] = json!(value);
        }
    }
    ApiError::new(422, "Invalid", message, Some(d))
}

/// 400 BadRequest.
pub fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(400, "BadRequest", message.into(), None)
}

/// 403 Forbidden on a named object.
pub fn forbidden(rt: &ResourceType, name: &str, why: &str) -> ApiError {
    let message = format!("{} \"{name}\" is forbidden: {why}", rt.qualified_plural());
    ApiError::new(403, "Forbidden", message, Some(details(rt, name)))
}

/// 405 MethodNotAllowed.
pub fn method_not_allowed(method: &str) -> ApiError {
    ApiError::new(
        405,
        "MethodNotAllowed",
        format!("the server does not allow this method on the requested resource: {method}"),
        Some(json!({})),
    )
}

/// 415 UnsupportedMediaType.
pub fn unsupported_media_type(content_type: &str) -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        format!(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/merge-patch+json, application/json-patch+json, application/strategic-merge-patch+json (built-in kinds); got {content_type:?}"
        ),
        None,
    )
}

/// 415 for server-side apply, which the fake does not implement.
pub fn apply_unsupported() -> ApiError {
    ApiError::new(415, "UnsupportedMediaType", "server-side apply (application/apply-patch+yaml) is not implemented by the arcsim fake API server; use a merge or JSON patch".into(), None)
}

/// 415 for a strategic merge patch on a custom resource, as kube-apiserver answers it.
pub fn strategic_merge_on_custom(content_type: &str) -> ApiError {
    ApiError::new(
        415,
        "UnsupportedMediaType",
        format!(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml; got {content_type:?}"
        ),
        None,
    )
}

/// 429 TooManyRequests with Retry-After.
pub fn too_many_requests(retry_after_seconds: u32) -> ApiError {
    let mut e = ApiError::new(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.".into(),
        Some(json!({"retryAfterSeconds": retry_after_seconds})),
    );
    e.retry_after_seconds = Some(retry_after_seconds);
    e
}

/// An injected server error: 500 InternalError, 503 ServiceUnavailable or 504 Timeout.
pub fn server_error(code: u16) -> ApiError {
    let (reason, message) = match code {
        503 => ("ServiceUnavailable", "the server is currently unable to handle the request"),
        504 => (
            "Timeout",
            "the server was unable to return a response in the time allotted, but may still be processing the request",
        ),
        502 => (
            "InternalError",
            "an error on the server (\"bad gateway\") has prevented the request from succeeding",
        ),
        _ => ("InternalError", "Internal error occurred: injected fault"),
    };
    ApiError::new(code, reason, message.into(), Some(json!({})))
}

/// 410 Expired for a watch or continue token older than retained history.
pub fn expired(message: String) -> ApiError {
    ApiError::new(410, "Expired", message, None)
}

/// 410 Expired for an exact list at a version the store no longer holds (etcd3's `expired`).
pub fn list_too_old() -> ApiError {
    expired("The resourceVersion for the provided list is too old.".into())
}

/// 504 Timeout for a read at a version the watch cache has not reached within its wait
/// (`storage.NewTooLargeResourceVersionError`: retry after 1 s, cause `ResourceVersionTooLarge`).
pub fn too_large_resource_version(requested: u64, current: u64) -> ApiError {
    let message = format!("Timeout: Too large resource version: {requested}, current: {current}");
    let details = json!({
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    });
    let mut e = ApiError::new(504, "Timeout", message, Some(details));
    e.retry_after_seconds = Some(1);
    e
}

/// 504 Timeout for a request whose deadline passed while the store was still working on it; the write
/// may still land (the finisher's `NewTimeoutError`).
pub fn request_timeout() -> ApiError {
    let message = "Timeout: request did not complete within requested timeout - context deadline exceeded";
    ApiError::new(504, "Timeout", message.into(), Some(json!({})))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::fixtures;

    #[test]
    fn already_exists_is_group_qualified_for_custom_resources() {
        let er = fixtures::resource("ephemeralrunners");
        let e = already_exists(&er, "x");
        assert_eq!(e.message(), "ephemeralrunners.actions.github.com \"x\" already exists");
        assert_eq!(
            e.body["details"],
            json!({"name": "x", "kind": "ephemeralrunners", "group": "actions.github.com"})
        );
        assert_eq!(e.body["code"], 409);
        assert_eq!(not_found(&fixtures::resource("pods"), "nope").message(), "pods \"nope\" not found");
    }

    #[test]
    fn invalid_lists_its_causes() {
        let pods = fixtures::resource("pods");
        let cause = Cause {
            reason: "FieldValueRequired",
            field: "metadata.name".into(),
            message: "Required value: name or generateName is required".into(),
        };
        let e = invalid(&pods, "", &[cause.clone(), cause]);
        assert_eq!(
            e.message(),
            "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required"
        );
        assert_eq!(e.body["details"]["causes"].as_array().unwrap().len(), 2, "causes are not deduplicated");
        assert_eq!(e.body["details"]["kind"], "Pod");
        assert!(e.body["details"].get("name").is_none() && e.body["details"].get("group").is_none());
    }

    #[test]
    fn invalid_custom_resources_name_kind_and_group() {
        let widget = fixtures::resource("widgets");
        let cause = |field: &str| Cause {
            reason: "FieldValueRequired",
            field: field.into(),
            message: "Required value".into(),
        };
        let e = invalid(&widget, "w", &[cause("spec.color"), cause("spec.size")]);
        assert_eq!(
            e.message(),
            "Widget.example.com \"w\" is invalid: [spec.color: Required value, spec.size: Required value]"
        );
        assert_eq!(
            (&e.body["details"]["name"], &e.body["details"]["group"], &e.body["details"]["kind"]),
            (&json!("w"), &json!("example.com"), &json!("Widget"))
        );
    }
}
