//! Admission: what a create or update becomes before it is stored.
//!
//! Decoding and kind checks, pruning of custom resources, name validation, validation (built-in kinds
//! through their k8s-openapi types and pod rules, custom resources against their CRD's structural
//! schema), defaulting (pods, secrets, namespaces), server-managed metadata, the status/spec split of
//! kinds with a status subresource, generation bumps, and the rule that no finalizer may be added once
//! deletion has begun. Every check runs before the store is touched, so a rejected write changes
//! nothing.

use crate::json_at::At;
use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::body::WriteBody;
use super::registry::ResourceType;
use super::schema::Schema;
use super::status::{self, ApiError, Cause};
use super::untouched::Untouched;
use super::{labels, pod_status, prune, validate};

/// Decodes a request body into a JSON object and checks its `apiVersion` and `kind` against the path.
/// Built-in kinds take a missing `kind` or `apiVersion` from the path, as kube-apiserver's decoder
/// does (`gvkWithDefaults`: the official Python client's typed models send neither); custom resources
/// are decoded as unstructured objects, which must name their kind.
pub fn decode_object(rt: &ResourceType, body: &mut WriteBody<'_>) -> Result<Value, ApiError> {
    let mut value: Value = body
        .take()
        .map_err(|e| status::bad_request(format!("couldn't decode the request body as JSON: {e}")))?;
    if !value.is_object() {
        return Err(status::bad_request("the request body is not a JSON object"));
    }
    if rt.is_builtin() {
        default_type_meta(rt, &mut value);
    }
    check_type_meta(rt, &value)?;
    Ok(value)
}

/// Fills `kind` and `apiVersion` from the path where the body leaves them out (a version without a
/// group takes the path's version only when the groups agree).
fn default_type_meta(rt: &ResourceType, value: &mut Value) {
    let object = value.as_object_mut().expect("checked to be an object");
    let blank = |v: Option<&Value>| v.and_then(Value::as_str).is_none_or(str::is_empty);
    if blank(object.get("kind")) {
        object.insert("kind".into(), json!(rt.kind));
    }
    if blank(object.get("apiVersion")) {
        object.insert("apiVersion".into(), json!(rt.api_version()));
    }
}

fn check_type_meta(rt: &ResourceType, value: &Value) -> Result<(), ApiError> {
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = value.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if kind.is_empty() {
        return Err(status::bad_request(format!("Object 'Kind' is missing in '{}'", truncated(value))));
    }
    if api_version.is_empty() {
        return Err(status::bad_request(format!("Object 'apiVersion' is missing in '{}'", truncated(value))));
    }
    if api_version != rt.api_version() {
        return Err(status::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            rt.api_version()
        )));
    }
    if kind != rt.kind.as_str() {
        return Err(status::bad_request(format!(
            "{kind} in version \"{}\" cannot be handled as a {}: the kind in the data does not match the kind of the requested resource",
            rt.version, rt.kind
        )));
    }
    Ok(())
}

fn truncated(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 120 { format!("{}...", &text[..text.floor_char_boundary(120)]) } else { text }
}

/// `metadata` as a map (created empty if absent or not an object).
pub fn meta_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.get("metadata").is_some_and(Value::is_object) {
        object["metadata"] = json!({});
    }
    object.get_mut("metadata").and_then(Value::as_object_mut).expect("metadata is an object")
}

/// A string field of `metadata`.
pub fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata").and_then(|m| m.get(field)).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The object's finalizers.
pub fn finalizers(object: &Value) -> Vec<String> {
    object
        .at("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Checks a name as kube-apiserver does (RFC 1123 subdomain; label for namespaces): 422 when bad.
pub fn validate_name(rt: &ResourceType, name: &str) -> Result<(), ApiError> {
    let max = if rt.is_namespace() { 63 } else { 253 };
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let ok =
        name.len() <= max && if rt.is_namespace() { label_ok(name) } else { name.split('.').all(label_ok) };
    if ok {
        return Ok(());
    }
    let what = if rt.is_namespace() { "RFC 1123 label" } else { "RFC 1123 subdomain" };
    Err(status::invalid(
        rt,
        name,
        &[Cause {
            reason: "FieldValueInvalid",
            field: "metadata.name".into(),
            message: format!(
                "Invalid value: \"{name}\": a lowercase {what} must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
            ),
        }],
    ))
}

/// The 422 for a create with neither name nor generateName.
pub fn name_required(rt: &ResourceType) -> ApiError {
    status::invalid(
        rt,
        "",
        &[Cause {
            reason: "FieldValueRequired",
            field: "metadata.name".into(),
            message: "Required value: name or generateName is required".into(),
        }],
    )
}

/// Prunes a custom resource as its structural schema does (see [`prune`]) and returns
/// the unknown field paths dropped; built-in kinds are left as they are.
pub fn prune_unknown(rt: &ResourceType, object: &mut Value) -> Vec<String> {
    match &rt.schema {
        Some(schema) => prune::prune(schema, object),
        None => Vec::new(),
    }
}

/// [`prune_unknown`] of a patched object, less the fields the patch left as stored
/// ([`prune::prune_patched`]).
pub fn prune_patched(rt: &ResourceType, object: &mut Value, untouched: Untouched<'_>) -> Vec<String> {
    match &rt.schema {
        Some(schema) => prune::prune_patched(schema, object, untouched),
        None => Vec::new(),
    }
}

/// Validation of a whole object (after defaulting), or of its status alone for a `/status` write of a
/// custom resource, as kube-apiserver's status strategy validates it.
/// Metadata (labels, annotations) is validated first, as `ValidateObjectMeta` comes first upstream.
pub fn validate_object(
    rt: &ResourceType,
    name: &str,
    object: &Value,
    sub: Subresource,
) -> Result<(), ApiError> {
    validate_against(rt, name, object, Kept::NOTHING, sub)
}

/// [`validate_object`] of a patched object of which `old` is the stored version: the fields of a
/// custom resource that the patch left as stored ([`Untouched`]) are not validated again, nor is the
/// stored status a main-resource write keeps, nor a built-in's status field equal to the stored one;
/// metadata always is.
pub fn validate_patched(
    rt: &ResourceType,
    name: &str,
    object: &Value,
    old: &Value,
    sub: Subresource,
    untouched: Untouched<'_>,
) -> Result<(), ApiError> {
    validate_against(rt, name, object, Kept { untouched, stored_status: old.get("status") }, sub)
}

/// What a write kept of the stored version, which was validated when it was written.
#[derive(Clone, Copy)]
struct Kept<'a> {
    /// The fields a patch left as stored.
    untouched: Untouched<'a>,
    /// The stored status, if known.
    stored_status: Option<&'a Value>,
}

impl Kept<'_> {
    /// Nothing known to be kept (a create or a PUT).
    const NOTHING: Kept<'static> = Kept { untouched: Untouched::NOTHING, stored_status: None };
}

fn validate_against(
    rt: &ResourceType,
    name: &str,
    object: &Value,
    kept: Kept<'_>,
    sub: Subresource,
) -> Result<(), ApiError> {
    let untouched = kept.untouched;
    let mut causes = match sub {
        Subresource::Main => labels::validate_metadata_patched(object, untouched),
        Subresource::Status => Vec::new(),
    };
    if let Some(schema) = &rt.schema {
        causes.extend(schema_causes(rt, schema, object, untouched, sub));
    } else {
        match (sub, object.get("status")) {
            // A status write keeps everything else as stored (decoded when it was written), so only
            // the status can be of a wrong type.
            (Subresource::Status, Some(status)) => typed_decode_status(rt, status, kept.stored_status)?,
            (Subresource::Status, None) => {}
            // The fields a patch left as stored, and the status a main write keeps, were decoded
            // when they were stored.
            (Subresource::Main, _) if untouched.is_known() => {
                let changed = |field: &str, _: &Value| {
                    !(untouched.leaves(field) || (field == "status" && rt.status_subresource))
                };
                typed_decode(rt, object, Some(&changed))?
            }
            (Subresource::Main, _) => typed_decode(rt, object, None)?,
        }
        if rt.is_pod() {
            causes.extend(pod_causes(object));
        }
    }
    if causes.is_empty() { Ok(()) } else { Err(status::invalid(rt, name, &causes)) }
}

/// A custom resource's schema errors: the whole object's, or its status's for a `/status` write, less
/// the fields left as stored (the status a main-resource write keeps is).
fn schema_causes(
    rt: &ResourceType,
    schema: &Schema,
    object: &Value,
    untouched: Untouched<'_>,
    sub: Subresource,
) -> Vec<Cause> {
    match (sub, object.get("status")) {
        (Subresource::Status, None) => Vec::new(),
        (Subresource::Status, Some(status)) => match schema.properties.get("status") {
            Some(status_schema) => {
                let within = untouched.within("status");
                let root = |field: &str| (!within.leaves(field)).then(|| within.within(field));
                validate::validate_patched(status_schema, status, &root, Some("status"))
            }
            None => Vec::new(),
        },
        (Subresource::Main, _) => {
            let kept_status = |field: &str| field == "status" && rt.status_subresource;
            let root = |field: &str| match field {
                // The server sets some of it (the generation, the fields only it writes).
                "metadata" => Some(Untouched::NOTHING),
                _ if kept_status(field) || untouched.leaves(field) => None,
                _ => Some(untouched.within(field)),
            };
            validate::validate_patched(schema, object, &root, None)
        }
    }
}

/// Which top-level fields of an object need decoding (`None`: all); the others were decoded when the
/// stored version was written.
type Changed<'a> = Option<&'a dyn Fn(&str, &Value) -> bool>;

/// Built-in objects must decode into their k8s-openapi type: a wrong field type is the strict
/// decoder's 400. Simplification: unknown fields of built-in kinds are kept, not dropped.
fn typed_decode(rt: &ResourceType, object: &Value, changed: Changed<'_>) -> Result<(), ApiError> {
    use k8s_openapi::api::core::v1 as core;
    use k8s_openapi::api::rbac::v1 as rbac;
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => builtin::<core::Pod>(object, changed),
        ("", "Secret") => builtin::<core::Secret>(object, changed),
        ("", "ConfigMap") => builtin::<core::ConfigMap>(object, changed),
        ("", "ServiceAccount") => builtin::<core::ServiceAccount>(object, changed),
        ("", "Namespace") => builtin::<core::Namespace>(object, changed),
        ("", "ResourceQuota") => builtin::<core::ResourceQuota>(object, changed),
        ("rbac.authorization.k8s.io", "Role") => builtin::<rbac::Role>(object, changed),
        ("rbac.authorization.k8s.io", "RoleBinding") => builtin::<rbac::RoleBinding>(object, changed),
        ("coordination.k8s.io", "Lease") => {
            builtin::<k8s_openapi::api::coordination::v1::Lease>(object, changed)
        }
        _ => Ok(()),
    }
}

/// Whether `value` decodes into `T`, a wrong field type being the strict decoder's 400: the fields
/// `changed` names, or on failure (or with `None`) the whole value, so an error is the one the whole
/// value gives (a required field left out of the changed ones included).
fn builtin<T: serde::de::DeserializeOwned>(value: &Value, changed: Changed<'_>) -> Result<(), ApiError> {
    if let (Some(changed), Some(fields)) = (changed, value.as_object()) {
        let named = fields.iter().filter(|(k, v)| changed(k, v)).map(|(k, v)| (k.as_str(), v));
        if T::deserialize(serde::de::value::MapDeserializer::<_, serde_json::Error>::new(named)).is_ok() {
            return Ok(());
        }
    }
    T::deserialize(value).map(|_| ()).map_err(|e| status::bad_request(format!("error decoding object: {e}")))
}

/// A built-in object's status must decode into its k8s-openapi status type (as [`typed_decode`] of an
/// object holding only that status would, without building that object). A field equal to the
/// stored status's was decoded when that was written; only the others are decoded again.
fn typed_decode_status(rt: &ResourceType, status: &Value, stored: Option<&Value>) -> Result<(), ApiError> {
    use k8s_openapi::api::core::v1 as core;
    let before = stored.and_then(Value::as_object);
    let differs = |field: &str, value: &Value| before.is_none_or(|b| b.get(field) != Some(value));
    let changed: Changed<'_> = Some(&differs);
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => builtin::<core::PodStatus>(status, changed),
        ("", "Namespace") => builtin::<core::NamespaceStatus>(status, changed),
        ("", "ResourceQuota") => builtin::<core::ResourceQuotaStatus>(status, changed),
        _ => typed_decode(rt, &serde_json::json!({ "status": status }), None),
    }
}

fn pod_causes(pod: &Value) -> Vec<Cause> {
    let containers = pod.at("/spec/containers").and_then(Value::as_array);
    let Some(containers) = containers.filter(|c| !c.is_empty()) else {
        return vec![required("spec.containers")];
    };
    let mut causes = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, c) in containers.iter().enumerate() {
        match c.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
            None => causes.push(required(&format!("spec.containers[{i}].name"))),
            Some(n) if !seen.insert(n.to_string()) => causes.push(Cause {
                reason: "FieldValueDuplicate",
                field: format!("spec.containers[{i}].name"),
                message: format!("Duplicate value: \"{n}\""),
            }),
            Some(_) => {}
        }
        if c.get("image").and_then(Value::as_str).is_none_or(str::is_empty) {
            causes.push(required(&format!("spec.containers[{i}].image")));
        }
    }
    causes
}

fn required(field: &str) -> Cause {
    Cause { reason: "FieldValueRequired", field: field.into(), message: "Required value".into() }
}

/// Server-side fields and defaults of a new object. `name`, `namespace` and `uid` are final.
pub struct CreateContext<'a> {
    /// The final name.
    pub name: &'a str,
    /// The final namespace (empty for cluster-scoped kinds).
    pub namespace: &'a str,
    /// The generated uid.
    pub uid: &'a str,
    /// The creation time (truncated to seconds when stamped).
    pub now: Timestamp,
}

/// Applies what the server sets on create: metadata, status reset, kind defaults.
pub fn prepare_create(rt: &ResourceType, mut object: Value, ctx: &CreateContext<'_>) -> Value {
    let meta = meta_mut(&mut object);
    meta.insert("name".into(), json!(ctx.name));
    if rt.namespaced {
        meta.insert("namespace".into(), json!(ctx.namespace));
    } else {
        meta.remove("namespace");
    }
    meta.insert("uid".into(), json!(ctx.uid));
    meta.insert("creationTimestamp".into(), json!(timestamp_seconds(ctx.now)));
    meta.insert("generation".into(), json!(1));
    for server_owned in
        ["deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "managedFields", "selfLink"]
    {
        meta.remove(server_owned);
    }
    if rt.status_subresource {
        object.as_object_mut().expect("object").remove("status");
    }
    default_kind(rt, &mut object);
    object
}

/// RFC 3339 at second precision, as metadata timestamps are.
pub fn timestamp_seconds(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second()).expect("in range").to_string()
}

fn default_kind(rt: &ResourceType, object: &mut Value) {
    if rt.is_pod() {
        default_pod(object);
    } else if rt.is_namespace() {
        object["spec"] = json!({"finalizers": ["kubernetes"]});
        object["status"] = json!({"phase": "Active"});
    } else if rt.is_core("secrets") {
        fold_string_data(object);
        if object.get("type").is_none() {
            object["type"] = json!("Opaque");
        }
    }
}

/// Pod defaults the controller can observe (simplified: no QoS beyond a BestEffort/Burstable split;
/// the service account is the ServiceAccount admission plugin's, see
/// [`serviceaccount_admission`](super::serviceaccount_admission)).
fn default_pod(pod: &mut Value) {
    let spec = pod.get_mut("spec").and_then(Value::as_object_mut);
    let mut burstable = false;
    if let Some(spec) = spec {
        spec.entry("restartPolicy").or_insert(json!("Always"));
        spec.entry("terminationGracePeriodSeconds").or_insert(json!(30));
        spec.entry("dnsPolicy").or_insert(json!("ClusterFirst"));
        spec.entry("schedulerName").or_insert(json!("default-scheduler"));
        for list in ["initContainers", "containers"] {
            for c in spec.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
                burstable |= c.get("resources").is_some_and(|r| r.as_object().is_some_and(|r| !r.is_empty()));
                default_container(c);
            }
        }
    }
    let qos = if burstable { "Burstable" } else { "BestEffort" };
    pod["status"] = json!({"phase": "Pending", "qosClass": qos});
}

fn default_container(c: &mut Value) {
    let Some(c) = c.as_object_mut() else { return };
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    let tag = image.rsplit_once(':').map(|(_, t)| t).filter(|t| !t.contains('/'));
    let policy = if tag.is_none_or(|t| t == "latest") { "Always" } else { "IfNotPresent" };
    c.entry("imagePullPolicy").or_insert(json!(policy));
    c.entry("terminationMessagePath").or_insert(json!("/dev/termination-log"));
    c.entry("terminationMessagePolicy").or_insert(json!("File"));
}

/// Secrets: `stringData` is folded into base64 `data` on every write, as the real server does.
fn fold_string_data(secret: &mut Value) {
    use base64::Engine as _;
    let Some(string_data) = secret.as_object_mut().and_then(|o| o.remove("stringData")) else { return };
    let Some(string_data) = string_data.as_object().cloned() else { return };
    if !secret.get("data").is_some_and(Value::is_object) {
        secret["data"] = json!({});
    }
    let data = secret["data"].as_object_mut().expect("data is an object");
    for (k, v) in string_data {
        let text = v.as_str().unwrap_or_default();
        data.insert(k, json!(base64::engine::general_purpose::STANDARD.encode(text)));
    }
}

/// Whether a write is to the main resource or to `/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    /// The object itself.
    Main,
    /// `/status`.
    Status,
}

/// Builds the object an update (PUT or patched result) of `old` becomes, or rejects it.
///
/// The caller has checked name, namespace and resourceVersion preconditions.
pub fn prepare_update(
    rt: &ResourceType,
    old: &Value,
    incoming: Value,
    sub: Subresource,
) -> Result<Value, ApiError> {
    prepare_patched(rt, old, incoming, sub, Untouched::NOTHING)
}

/// [`prepare_update`] of a patched object: a top-level field the patch left as stored ([`Untouched`])
/// holds the stored value already, so it is neither compared with the stored one nor copied again
/// (the status a main-resource write keeps, a pod's immutable spec, the fields that bump the
/// generation).
pub fn prepare_patched(
    rt: &ResourceType,
    old: &Value,
    incoming: Value,
    sub: Subresource,
    untouched: Untouched<'_>,
) -> Result<Value, ApiError> {
    let name = meta_str(old, "name").unwrap_or_default().to_string();
    check_uid_precondition(rt, &name, old, &incoming)?;
    let mut next = split_status(rt, old, incoming, sub, untouched);
    // A `/status` write's metadata is the stored one already (`split_status`), and so is the metadata
    // of a patch that does not name it.
    if sub == Subresource::Main && !untouched.leaves("metadata") {
        keep_server_metadata(old, &mut next, untouched.within("metadata"));
    }
    check_finalizers_while_deleting(rt, &name, old, &next)?;
    if rt.is_pod() && sub == Subresource::Main {
        let mirrored = mirror_service_account(&mut next);
        if mirrored || !untouched.leaves("spec") {
            check_pod_spec_update(rt, &name, old, &next)?;
        }
    }
    if rt.is_pod() && sub == Subresource::Status {
        let causes = pod_status::validate_update(old, &next);
        if !causes.is_empty() {
            return Err(status::invalid(rt, &name, &causes));
        }
    }
    if rt.is_core("secrets") {
        fold_string_data(&mut next);
    }
    // A `/status` write took everything but its status from the stored object: no spec to compare.
    if sub == Subresource::Main && spec_changed(rt, old, &next, untouched) {
        let generation = old.at("/metadata/generation").and_then(Value::as_i64).unwrap_or(1) + 1;
        meta_mut(&mut next).insert("generation".into(), json!(generation));
    }
    Ok(next)
}

fn check_uid_precondition(
    rt: &ResourceType,
    name: &str,
    old: &Value,
    incoming: &Value,
) -> Result<(), ApiError> {
    match (meta_str(incoming, "uid"), meta_str(old, "uid")) {
        (Some(given), Some(actual)) if given != actual => {
            Err(status::precondition_failed(rt, name, "UID", given, actual))
        }
        _ => Ok(()),
    }
}

/// Main-resource writes keep the stored status; `/status` writes keep everything but status.
fn split_status(
    rt: &ResourceType,
    old: &Value,
    incoming: Value,
    sub: Subresource,
    untouched: Untouched<'_>,
) -> Value {
    match sub {
        Subresource::Status => {
            let mut next = incoming;
            let status = next.as_object_mut().and_then(|o| o.remove("status"));
            let next_fields = next.as_object_mut().expect("decoded and patched bodies are objects");
            let empty = serde_json::Map::new();
            let old_fields = old.as_object().unwrap_or(&empty);
            next_fields.retain(|k, _| old_fields.contains_key(k));
            for (key, stored) in old_fields.iter().filter(|(k, _)| *k != "status") {
                keep_stored(next_fields, key, stored);
            }
            if let Some(status) = status {
                next_fields.insert("status".into(), status);
            }
            next
        }
        // The patch left the status as stored.
        Subresource::Main if rt.status_subresource && untouched.leaves("status") => incoming,
        Subresource::Main if rt.status_subresource => {
            let mut next = incoming;
            let next_fields = next.as_object_mut().expect("decoded and patched bodies are objects");
            match old.get("status") {
                Some(stored) => keep_stored(next_fields, "status", stored),
                None => {
                    next_fields.remove("status");
                }
            }
            next
        }
        Subresource::Main => incoming,
    }
}

/// Sets `fields[key]` to the stored value, copying it only where the incoming one differs (a patch
/// that did not touch a field came with the stored value already).
fn keep_stored(fields: &mut serde_json::Map<String, Value>, key: &str, stored: &Value) {
    match fields.get_mut(key) {
        Some(incoming) if incoming == stored => {}
        Some(incoming) => *incoming = stored.clone(),
        None => {
            fields.insert(key.to_string(), stored.clone());
        }
    }
}

/// Fields only the server writes are carried over from the stored object whatever the client sent;
/// a field the patch left as stored (`left`) is that already. (No stored object has `managedFields`
/// or `selfLink`: every write removes them.)
fn keep_server_metadata(old: &Value, next: &mut Value, left: Untouched<'_>) {
    let empty = serde_json::Map::new();
    let old_meta = old.get("metadata").and_then(Value::as_object).unwrap_or(&empty);
    let meta = meta_mut(next);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "resourceVersion",
    ] {
        if left.leaves(field) {
            continue;
        }
        match old_meta.get(field) {
            Some(stored) => keep_stored(meta, field, stored),
            None => {
                meta.remove(field);
            }
        }
    }
    for field in ["managedFields", "selfLink"] {
        if !left.leaves(field) {
            meta.remove(field);
        }
    }
}

fn check_finalizers_while_deleting(
    rt: &ResourceType,
    name: &str,
    old: &Value,
    next: &Value,
) -> Result<(), ApiError> {
    if meta_str(old, "deletionTimestamp").is_none() {
        return Ok(());
    }
    let before = finalizers(old);
    let added: Vec<String> = finalizers(next).into_iter().filter(|f| !before.contains(f)).collect();
    if added.is_empty() {
        return Ok(());
    }
    Err(status::invalid(
        rt,
        name,
        &[Cause {
            reason: "FieldValueForbidden",
            field: "metadata.finalizers".into(),
            message: format!(
                "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {added:?}"
            ),
        }],
    ))
}

/// `spec.serviceAccount` is the deprecated twin of `spec.serviceAccountName`: a client that leaves it
/// out gets it back from the name, as the v1 conversion does. Whether that changed the spec.
fn mirror_service_account(pod: &mut Value) -> bool {
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else { return false };
    let Some(name) = spec.get("serviceAccountName").filter(|n| n.as_str().is_some_and(|n| !n.is_empty()))
    else {
        return false;
    };
    let name = name.clone();
    spec.insert("serviceAccount".into(), name.clone()).is_none_or(|was| was != name)
}

/// Pod specs are immutable but for container images and the scheduler's binding of `spec.nodeName`
/// (the fake has no `pods/binding` subresource; setting an empty nodeName stands in for it).
fn check_pod_spec_update(rt: &ResourceType, name: &str, old: &Value, next: &Value) -> Result<(), ApiError> {
    let normalise = |pod: &Value, keep_node: bool| {
        let mut spec = pod.get("spec").cloned().unwrap_or(Value::Null);
        for list in ["containers", "initContainers"] {
            for c in spec.get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
                c.as_object_mut().map(|c| c.remove("image"));
            }
        }
        if !keep_node {
            spec.as_object_mut().map(|s| s.remove("nodeName"));
        }
        spec
    };
    let binding = old.at("/spec/nodeName").is_none();
    if normalise(old, !binding) == normalise(next, !binding) {
        return Ok(());
    }
    Err(status::invalid(rt, name, &[Cause {
        reason: "FieldValueForbidden",
        field: "spec".into(),
        message: "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations), `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)".into(),
    }]))
}

/// Whether anything outside `metadata` (and `status`, for kinds with the subresource) changed; a
/// field the patch left as stored has not.
fn spec_changed(rt: &ResourceType, old: &Value, next: &Value, untouched: Untouched<'_>) -> bool {
    let (Some(old), Some(next)) = (old.as_object(), next.as_object()) else { return old != next };
    let counted = |(key, _): &(&String, &Value)| {
        *key != "metadata" && !(rt.status_subresource && *key == "status") && !untouched.leaves(key)
    };
    // Both maps iterate in key order, so equal filtered sequences are equal maps without those keys.
    !old.iter().filter(counted).eq(next.iter().filter(counted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::fixtures;

    fn rt(plural: &str) -> ResourceType {
        fixtures::resource(plural)
    }

    #[test]
    fn kind_and_api_version_default_from_the_path_for_built_ins_and_must_match_it() {
        let pods = rt("pods");
        let ok = decode_object(
            &pods,
            &mut WriteBody {
                bytes: br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}"#,
                json: None,
            },
        );
        assert!(ok.is_ok());
        let wrong_kind = decode_object(
            &pods,
            &mut WriteBody { bytes: br#"{"apiVersion":"v1","kind":"Secret"}"#, json: None },
        )
        .unwrap_err();
        assert_eq!((wrong_kind.code, wrong_kind.reason()), (400, "BadRequest"));
        let no_type =
            decode_object(&pods, &mut WriteBody { bytes: br#"{"metadata":{"name":"a"}}"#, json: None })
                .unwrap();
        assert_eq!((no_type["kind"].as_str(), no_type["apiVersion"].as_str()), (Some("Pod"), Some("v1")));
        let runners = rt("ephemeralrunners");
        let no_kind = decode_object(
            &runners,
            &mut WriteBody { bytes: br#"{"apiVersion":"actions.github.com/v1alpha1"}"#, json: None },
        )
        .unwrap_err();
        assert!(no_kind.message().starts_with("Object 'Kind' is missing"));
        let garbage = decode_object(&pods, &mut WriteBody { bytes: b"{nope", json: None }).unwrap_err();
        assert_eq!(garbage.code, 400);
    }

    #[test]
    fn custom_resources_must_fit_their_schema() {
        let widgets = rt("widgets");
        let good = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"color": "red", "size": 3}});
        assert!(validate_object(&widgets, "w", &good, Subresource::Main).is_ok());
        let bad = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"color": "red", "size": "three"}});
        let err = validate_object(&widgets, "w", &bad, Subresource::Main).unwrap_err();
        assert_eq!((err.code, err.reason()), (422, "Invalid"));
        assert_eq!(
            err.message(),
            "Widget.example.com \"w\" is invalid: spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
        );
    }

    #[test]
    fn unknown_fields_of_custom_resources_are_pruned_built_ins_kept() {
        let mut widget =
            json!({"metadata": {"name": "w", "x": 1}, "spec": {"color": "red", "size": 1, "foo": 2}});
        assert_eq!(prune_unknown(&rt("widgets"), &mut widget), ["spec.foo"]);
        assert!(widget["spec"].get("foo").is_none() && widget["metadata"]["x"] == 1);
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"foo": 1}});
        assert!(prune_unknown(&rt("pods"), &mut pod).is_empty());
        assert_eq!(pod["spec"]["foo"], 1);
    }

    #[test]
    fn names_must_be_rfc1123() {
        let pods = rt("pods");
        assert!(validate_name(&pods, "runner-abc.x").is_ok());
        for bad in ["Upper", "-lead", "trail-", "under_score", ""] {
            assert_eq!(validate_name(&pods, bad).unwrap_err().code, 422, "{bad}");
        }
        assert!(validate_name(&rt("namespaces"), "a.b").is_err());
    }

    #[test]
    fn pods_need_named_containers_with_images() {
        let pods = rt("pods");
        let pod =
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}});
        let err = validate_object(&pods, "p", &pod, Subresource::Main).unwrap_err();
        assert_eq!(err.body["details"]["causes"][0]["field"], "spec.containers");
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}, {"name": "a", "image": "x"}]}});
        let err = validate_object(&pods, "p", &pod, Subresource::Main).unwrap_err();
        assert_eq!(err.body["details"]["causes"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn create_stamps_server_fields_and_drops_status_of_subresource_kinds() {
        let er = rt("ephemeralrunners");
        let ctx =
            CreateContext { name: "x", namespace: "ns", uid: "u", now: Timestamp::from_second(90).unwrap() };
        let obj = json!({"metadata": {"name": "x", "resourceVersion": "9"}, "spec": {}, "status": {"phase": "Running"}});
        let out = prepare_create(&er, obj, &ctx);
        assert_eq!(out["metadata"]["creationTimestamp"], "1970-01-01T00:01:30Z");
        assert_eq!(out["metadata"]["generation"], 1);
        assert!(out.get("status").is_none() && out["metadata"].get("resourceVersion").is_none());
    }

    #[test]
    fn secret_string_data_folds_into_data() {
        let secrets = rt("secrets");
        let ctx = CreateContext { name: "s", namespace: "ns", uid: "u", now: Timestamp::UNIX_EPOCH };
        let out = prepare_create(&secrets, json!({"metadata": {}, "stringData": {"k": "hi"}}), &ctx);
        assert_eq!(out["data"]["k"], "aGk=");
        assert!(out.get("stringData").is_none());
    }

    #[test]
    fn a_pod_status_write_decodes_the_fields_that_changed() {
        use k8s_openapi::api::core::v1::PodStatus;
        let stored = json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
            "startTime": "2026-01-01T00:00:00Z"});
        let next = json!({"phase": "Succeeded", "conditions": [{"type": "Ready", "status": "False"}],
            "startTime": "2026-01-01T00:00:00Z"});
        let pods = rt("pods");
        let decode = |status: &Value, stored: Option<&Value>| typed_decode_status(&pods, status, stored);
        assert!(decode(&next, Some(&stored)).is_ok());
        let wrong = json!({"phase": 3, "conditions": [], "startTime": "2026-01-01T00:00:00Z"});
        let whole = builtin::<PodStatus>(&wrong, None).unwrap_err();
        assert_eq!(decode(&wrong, Some(&stored)).unwrap_err(), whole);
        assert_eq!(decode(&wrong, None).unwrap_err(), whole);
        let bad_time = json!({"phase": "Running", "startTime": "yesterday"});
        assert_eq!(decode(&bad_time, Some(&stored)).unwrap_err().code, 400);
        // A field kept as stored was decoded when it was stored; it is not decoded again.
        let kept_bad = json!({"phase": "Running", "startTime": "yesterday"});
        assert!(decode(&kept_bad, Some(&kept_bad.clone())).is_ok());
    }

    #[test]
    fn a_main_patch_decodes_the_fields_it_names_and_fails_as_the_whole_object_does() {
        use crate::apiserver::body::Body;
        use crate::apiserver::patch::PatchType;
        let roles = rt("rolebindings");
        let binding = json!({"metadata": {"name": "b"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role", "name": "r"}, "subjects": []});
        let patch = json!({"subjects": [{"kind": "ServiceAccount", "name": "sa"}]});
        let untouched = Untouched::of(PatchType::Merge, Body::new(b"", Some(&patch)));
        let kept = Kept { untouched, stored_status: None };
        assert!(validate_against(&roles, "b", &binding, kept, Subresource::Main).is_ok());
        let wrong = json!({"metadata": {"name": "b"}, "roleRef": binding["roleRef"], "subjects": "sa"});
        let err = validate_against(&roles, "b", &wrong, kept, Subresource::Main).unwrap_err();
        assert_eq!(err, validate_object(&roles, "b", &wrong, Subresource::Main).unwrap_err());
        let no_ref = json!({"metadata": {"name": "b"}, "subjects": []});
        let no_ref_whole = validate_object(&roles, "b", &no_ref, Subresource::Main);
        assert_eq!(validate_against(&roles, "b", &no_ref, kept, Subresource::Main), no_ref_whole);
    }

    #[test]
    fn a_patched_update_is_the_update_of_the_merged_object() {
        use crate::apiserver::body::Body;
        use crate::apiserver::merge::merged;
        use crate::apiserver::patch::PatchType;
        let er = rt("ephemeralrunners");
        let er_old = json!({"metadata": {"name": "x", "uid": "u", "generation": 1, "resourceVersion": "5"},
            "spec": {"a": 1, "b": [1]}, "status": {"phase": "Pending"}});
        let pods = rt("pods");
        let pod_old = json!({"metadata": {"name": "p", "uid": "u", "resourceVersion": "5"},
            "spec": {"serviceAccountName": "sa", "containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Running"}});
        let cases = [
            (&er, &er_old, json!({"metadata": {"labels": {"l": "v"}}})),
            (&er, &er_old, json!({"spec": {"a": 2}})),
            (&er, &er_old, json!({"spec": {"a": 1}, "status": {"phase": "Running"}})),
            (&er, &er_old, json!({"status": null})),
            (
                &er,
                &er_old,
                json!({"metadata": {"resourceVersion": "9", "generation": 7, "managedFields": []}}),
            ),
            (&er, &er_old, json!({"metadata": {"name": null, "selfLink": "x", "labels": {"l": "v"}}})),
            (&er, &er_old, json!({"metadata": null})),
            (&pods, &pod_old, json!({"metadata": {"labels": {"l": "v"}}})),
            (&pods, &pod_old, json!({"spec": {"containers": [{"name": "c", "image": "j"}]}})),
            (&pods, &pod_old, json!({"spec": {"restartPolicy": "Never"}})),
        ];
        for (rt, old, patch) in cases {
            let next = merged(old, &patch);
            let untouched = Untouched::of(PatchType::Merge, Body::new(b"", Some(&patch)));
            for sub in [Subresource::Main, Subresource::Status] {
                let whole = prepare_update(rt, old, next.clone(), sub).map_err(|e| e.code);
                let patched = prepare_patched(rt, old, next.clone(), sub, untouched).map_err(|e| e.code);
                assert_eq!(patched, whole, "{patch} on {}", rt.plural);
            }
        }
    }

    #[test]
    fn updates_split_status_and_bump_generation_only_on_spec_change() {
        let er = rt("ephemeralrunners");
        let old = json!({"metadata": {"name": "x", "uid": "u", "generation": 1, "resourceVersion": "5"},
            "spec": {"a": 1}, "status": {"phase": "Pending"}});
        let label_only = json!({"metadata": {"name": "x", "labels": {"l": "v"}}, "spec": {"a": 1}, "status": {"phase": "Running"}});
        let out = prepare_update(&er, &old, label_only, Subresource::Main).unwrap();
        assert_eq!(
            (out["status"]["phase"].as_str(), out["metadata"]["generation"].as_i64()),
            (Some("Pending"), Some(1))
        );
        let spec = json!({"metadata": {"name": "x"}, "spec": {"a": 2}});
        let out = prepare_update(&er, &old, spec, Subresource::Main).unwrap();
        assert_eq!(out["metadata"]["generation"], 2);
        let status = json!({"metadata": {"name": "x", "labels": {"l": "v"}}, "spec": {"a": 9}, "status": {"phase": "Running"}});
        let out = prepare_update(&er, &old, status, Subresource::Status).unwrap();
        assert_eq!((out["spec"]["a"].as_i64(), out["status"]["phase"].as_str()), (Some(1), Some("Running")));
        assert!(out["metadata"].get("labels").is_none());
    }

    #[test]
    fn a_status_write_keeps_the_stored_object_whatever_else_it_sent() {
        let er = rt("ephemeralrunners");
        let old = json!({"apiVersion": "v", "kind": "K", "metadata": {"name": "x", "uid": "u"},
            "spec": {"a": 1, "b": [1, 2]}, "status": {"phase": "Pending"}});
        let mut expected = old.clone();
        expected["status"] = json!({"phase": "Running"});
        let sent = [
            json!({"metadata": {"name": "x", "uid": "u"}, "status": {"phase": "Running"}}),
            json!({"kind": "K", "metadata": {"name": "x", "labels": {"l": "v"}}, "spec": {"a": 2},
                "extra": true, "status": {"phase": "Running"}}),
            json!({"apiVersion": "v", "kind": "K", "metadata": {"name": "x", "uid": "u"},
                "spec": {"a": 1, "b": [1, 2]}, "status": {"phase": "Running"}}),
        ];
        for incoming in sent {
            let out = prepare_update(&er, &old, incoming.clone(), Subresource::Status).unwrap();
            assert_eq!(out, expected, "{incoming}");
        }
        let cleared = prepare_update(&er, &old, json!({"metadata": {}}), Subresource::Status).unwrap();
        assert_eq!(cleared.get("status"), None);
        let main =
            json!({"metadata": {"name": "x"}, "spec": {"a": 1, "b": [1, 2]}, "status": {"phase": "X"}});
        let kept = prepare_update(&er, &old, main, Subresource::Main).unwrap();
        assert_eq!(kept["status"], old["status"]);
        let unset = json!({"metadata": {"name": "x"}, "spec": {"a": 1}, "status": {"phase": "X"}});
        let none =
            prepare_update(&er, &json!({"metadata": {"name": "x"}, "spec": {}}), unset, Subresource::Main);
        assert_eq!(none.unwrap().get("status"), None);
    }

    #[test]
    fn no_finalizer_can_be_added_while_deleting() {
        let er = rt("ephemeralrunners");
        let old = json!({"metadata": {"name": "x", "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["a"]}, "spec": {}});
        let add = json!({"metadata": {"name": "x", "finalizers": ["a", "b"]}, "spec": {}});
        assert_eq!(prepare_update(&er, &old, add, Subresource::Main).unwrap_err().code, 422);
        let remove = json!({"metadata": {"name": "x", "finalizers": []}, "spec": {}});
        assert!(prepare_update(&er, &old, remove, Subresource::Main).is_ok());
    }

    #[test]
    fn pod_specs_are_immutable_except_images_and_binding() {
        let pods = rt("pods");
        let old = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "a"}]}});
        let image = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "b"}]}});
        assert!(prepare_update(&pods, &old, image, Subresource::Main).is_ok());
        let bind = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "a"}]}});
        let bound = prepare_update(&pods, &old, bind, Subresource::Main).unwrap();
        let rebind = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "a"}]}});
        assert_eq!(prepare_update(&pods, &bound, rebind, Subresource::Main).unwrap_err().code, 422);
    }

    #[test]
    fn a_different_uid_in_an_update_is_a_failed_precondition() {
        let er = rt("ephemeralrunners");
        let old = json!({"metadata": {"name": "x", "uid": "u1"}});
        let err =
            prepare_update(&er, &old, json!({"metadata": {"name": "x", "uid": "u2"}}), Subresource::Main)
                .unwrap_err();
        assert_eq!((err.code, err.reason()), (409, "Conflict"));
    }
}
