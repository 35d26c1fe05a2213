//! The request engine: each API verb as one function over the locked server state, composing
//! admission, patching, lifecycle and the store. Every check runs before the store is touched, so a
//! rejected request changes nothing.

use std::sync::Arc;

use rand::RngCore;
use serde_json::Value;

use super::admission::{self, CreateContext, Subresource, meta_str};
use super::body::{Body, WriteBody};
pub use super::commit::commit;
use super::field_validation::FieldValidation;
use super::lifecycle::{self, DeleteOptions, DeletePlan};
use super::patch::{self, PatchType};
use super::registry::{ResourceId, ResourceType};
use super::status::{self, ApiError};
use super::store::StoreKey;
use super::untouched::Untouched;
use super::{Shared, State, quota, serviceaccount_admission};

/// The alphabet kube-apiserver draws generated-name suffixes from (no vowels, no look-alikes).
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// POST: creates an object in `path_namespace` (None for cluster-scoped kinds).
///
/// In kube-apiserver's order: namespace lifecycle and the ServiceAccount plugin (mutating admission),
/// validation (422), the ResourceQuota plugin (validating admission, 403), then the store (409
/// AlreadyExists).
pub fn create(
    sh: &Shared,
    st: &mut State,
    resource: ResourceId,
    path_namespace: Option<&str>,
    mut object: Value,
) -> Result<Arc<Value>, ApiError> {
    let rt = sh.registry.get(resource);
    let namespace = resolve_namespace(rt, path_namespace, &object)?;
    let requested = meta_str(&object, "name").or(meta_str(&object, "generateName")).unwrap_or("").to_string();
    check_namespace_lifecycle(sh, st, rt, &namespace, &requested)?;
    if rt.is_pod() {
        serviceaccount_admission::admit_pod(sh, st, rt, &namespace, &mut object)?;
    }
    let name = resolve_name(st, rt, resource, &namespace, &object)?;
    admission::validate_name(rt, &name)?;
    let key = StoreKey { resource, namespace, name };
    let existing = st.store.get(&key).cloned();
    let uid = if existing.is_some() { String::new() } else { new_uid(st) };
    let ctx = CreateContext { name: &key.name, namespace: &key.namespace, uid: &uid, now: sh.wall_now() };
    let object = admission::prepare_create(rt, object, &ctx);
    admission::validate_object(rt, &key.name, &object, Subresource::Main)?;
    quota::admit_create(sh, st, resource, &key.namespace, &object)?;
    match existing {
        Some(existing) if meta_str(&existing, "deletionTimestamp").is_some() => {
            Err(status::already_exists_terminating(rt, &key.name))
        }
        Some(_) => Err(status::already_exists(rt, &key.name)),
        None => Ok(st.store.create(key, object)),
    }
}

/// GET of one object.
pub fn get(sh: &Shared, st: &State, key: &StoreKey) -> Result<Arc<Value>, ApiError> {
    st.store.get(key).cloned().ok_or_else(|| status::not_found(sh.registry.get(key.resource), &key.name))
}

/// PUT of the main resource or `/status`.
pub fn update(
    sh: &Shared,
    st: &mut State,
    key: &StoreKey,
    body: Value,
    sub: Subresource,
) -> Result<Arc<Value>, ApiError> {
    let rt = sh.registry.get(key.resource);
    check_identity(rt, key, &body)?;
    let old = get(sh, st, key)?;
    check_resource_version(rt, key, &old, &body)?;
    let next = admission::prepare_update(rt, &old, body, sub)?;
    admission::validate_object(rt, &key.name, &next, sub)?;
    Ok(commit(st, key, &old, next))
}

/// What a patch asks for beyond the patch itself.
#[derive(Debug)]
pub struct PatchRequest<'a> {
    /// The patch's content type.
    pub patch_type: PatchType,
    /// The patch body (a merge patch's values move into the patched object).
    pub body: WriteBody<'a>,
    /// The main resource or `/status`.
    pub sub: Subresource,
    /// What unknown fields in the patched object get.
    pub fields: FieldValidation,
}

/// PATCH of the main resource or `/status`; returns the stored object and the warnings to send.
pub fn patch(
    sh: &Shared,
    st: &mut State,
    key: &StoreKey,
    req: PatchRequest<'_>,
) -> Result<(Arc<Value>, Vec<String>), ApiError> {
    let rt = sh.registry.get(key.resource);
    let old = get(sh, st, key)?;
    let mut body = req.body;
    let target = patch_target(req.sub, &old, body.view());
    let mut patched = patch::apply(rt, req.patch_type, target, &mut body)?;
    // A patch keeps every key it named when it gives up its values.
    let untouched = Untouched::of(req.patch_type, body.view());
    let warnings = prune_patched(rt, &mut patched, untouched, req.fields)?;
    check_identity(rt, key, &patched)?;
    check_resource_version(rt, key, &old, &patched)?;
    let next = admission::prepare_patched(rt, &old, patched, req.sub, untouched)?;
    admission::validate_patched(rt, &key.name, &next, &old, req.sub, untouched)?;
    Ok((commit(st, key, &old, next), warnings))
}

/// What a patch applies to. A `/status` patch that names nothing but status and metadata needs of the
/// stored object only those and its kind: the spec and the like the status write keeps from the stored
/// object anyway ([`admission::prepare_update`]). Patching only these gives the same status, metadata
/// and refusals without copying the spec. Any other patch applies to the whole object.
fn patch_target<'a>(sub: Subresource, old: &'a Value, body: Body<'_>) -> patch::Target<'a> {
    const VIEWED: &[&str] = &["apiVersion", "kind", "metadata", "status"];
    let names_only_viewed =
        body.json.and_then(Value::as_object).is_some_and(|p| p.keys().all(|k| VIEWED.contains(&k.as_str())));
    if sub == Subresource::Status && names_only_viewed {
        patch::Target { object: old, fields: Some(VIEWED) }
    } else {
        patch::Target::whole(old)
    }
}

/// The decoder's pass over a patched custom resource: unknown fields pruned, then warned about or
/// refused as `fields` says.
fn prune_patched(
    rt: &ResourceType,
    patched: &mut Value,
    untouched: Untouched<'_>,
    fields: FieldValidation,
) -> Result<Vec<String>, ApiError> {
    let unpruned = (fields == FieldValidation::Strict && rt.is_custom()).then(|| patched.clone());
    let unknown = admission::prune_patched(rt, patched, untouched);
    fields.on_patch(unpruned.as_ref().unwrap_or(patched), &unknown)
}

/// What a DELETE did: the object as it now is (its last state when removed), and whether it is gone.
#[derive(Debug, Clone)]
pub struct Deleted {
    /// The object.
    pub object: Arc<Value>,
    /// Whether it was removed (rather than marked for deletion, or left as it was).
    pub removed: bool,
}

/// DELETE of one object: removed, marked for deletion, or unchanged (see [`lifecycle`]).
pub fn delete(
    sh: &Shared,
    st: &mut State,
    key: &StoreKey,
    opts: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    let rt = sh.registry.get(key.resource);
    let old = get(sh, st, key)?;
    Ok(match lifecycle::plan_delete(rt, &old, opts, sh.wall_now())? {
        DeletePlan::Remove => {
            Deleted { object: st.store.remove(key).expect("present under the lock"), removed: true }
        }
        DeletePlan::Mark(marked) => Deleted { object: st.store.update(key, marked), removed: false },
        DeletePlan::Unchanged => Deleted { object: old, removed: false },
    })
}

fn resolve_namespace(
    rt: &ResourceType,
    path_namespace: Option<&str>,
    object: &Value,
) -> Result<String, ApiError> {
    if !rt.namespaced {
        return Ok(String::new());
    }
    let path = path_namespace.unwrap_or_default();
    match meta_str(object, "namespace") {
        Some(body) if body != path => Err(status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => Ok(path.to_string()),
    }
}

/// NamespaceLifecycle admission: no creates in a missing or terminating namespace.
fn check_namespace_lifecycle(
    sh: &Shared,
    st: &State,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
) -> Result<(), ApiError> {
    if !rt.namespaced {
        return Ok(());
    }
    let ns_type = sh.registry.namespace_id();
    let key = StoreKey { resource: ns_type, namespace: String::new(), name: namespace.to_string() };
    let Some(ns) = st.store.get(&key) else {
        return Err(status::not_found(sh.registry.get(ns_type), namespace));
    };
    if meta_str(ns, "deletionTimestamp").is_some() {
        let why =
            format!("unable to create new content in namespace {namespace} because it is being terminated");
        return Err(status::forbidden(rt, name, &why));
    }
    Ok(())
}

fn resolve_name(
    st: &mut State,
    rt: &ResourceType,
    resource: ResourceId,
    namespace: &str,
    object: &Value,
) -> Result<String, ApiError> {
    if let Some(name) = meta_str(object, "name") {
        return Ok(name.to_string());
    }
    let Some(prefix) = meta_str(object, "generateName") else {
        return Err(admission::name_required(rt));
    };
    let prefix: String = prefix.chars().take(58).collect();
    let mut candidate = String::new();
    for _ in 0..8 {
        candidate = format!("{prefix}{}", random_suffix(st));
        let key = StoreKey { resource, namespace: namespace.to_string(), name: candidate.clone() };
        if st.store.get(&key).is_none() {
            break;
        }
    }
    Ok(candidate)
}

fn random_suffix(st: &mut State) -> String {
    (0..5)
        .map(|_| {
            let i = (st.rng.next_u32() as usize) % NAME_ALPHABET.len();
            NAME_ALPHABET[i] as char
        })
        .collect()
}

fn new_uid(st: &mut State) -> String {
    let mut b = [0u8; 16];
    st.rng.fill_bytes(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The body of a PUT or the result of a PATCH must name the object on the URL.
fn check_identity(rt: &ResourceType, key: &StoreKey, object: &Value) -> Result<(), ApiError> {
    if let Some(name) = meta_str(object, "name").filter(|n| *n != key.name) {
        return Err(status::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            key.name
        )));
    }
    if rt.namespaced && meta_str(object, "namespace").is_some_and(|ns| ns != key.namespace) {
        return Err(status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

/// A resourceVersion in the written object is an optimistic lock: 409 when it is not the stored one.
fn check_resource_version(
    rt: &ResourceType,
    key: &StoreKey,
    old: &Value,
    written: &Value,
) -> Result<(), ApiError> {
    match (meta_str(written, "resourceVersion"), meta_str(old, "resourceVersion")) {
        (Some(given), Some(current)) if given != current => Err(status::conflict(rt, &key.name)),
        _ => Ok(()),
    }
}
