//! Pruning: what a structural schema drops from a custom resource before it is validated and stored.
//!
//! As kube-apiserver's decoder does (`apiextensions-apiserver/pkg/apiserver/schema/pruning` and
//! `defaulting/prunenulls.go`): every field the schema does not declare is removed, except under
//! `x-kubernetes-preserve-unknown-fields`; `apiVersion`, `kind` and `metadata` at the root (and in
//! embedded resources) are never pruned; a `null` in a map whose schema is not `nullable` is removed.
//! [`prune`] returns the paths of the unknown fields it dropped (`spec.foo`, `spec.list[0].bar`),
//! sorted, for the `fieldValidation` warnings and strict errors. Simplification: the fake applies no
//! `default`s, so a `null` for a field with a default is removed rather than defaulted.

use std::fmt::Write as _;

use serde_json::Value;

use super::schema::{Additional, Schema};
use super::untouched::Untouched;

/// The type and object metadata fields kept at a resource root.
const META_FIELDS: &[&str] = &["apiVersion", "kind", "metadata"];

/// Prunes a whole custom resource in place; returns the unknown field paths it removed, sorted.
pub fn prune(schema: &Schema, object: &mut Value) -> Vec<String> {
    prune_patched(schema, object, Untouched::NOTHING)
}

/// [`prune`] of a patched object, leaving unwalked every field the patch left as stored: every stored
/// custom resource was pruned against the same schema when it was written, and pruning a pruned value
/// changes nothing (the same result, tested).
pub fn prune_patched(schema: &Schema, object: &mut Value, untouched: Untouched<'_>) -> Vec<String> {
    let mut pruner = Pruner { unknown: Vec::new(), path: String::new(), at_root: true };
    pruner.prune(object, Some(schema), untouched);
    prune_nulls(object, Some(schema), untouched);
    pruner.unknown.sort();
    pruner.unknown
}

struct Pruner {
    unknown: Vec<String>,
    /// The path of the node being visited, in the form unknown fields are reported in.
    path: String,
    /// Until the root is visited: the root is pruned as an embedded resource.
    at_root: bool,
}

impl Pruner {
    fn with_key<R>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> R) -> R {
        let len = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(key);
        let out = f(self);
        self.path.truncate(len);
        out
    }

    fn with_index<R>(&mut self, index: usize, f: impl FnOnce(&mut Self) -> R) -> R {
        let len = self.path.len();
        write!(self.path, "[{index}]").expect("writing to a String cannot fail");
        let out = f(self);
        self.path.truncate(len);
        out
    }

    fn record(&mut self, key: &str) {
        self.with_key(key, |p| p.unknown.push(p.path.clone()));
    }

    fn prune(&mut self, x: &mut Value, s: Option<&Schema>, untouched: Untouched<'_>) {
        let embedded = std::mem::take(&mut self.at_root) || s.is_some_and(|s| s.embedded_resource);
        if let Some(s) = s.filter(|s| s.preserve_unknown_fields) {
            return self.skip_prune(x, s, embedded, untouched);
        }
        match x {
            Value::Object(map) => {
                let Some(s) = s else {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    keys.iter().for_each(|k| self.record(k));
                    map.clear();
                    return;
                };
                let mut unknown = Vec::new();
                for (key, value) in map.iter_mut() {
                    if (embedded && META_FIELDS.contains(&key.as_str())) || untouched.leaves(key) {
                        continue;
                    }
                    match known_child(s, key) {
                        Some(child) => self.with_key(key, |p| p.prune(value, child, untouched.within(key))),
                        None => {
                            if !META_FIELDS.contains(&key.as_str()) || !self.path.is_empty() {
                                self.record(key);
                            }
                            unknown.push(key.clone());
                        }
                    }
                }
                unknown.iter().for_each(|key| {
                    map.remove(key);
                });
            }
            Value::Array(items) => {
                let item_schema = s.and_then(|s| s.items.as_deref());
                for (i, item) in items.iter_mut().enumerate() {
                    self.with_index(i, |p| p.prune(item, item_schema, Untouched::NOTHING));
                }
            }
            _ => {}
        }
    }

    /// Under preserve-unknown-fields: declared fields are still pruned inside, unknown ones are kept.
    fn skip_prune(&mut self, x: &mut Value, s: &Schema, embedded: bool, untouched: Untouched<'_>) {
        match x {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    if (embedded && META_FIELDS.contains(&key.as_str())) || untouched.leaves(key) {
                        continue;
                    }
                    if let Some(child) = known_child(s, key) {
                        self.with_key(key, |p| p.prune(value, child, untouched.within(key)));
                    }
                }
            }
            Value::Array(items) => {
                let Some(item_schema) = s.items.as_deref() else { return };
                for (i, item) in items.iter_mut().enumerate() {
                    let embedded = item_schema.embedded_resource;
                    self.with_index(i, |p| p.skip_prune(item, item_schema, embedded, Untouched::NOTHING));
                }
            }
            _ => {}
        }
    }
}

/// How a key of an object with schema `s` is pruned: `None` when it is unknown, `Some(schema)` when it
/// is declared (`Some(None)`: a map value under `additionalProperties: true`, whose own fields are all
/// unknown, as kube-apiserver's pruning treats a boolean `additionalProperties`).
fn known_child<'s>(s: &'s Schema, key: &str) -> Option<Option<&'s Schema>> {
    if let Some(prop) = s.properties.get(key) {
        return Some(Some(prop));
    }
    match &s.additional_properties {
        Some(Additional::Schema(values)) => Some(Some(values)),
        Some(Additional::Any) => Some(None),
        None => None,
    }
}

/// Removes `null` map values whose schema is not nullable (`PruneNonNullableNullsWithoutDefaults`).
fn prune_nulls(x: &mut Value, s: Option<&Schema>, untouched: Untouched<'_>) {
    match x {
        Value::Object(map) => {
            map.retain(|key, value| {
                if untouched.leaves(key) {
                    return true;
                }
                let child = s.and_then(|s| s.child(key));
                let drop = value.is_null() && child.is_some_and(|c| !c.nullable);
                if !drop {
                    prune_nulls(value, child, untouched.within(key));
                }
                !drop
            });
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items.as_deref());
            items.iter_mut().for_each(|item| prune_nulls(item, item_schema, Untouched::NOTHING));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::apiserver::body::Body;
    use crate::apiserver::patch::PatchType;

    fn schema() -> Schema {
        Schema::parse(
            &json!({"type": "object", "properties": {
                "metadata": {"type": "object"},
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "items": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                    "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "properties": {"typed": {"type": "object", "properties": {"x": {"type": "string"}}}}},
                    "opt": {"type": "string", "nullable": true},
                    "nested": {"type": "object", "properties": {}}
                }}}}),
            "s",
        )
        .unwrap()
    }

    #[test]
    fn pruning_all_but_the_stored_fields_of_a_pruned_object_is_pruning_it_all() {
        let mut stored = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a", "odd": 1},
            "spec": {"replicas": 1, "foo": 2, "items": [{"a": "x", "b": 1}], "opt": null},
            "status": {"phase": "P"}});
        prune(&schema(), &mut stored);
        let changes = [
            json!({"metadata": {"name": "a", "odd": 2}}),
            json!({"spec": {"replicas": 2, "bar": 3, "nested": {"deep": 1}}}),
            json!({"extra": {"x": 1}, "status": {"phase": "Q", "odd": true}}),
            json!({"spec": {"replicas": null, "labels": {"k": "v"}}}),
            json!({"spec": {"items": [{"a": "y", "c": 1}], "raw": {"typed": {"x": "1", "y": 2}}}}),
            json!({}),
        ];
        for change in changes {
            let mut object = stored.clone();
            json_patch::merge(&mut object, &change);
            let mut whole = object.clone();
            let unknown = prune(&schema(), &mut whole);
            let untouched = Untouched::of(PatchType::Merge, Body::new(b"", Some(&change)));
            assert_eq!(prune_patched(&schema(), &mut object, untouched), unknown, "{change}");
            assert_eq!(object, whole, "{change}");
        }
    }

    #[test]
    fn unknown_fields_are_dropped_and_reported_sorted() {
        let mut obj = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a", "odd": 1},
            "spec": {"replicas": 1, "foo": 2, "labels": {"k": "v"}, "items": [{"a": "x", "b": 1}],
                "nested": {"metadata": {"x": 1}}},
            "extra": true});
        let unknown = prune(&schema(), &mut obj);
        assert_eq!(unknown, ["extra", "spec.foo", "spec.items[0].b", "spec.nested.metadata"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a", "odd": 1},
            "spec": {"replicas": 1, "labels": {"k": "v"}, "items": [{"a": "x"}], "nested": {}}})
        );
    }

    #[test]
    fn preserved_subtrees_keep_unknown_fields_but_prune_declared_ones() {
        let mut obj = json!({"spec": {"raw": {"any": {"deep": 1}, "typed": {"x": "1", "y": 2}}}});
        assert_eq!(prune(&schema(), &mut obj), ["spec.raw.typed.y"]);
        assert_eq!(obj["spec"]["raw"], json!({"any": {"deep": 1}, "typed": {"x": "1"}}));
    }

    #[test]
    fn non_nullable_nulls_are_removed_nullable_ones_kept() {
        let mut obj = json!({"spec": {"replicas": null, "opt": null, "labels": {"k": null}}});
        assert!(prune(&schema(), &mut obj).is_empty());
        assert_eq!(obj, json!({"spec": {"opt": null, "labels": {}}}));
    }
}
