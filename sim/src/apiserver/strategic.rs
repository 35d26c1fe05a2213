//! Strategic merge patch for built-in kinds, as apimachinery's `strategicpatch.StrategicMergeMapPatch`
//! applies it on the server: lists with a `patchStrategy: merge` are merged by their `patchMergeKey`
//! (pod `spec.containers`/`initContainers`/`ephemeralContainers` and `volumes` by name, container `env`
//! by name, `volumeMounts` by mountPath, `ports` by containerPort, `status.conditions` by type,
//! `metadata.ownerReferences` by uid, `metadata.finalizers` as a set…), other lists are replaced, maps
//! are merged and `null` deletes a key. Directives: `$patch: delete|replace` in maps and list items,
//! `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` and `$retainKeys`. Merged lists
//! keep upstream's order: items named in the patch come first in patch order, the others keep their
//! place (`mergeSortedSlice`).
//!
//! Errors are answered as the patch handler's `interpretStrategicMergePatchError` answers them: the
//! library's format errors are 400, a list of lists is 422, the rest (a missing merge key, an unknown
//! `$patch`) are 500 with the library's message. Simplification: the patch metadata covers the fields
//! of the served core kinds listed in [`field_meta`]; a field upstream's Go types do not know is
//! merged like any other instead of being refused.

use serde_json::{Map, Value};

use super::gofmt;
use super::registry::ResourceType;
use super::status::{self, ApiError};

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";

/// How a field is patched (its Go struct tags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldMeta {
    /// The Go type of the field's value (or of a list's items).
    pub ty: &'static str,
    /// `patchStrategy: merge` (a list merged by `merge_key`, or a set of scalars when it has none).
    pub merge: bool,
    /// `patchMergeKey`.
    pub merge_key: &'static str,
}

const fn plain(ty: &'static str) -> FieldMeta {
    FieldMeta { ty, merge: false, merge_key: "" }
}

const fn merged(ty: &'static str, merge_key: &'static str) -> FieldMeta {
    FieldMeta { ty, merge: true, merge_key }
}

/// The patch metadata of `field` in Go type `ty` (types are named as upstream names them).
pub fn field_meta(ty: &str, field: &str) -> FieldMeta {
    match (ty, field) {
        (_, "metadata") if ty != "ObjectMeta" => plain("ObjectMeta"),
        ("ObjectMeta", "ownerReferences") => merged("OwnerReference", "uid"),
        ("ObjectMeta", "finalizers") => merged("string", ""),
        ("Pod", "spec") => plain("PodSpec"),
        ("Pod", "status") => plain("PodStatus"),
        ("PodSpec", "containers" | "initContainers" | "ephemeralContainers") => merged("Container", "name"),
        ("PodSpec", "volumes" | "imagePullSecrets" | "resourceClaims" | "schedulingGates") => {
            merged("Named", "name")
        }
        ("PodSpec", "hostAliases") => merged("HostAlias", "ip"),
        ("PodSpec", "topologySpreadConstraints") => merged("TopologySpreadConstraint", "topologyKey"),
        ("Container", "env") => merged("EnvVar", "name"),
        ("Container", "volumeMounts") => merged("VolumeMount", "mountPath"),
        ("Container", "ports") => merged("ContainerPort", "containerPort"),
        ("Container", "volumeDevices") => merged("VolumeDevice", "devicePath"),
        ("PodStatus", "conditions") => merged("PodCondition", "type"),
        ("PodStatus", "podIPs" | "hostIPs") => merged("PodIP", "ip"),
        ("ServiceAccount", "secrets") => merged("ObjectReference", "name"),
        _ => plain("Unknown"),
    }
}

/// The Go type at the root of a kind's objects.
fn root_type(rt: &ResourceType) -> &'static str {
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => "Pod",
        ("", "ServiceAccount") => "ServiceAccount",
        _ => "Object",
    }
}

/// A strategic merge patch failure, as the library reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SmpError {
    /// A malformed directive (`ErrBadPatchFormatFor…`): 400.
    BadFormat(&'static str),
    /// `ErrNoListOfLists`: 422.
    ListOfLists,
    /// Any other library error: 500 with its message.
    Other(String),
}

type Smp<T> = Result<T, SmpError>;

fn no_merge_key(map: &Map<String, Value>, key: &str) -> SmpError {
    let map = Value::Object(map.clone());
    SmpError::Other(format!("map: {} does not contain declared merge key: {key}", gofmt::plain(&map)))
}

fn bad_patch_type(directive: &Value, map: &Map<String, Value>) -> SmpError {
    let map = Value::Object(map.clone());
    SmpError::Other(format!("unknown patch type: {} in map: {}", gofmt::plain(directive), gofmt::plain(&map)))
}

impl SmpError {
    fn answer(self) -> ApiError {
        match self {
            SmpError::BadFormat(message) => status::bad_request(message),
            SmpError::ListOfLists => {
                let mut e = status::unknown_internal("lists of lists are not supported");
                e.code = 422;
                e.body["code"] = 422.into();
                e
            }
            SmpError::Other(message) => status::unknown_internal(message),
        }
    }
}

/// Applies a strategic merge `patch` to `target`, an object of kind `rt`.
pub fn apply(rt: &ResourceType, target: &Value, patch: &Value) -> Result<Value, ApiError> {
    let (Some(original), Some(patch)) = (target.as_object(), patch.as_object()) else {
        return Err(status::bad_request("a strategic merge patch must be a JSON object"));
    };
    merge_map(original.clone(), patch.clone(), root_type(rt)).map(Value::Object).map_err(SmpError::answer)
}

/// `mergeMap`: directives first, then every key of the patch (in key order; Go's is random).
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    ty: &str,
) -> Smp<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE).cloned() {
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE);
                Ok(patch)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(bad_patch_type(&directive, &patch)),
        };
    }
    apply_retain_keys(&mut original, &mut patch)?;
    apply_element_orders(&mut original, &mut patch, ty)?;
    for (key, value) in patch {
        merge_key_into(&mut original, key, value, ty)?;
    }
    Ok(original)
}

/// One key of a patch merged into `original`.
fn merge_key_into(original: &mut Map<String, Value>, key: String, value: Value, ty: &str) -> Smp<()> {
    let (key, delete_list) = match key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
        Some(rest) => match rest.strip_prefix('/') {
            Some(field) => (field.to_string(), true),
            None => return Err(SmpError::BadFormat("invalid patch format of primitive list")),
        },
        None => (key, false),
    };
    if value.is_null() {
        original.remove(&key);
        return Ok(());
    }
    let Some(current) = original.get(&key) else {
        original.insert(key, value);
        return Ok(());
    };
    let meta = field_meta(ty, &key);
    let merged = match (current, value) {
        (Value::Object(current), Value::Object(value)) => {
            Value::Object(merge_map(current.clone(), value, meta.ty)?)
        }
        (Value::Array(current), Value::Array(value)) if meta.merge => {
            Value::Array(merge_slice(current.clone(), value, meta, delete_list)?)
        }
        (_, value) => value,
    };
    original.insert(key, merged);
    Ok(())
}

/// `applyRetainKeysDirective`: keys of `original` missing from `$retainKeys` are cleared.
fn apply_retain_keys(original: &mut Map<String, Value>, patch: &mut Map<String, Value>) -> Smp<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else { return Ok(()) };
    let bad = SmpError::BadFormat("invalid patch format of retainKeys");
    let Some(retain) = retain.as_array() else { return Err(bad) };
    let kept = |k: &str| retain.iter().any(|r| r.as_str() == Some(k));
    let directive = |k: &str| k.starts_with(DELETE_FROM_PRIMITIVE_LIST) || k.starts_with(SET_ELEMENT_ORDER);
    if patch.iter().any(|(k, v)| !v.is_null() && !directive(k) && !kept(k)) {
        return Err(bad);
    }
    original.retain(|k, _| kept(k));
    Ok(())
}

/// `mergePatchIntoOriginal`: each `$setElementOrder/<field>` merges its list and orders the result.
fn apply_element_orders(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    ty: &str,
) -> Smp<()> {
    let keys: Vec<String> = patch.keys().filter(|k| k.starts_with(SET_ELEMENT_ORDER)).cloned().collect();
    let bad = || SmpError::BadFormat("invalid patch format of setElementOrder list");
    for key in keys {
        let order = patch.remove(&key).expect("listed");
        let Some(order) = order.as_array().cloned() else { return Err(bad()) };
        let Some(field) = key.strip_prefix(SET_ELEMENT_ORDER).and_then(|r| r.strip_prefix('/')) else {
            return Err(bad());
        };
        let meta = field_meta(ty, field);
        let current = original.get(field).and_then(Value::as_array).cloned();
        let patched = patch.remove(field);
        let patched = match patched {
            Some(Value::Array(items)) => Some(items),
            Some(_) => return Err(bad()),
            None => None,
        };
        check_order_list(patched.as_deref().unwrap_or(&[]), &order, meta.merge_key)?;
        let merged = match (&current, patched) {
            (Some(current), None) => current.clone(),
            (None, Some(patched)) => patched,
            (Some(current), Some(patched)) if meta.merge => {
                merge_slice(current.clone(), patched, meta, false)?
            }
            (Some(_), Some(patched)) => patched,
            (None, None) => continue,
        };
        let (in_order, server_only) = partition(&merged, &order, meta.merge_key)?;
        let server_order = current.unwrap_or_default();
        let both = normalize_element_order(in_order, server_only, &order, &server_order, meta.merge_key)?;
        original.insert(field.to_string(), Value::Array(both));
    }
    Ok(())
}

/// `validatePatchWithSetOrderList`: the patch list's items appear in the order list, in its order.
fn check_order_list(patch: &[Value], order: &[Value], merge_key: &str) -> Smp<()> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let kept: Vec<&Value> = patch.iter().filter(|v| !is_delete(v)).collect();
    let (mut p, mut o) = (0, 0);
    while p < kept.len() && o < order.len() {
        if kept[p].get(DIRECTIVE).is_some() {
            p += 1;
            continue;
        }
        if key_of(kept[p], merge_key)? == key_of(&order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < kept.len() {
        let text = |items: &[Value]| gofmt::plain(&Value::Array(items.to_vec()));
        return Err(SmpError::Other(format!(
            "The order in patch list:\n{}\n doesn't match {SET_ELEMENT_ORDER} list:\n{}\n",
            text(patch),
            text(order)
        )));
    }
    Ok(())
}

/// What identifies a list item: its merge key's value for maps, itself for scalars.
fn key_of<'a>(item: &'a Value, merge_key: &str) -> Smp<&'a Value> {
    if merge_key.is_empty() {
        return Ok(item);
    }
    let Some(map) = item.as_object() else {
        return Err(SmpError::Other(format!(
            "expected a map[string]interface {{}}, but received a {}",
            go_type(item)
        )));
    };
    map.get(merge_key).ok_or_else(|| no_merge_key(map, merge_key))
}

/// Go's type name of a decoded JSON value.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn is_delete(item: &Value) -> bool {
    item.get(DIRECTIVE).and_then(Value::as_str) == Some("delete")
}

/// `mergeSlice`: scalars are unioned (or deleted, for a `$deleteFromPrimitiveList`), maps merged by key.
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: FieldMeta,
    delete_list: bool,
) -> Smp<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let maps = element_kind(&original, &patch)?;
    if !maps {
        if delete_list {
            return Ok(original.into_iter().filter(|v| !patch.contains(v)).collect());
        }
        let merged = dedup_scalars(original.iter().chain(&patch).cloned().collect());
        let (in_patch, server_only) = partition(&merged, &patch, "")?;
        return normalize_element_order(in_patch, server_only, &patch, &original, "");
    }
    if meta.merge_key.is_empty() {
        return Err(SmpError::Other("cannot merge lists without merge key for type map".into()));
    }
    let (original, patch) = special_elements(original, patch, meta.merge_key)?;
    let merged = merge_by_key(original.clone(), &patch, meta)?;
    let (in_patch, server_only) = partition(&merged, &patch, meta.merge_key)?;
    normalize_element_order(in_patch, server_only, &patch, &original, meta.merge_key)
}

/// `sliceElementType`: whether the items are maps; all must share one type, and none may be a list.
fn element_kind(original: &[Value], patch: &[Value]) -> Smp<bool> {
    let mut kinds = original.iter().chain(patch).map(go_type);
    let first = kinds.next().expect("one list is not empty");
    if first == "[]interface {}" {
        return Err(SmpError::ListOfLists);
    }
    if kinds.any(|k| k != first) {
        let text = |l: &[Value]| gofmt::plain(&Value::Array(l.to_vec()));
        return Err(SmpError::Other(format!(
            "list element types are not identical: [{} {}]",
            text(original),
            text(patch)
        )));
    }
    Ok(first == "map[string]interface {}")
}

/// `deduplicateScalars`, including its way of moving the last item into a duplicate's place.
fn dedup_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut length = s.len() as isize - 1;
    let mut i = 0;
    while (i as isize) < length {
        let mut j = i + 1;
        while (j as isize) <= length {
            if s[i] == s[j] {
                s[j] = s[length as usize].clone();
                s.truncate(length as usize);
                length -= 1;
                continue;
            }
            j += 1;
        }
        i += 1;
    }
    s
}

/// `mergeSliceWithSpecialElements`: `$patch: delete` items remove their match from `original`; a
/// `$patch: replace` item makes the rest of the patch the whole list.
fn special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Smp<(Vec<Value>, Vec<Value>)> {
    let mut plain_items = Vec::new();
    let mut replace = false;
    for item in patch {
        let Some(map) = item.as_object() else { return Err(SmpError::Other("expected a map".into())) };
        let Some(directive) = map.get(DIRECTIVE) else {
            plain_items.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let key = map.get(merge_key).ok_or_else(|| no_merge_key(map, merge_key))?;
                original.retain(|o| o.get(merge_key) != Some(key));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(SmpError::Other("merging lists cannot yet be specified in the patch".into()));
            }
            _ => return Err(bad_patch_type(directive, map)),
        }
    }
    Ok(if replace { (plain_items, Vec::new()) } else { (original, plain_items) })
}

/// `mergeSliceWithoutSpecialElements`: each patch item merges into the original item with its key, or
/// is appended.
fn merge_by_key(mut original: Vec<Value>, patch: &[Value], meta: FieldMeta) -> Smp<Vec<Value>> {
    for item in patch {
        let map = item.as_object().expect("element_kind checked");
        let key = map.get(meta.merge_key).ok_or_else(|| no_merge_key(map, meta.merge_key))?;
        match original.iter().position(|o| o.get(meta.merge_key) == Some(key)) {
            Some(i) => {
                let current = original[i].as_object().cloned().unwrap_or_default();
                original[i] = Value::Object(merge_map(current, map.clone(), meta.ty)?);
            }
            None => original.push(item.clone()),
        }
    }
    Ok(original)
}

/// Splits `items` into those named in `by` and the rest, keeping their order.
fn partition(items: &[Value], by: &[Value], merge_key: &str) -> Smp<(Vec<Value>, Vec<Value>)> {
    let mut named = Vec::new();
    let mut rest = Vec::new();
    for item in items {
        let key = key_of(item, merge_key)?;
        let found = by.iter().any(|b| key_of(b, merge_key).ok() == Some(key));
        if found { named.push(item.clone()) } else { rest.push(item.clone()) }
    }
    Ok((named, rest))
}

/// Where `item` sits in `list`, by merge key (or by value, for scalars).
fn index(list: &[Value], item: &Value, merge_key: &str) -> Option<usize> {
    let wanted = if merge_key.is_empty() { Some(item) } else { item.get(merge_key) };
    list.iter().position(|v| (if merge_key.is_empty() { Some(v) } else { v.get(merge_key) }) == wanted)
}

/// `normalizeSliceOrder`: a stable sort by position in `order` (insertion sort, with upstream's
/// comparison that calls an item missing from `order` smaller); `$patch: delete` items go last.
fn normalize_slice_order(items: Vec<Value>, order: &[Value], merge_key: &str) -> Smp<Vec<Value>> {
    for item in items.iter().chain(order) {
        key_of(item, merge_key)?;
    }
    let (mut sorted, deletes): (Vec<Value>, Vec<Value>) =
        items.into_iter().partition(|i| merge_key.is_empty() || !is_delete(i));
    let less = |a: &Value, b: &Value| match (index(order, a, merge_key), index(order, b, merge_key)) {
        (Some(ia), Some(ib)) => ia < ib,
        _ => true,
    };
    for i in 1..sorted.len() {
        let mut j = i;
        while j > 0 && less(&sorted[j], &sorted[j - 1]) {
            sorted.swap(j, j - 1);
            j -= 1;
        }
    }
    sorted.extend(deletes);
    Ok(sorted)
}

/// `normalizeElementOrder`: patch items in patch order, server-only items in server order, then
/// merged by server position (`mergeSortedSlice`): a patch item the server did not have comes before
/// the server items still to place.
fn normalize_element_order(
    in_patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
) -> Smp<Vec<Value>> {
    let right = normalize_slice_order(in_patch, patch_order, merge_key)?;
    let left = normalize_slice_order(server_only, server_order, merge_key)?;
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut l, mut r) = (left.into_iter().peekable(), right.into_iter().peekable());
    loop {
        match (l.peek(), r.peek()) {
            (None, None) => break,
            (Some(_), None) => out.push(l.next().expect("peeked")),
            (None, Some(_)) => out.push(r.next().expect("peeked")),
            (Some(a), Some(b)) => {
                let before = match (index(server_order, a, merge_key), index(server_order, b, merge_key)) {
                    (Some(ia), Some(ib)) => ia < ib,
                    _ => false,
                };
                out.push(if before { l.next() } else { r.next() }.expect("peeked"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::apiserver::fixtures;

    fn pods() -> ResourceType {
        fixtures::resource("pods")
    }

    fn patch(target: Value, p: Value) -> Result<Value, ApiError> {
        apply(&pods(), &target, &p)
    }

    fn names(v: &Value) -> Vec<&str> {
        v.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect()
    }

    #[test]
    fn containers_merge_by_name_and_new_ones_come_first() {
        let pod = json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}});
        let out = patch(pod.clone(), json!({"spec": {"containers": [{"name": "b", "image": "2"}]}})).unwrap();
        assert_eq!(out["spec"]["containers"][1], json!({"name": "b", "image": "2"}));
        let out = patch(pod, json!({"spec": {"containers": [{"name": "c", "image": "3"}]}})).unwrap();
        assert_eq!(names(&out["spec"]["containers"]), ["c", "a", "b"]);
    }

    #[test]
    fn env_volume_mounts_and_conditions_merge_by_their_keys() {
        let pod = json!({"spec": {"containers": [{"name": "a", "image": "i",
                "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "1"}],
                "volumeMounts": [{"name": "v", "mountPath": "/a"}]}]},
            "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]}});
        let out = patch(
            pod,
            json!({
            "spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}],
                "volumeMounts": [{"name": "w", "mountPath": "/a"}]}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
        )
        .unwrap();
        let c = &out["spec"]["containers"][0];
        assert_eq!(c["image"], "i");
        assert_eq!(c["env"], json!([{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]));
        assert_eq!(c["volumeMounts"], json!([{"name": "w", "mountPath": "/a"}]));
        assert_eq!(out["status"]["conditions"][0], json!({"type": "Ready", "status": "True"}));
        assert_eq!(out["status"]["conditions"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn directives_delete_and_replace_items_and_maps() {
        let pod = json!({"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}],
                "finalizers": ["x", "y"], "labels": {"a": "1", "b": "2"}},
            "spec": {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}]}});
        let out = patch(
            pod.clone(),
            json!({"metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": "1"}],
            "$deleteFromPrimitiveList/finalizers": ["x"],
            "labels": {"$patch": "replace", "c": "3"}},
            "spec": {"volumes": [{"$patch": "replace"}, {"name": "z", "emptyDir": {}}]}}),
        )
        .unwrap();
        assert_eq!(out["metadata"]["ownerReferences"], json!([{"uid": "2", "name": "b"}]));
        assert_eq!(out["metadata"]["finalizers"], json!(["y"]));
        assert_eq!(out["metadata"]["labels"], json!({"c": "3"}));
        assert_eq!(names(&out["spec"]["volumes"]), ["z"]);
        let out = patch(pod, json!({"metadata": {"finalizers": ["z", "x"]}, "spec": {"$patch": "delete"}}))
            .unwrap();
        assert_eq!(
            out["metadata"]["finalizers"],
            json!(["z", "x", "y"]),
            "patch items first, in patch order"
        );
        assert_eq!(out["spec"], json!({}));
    }

    #[test]
    fn set_element_order_orders_the_merged_list() {
        let pod = json!({"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}});
        let out = patch(
            pod,
            json!({"spec": {
            "$setElementOrder/containers": [{"name": "b"}, {"name": "c"}, {"name": "a"}],
            "containers": [{"name": "c", "image": "3"}]}}),
        )
        .unwrap();
        assert_eq!(names(&out["spec"]["containers"]), ["b", "c", "a"]);
    }

    #[test]
    fn retain_keys_clears_what_it_does_not_name() {
        let pod = json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}});
        let out = patch(pod, json!({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}]}})).unwrap();
        assert_eq!(out["spec"]["volumes"], json!([{"name": "v", "hostPath": {"path": "/x"}}]));
    }

    #[test]
    fn other_lists_are_replaced_and_nulls_delete() {
        let pod = json!({"spec": {"tolerations": [{"key": "a"}], "nodeSelector": {"a": "1", "b": "2"}}});
        let out = patch(pod, json!({"spec": {"tolerations": [{"key": "b"}], "nodeSelector": {"a": null}}}))
            .unwrap();
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "b"}]));
        assert_eq!(out["spec"]["nodeSelector"], json!({"b": "2"}));
    }

    #[test]
    fn malformed_patches_get_the_answers_upstream_gives() {
        let pod = json!({"spec": {"containers": [{"name": "a", "image": "1"}]}});
        let err = patch(pod.clone(), json!({"spec": {"containers": [{"image": "2"}]}})).unwrap_err();
        assert_eq!(
            (err.code, err.message()),
            (500, "map: map[image:2] does not contain declared merge key: name")
        );
        assert!(err.body.get("reason").is_none());
        let err = patch(pod.clone(), json!({"spec": {"$patch": "explode"}})).unwrap_err();
        assert_eq!(
            (err.code, err.message()),
            (500, "unknown patch type: explode in map: map[$patch:explode]")
        );
        let err = patch(pod.clone(), json!({"spec": {"$retainKeys": "x"}})).unwrap_err();
        assert_eq!((err.code, err.message()), (400, "invalid patch format of retainKeys"));
        let err =
            patch(json!({"metadata": {"finalizers": [["a"]]}}), json!({"metadata": {"finalizers": [["b"]]}}))
                .unwrap_err();
        assert_eq!(err.code, 422);
    }

    #[test]
    fn scalar_sets_deduplicate_as_upstream_does() {
        let v = |items: &[&str]| items.iter().map(|s| json!(s)).collect::<Vec<_>>();
        assert_eq!(dedup_scalars(v(&["a", "b", "a", "c"])), v(&["a", "b", "c"]));
        assert_eq!(dedup_scalars(v(&["a", "a", "b", "c"])), v(&["a", "c", "b"]));
    }
}
