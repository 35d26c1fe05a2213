//! The JSON merge patch (RFC 7386) that turns one document into another: what controller-runtime's
//! `client.MergeFrom(original)` sends.
//!
//! Objects are compared key by key: a key gone from the new document becomes `null`, a new or changed
//! value is sent, an unchanged one is left out, and nested objects recurse. Arrays and scalars are sent
//! whole when they differ. Two equal objects give `{}`.
//!
//! Merge patches cannot say "set this member to null", so a member whose new value is `null` reads as a
//! removal. Kubernetes objects serialised by kube leave unset fields out instead of writing `null`, so
//! this costs nothing in practice.

use serde_json::{Map, Value};

/// The merge patch that, applied to `original`, gives `modified`.
///
/// When either side is not an object the patch is `modified` itself (RFC 7386 replaces the target
/// wholesale then).
pub(crate) fn diff(original: &Value, modified: &Value) -> Value {
    match (original, modified) {
        (Value::Object(original), Value::Object(modified)) => Value::Object(diff_objects(original, modified)),
        _ => modified.clone(),
    }
}

fn diff_objects(original: &Map<String, Value>, modified: &Map<String, Value>) -> Map<String, Value> {
    let mut patch = Map::new();
    for key in original.keys() {
        if !modified.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    for (key, new_value) in modified {
        match (original.get(key), new_value) {
            (Some(old_value), _) if old_value == new_value => {}
            (Some(Value::Object(old_object)), Value::Object(new_object)) => {
                patch.insert(key.clone(), Value::Object(diff_objects(old_object, new_object)));
            }
            _ => {
                patch.insert(key.clone(), new_value.clone());
            }
        }
    }
    patch
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A tiny deterministic generator (xorshift64*), so the property cases are the same on every run.
    struct Cases(u64);

    impl Cases {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        /// A random JSON value; object members are never `null` (merge patches cannot express that).
        fn value(&mut self, depth: u32) -> Value {
            let kinds = if depth == 0 { 4 } else { 6 };
            match self.below(kinds) {
                0 => json!(self.below(5)),
                1 => json!(["a", "b", "c"][usize::try_from(self.below(3)).unwrap_or(0)]),
                2 => json!(self.below(2) == 0),
                3 => Value::Array((0..self.below(3)).map(|_| json!(self.below(3))).collect()),
                _ => self.object(depth - 1),
            }
        }

        fn object(&mut self, depth: u32) -> Value {
            let mut map = Map::new();
            for key in ["metadata", "spec", "status", "x", "y"] {
                if self.below(3) > 0 {
                    map.insert(key.to_string(), self.value(depth));
                }
            }
            Value::Object(map)
        }

        /// `value` with some members removed, replaced or added, recursively.
        fn mutate(&mut self, value: &Value, depth: u32) -> Value {
            let Value::Object(map) = value else {
                return if self.below(2) == 0 { value.clone() } else { self.value(depth) };
            };
            let mut out = Map::new();
            for (key, member) in map {
                match self.below(4) {
                    0 => {}
                    1 => {
                        out.insert(key.clone(), self.value(depth));
                    }
                    _ => {
                        out.insert(key.clone(), self.mutate(member, depth.saturating_sub(1)));
                    }
                }
            }
            if self.below(3) == 0 {
                out.insert(format!("new{}", self.below(3)), self.value(depth));
            }
            Value::Object(out)
        }
    }

    #[test]
    fn equal_objects_give_an_empty_patch() {
        let doc = json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"replicas": 2}});
        assert_eq!(diff(&doc, &doc.clone()), json!({}));
    }

    #[test]
    fn removed_keys_become_null_and_unchanged_keys_are_left_out() {
        let original = json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "spec": {"n": 1}});
        let modified = json!({"metadata": {"name": "a", "labels": {"x": "1", "z": "3"}}, "spec": {"n": 1}});
        assert_eq!(diff(&original, &modified), json!({"metadata": {"labels": {"y": null, "z": "3"}}}));
    }

    #[test]
    fn arrays_and_scalars_are_replaced_whole() {
        let original = json!({"finalizers": ["a", "b"], "phase": "Pending", "spec": {"x": 1}});
        let modified = json!({"finalizers": ["a"], "phase": "Running", "spec": 7});
        assert_eq!(diff(&original, &modified), json!({"finalizers": ["a"], "phase": "Running", "spec": 7}));
        assert_eq!(diff(&json!([1]), &json!({"a": 1})), json!({"a": 1}));
    }

    #[test]
    fn applying_the_patch_to_the_original_gives_the_modified_document() {
        let mut cases = Cases(0x9E37_79B9_7F4A_7C15);
        for case in 0..2000 {
            let original = cases.object(3);
            let modified = cases.mutate(&original, 3);
            let patch = diff(&original, &modified);
            let mut patched = original.clone();
            json_patch::merge(&mut patched, &patch);
            assert_eq!(patched, modified, "case {case}: patch {patch}");
            if original == modified {
                assert_eq!(patch, json!({}), "case {case}");
            }
        }
    }

    #[test]
    fn the_patch_mentions_only_what_changed() {
        let mut cases = Cases(42);
        for case in 0..500 {
            let original = cases.object(2);
            let modified = cases.mutate(&original, 2);
            let Value::Object(patch) = diff(&original, &modified) else {
                panic!("case {case}: not an object")
            };
            for (key, value) in &patch {
                assert_ne!(original.get(key), Some(value), "case {case}: unchanged {key} sent");
            }
        }
    }
}
