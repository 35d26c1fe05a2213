//! A JSON merge patch (RFC 7386) applied by reference: the patched document is built from the target
//! and the patch without first copying the whole target, so a subtree the patch replaces (an array, a
//! scalar, a removed key) is never copied, and the patch's own values move into the result. The same
//! result as `json_patch::merge` on a clone (tested).

use serde_json::{Map, Value};

/// `target`, of whose top-level fields only those `kept` keeps, with `patch` merged in, taking the
/// patch's values instead of copying them: each value the result holds from `patch` is moved out of
/// it. `patch` keeps every key at every level (what it named can still be read, as
/// [`Untouched`](super::untouched::Untouched) reads it), with `null` for each value it gave up.
pub fn merged_within_taking(target: &Value, patch: &mut Value, kept: impl Fn(&str) -> bool) -> Value {
    let Value::Object(patch) = patch else { return std::mem::take(patch) };
    let empty = Map::new();
    let target = target.as_object().unwrap_or(&empty);
    // Both maps iterate in key order: walked together, each key is compared once and the result is
    // built from its entries in order.
    let mut kept_target = target.iter().filter(|(k, _)| kept(k)).peekable();
    let mut entries = Vec::with_capacity(target.len() + patch.len());
    for (key, value) in patch.iter_mut() {
        while let Some((k, v)) = kept_target.next_if(|(k, _)| *k < key) {
            entries.push((k.clone(), v.clone()));
        }
        let below = kept_target.next_if(|(k, _)| *k == key).map_or(&Value::Null, |(_, v)| v);
        if !value.is_null() {
            entries.push((key.clone(), merged_taking(below, value)));
        }
    }
    entries.extend(kept_target.map(|(k, v)| (k.clone(), v.clone())));
    Value::Object(entries.into_iter().collect())
}

fn merged_taking(target: &Value, patch: &mut Value) -> Value {
    merged_within_taking(target, patch, |_| true)
}

/// `target` with a copy of `patch` merged in (for tests that keep their patch).
#[cfg(test)]
pub fn merged(target: &Value, patch: &Value) -> Value {
    merged_taking(target, &mut patch.clone())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn both(target: Value, patch: Value) {
        let mut expected = target.clone();
        json_patch::merge(&mut expected, &patch);
        let mut taken = patch.clone();
        assert_eq!(merged_within_taking(&target, &mut taken, |_| true), expected, "{target} + {patch}");
        assert_eq!(keys(&taken), keys(&patch), "the patch keeps its keys: {patch}");
    }

    /// Every object key of `value`, at every level, with its path.
    fn keys(value: &Value) -> Vec<String> {
        match value {
            Value::Object(map) => map
                .iter()
                .flat_map(|(k, v)| {
                    std::iter::once(k.clone()).chain(keys(v).into_iter().map(move |p| format!("{k}/{p}")))
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn merging_within_some_fields_is_merging_into_those_fields_alone() {
        let target = json!({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"c": 1}, "status": {"a": 1}});
        let patch = json!({"metadata": {"uid": "u"}, "spec": {"d": 2}, "status": {"a": null, "b": 2}});
        let within = merged_within_taking(&target, &mut patch.clone(), |k| k != "spec");
        let view = json!({"kind": "Pod", "metadata": {"name": "p"}, "status": {"a": 1}});
        assert_eq!(within, merged(&view, &patch));
    }

    /// A random document of objects (keys from a small alphabet, so target and patch share some),
    /// arrays, strings and, in a patch, nulls.
    fn random(rng: &mut rand_chacha::ChaCha8Rng, depth: u32, nulls: bool) -> Value {
        use rand::Rng;
        match rng.random_range(0..if depth == 0 { 3 } else { 6 }) {
            0 if nulls => Value::Null,
            0 | 1 => json!(rng.random_range(0..3)),
            2 => json!(["x"]),
            _ => {
                let len = rng.random_range(0..6);
                let keys = ["a", "b", "ba", "c", "metadata", "spec", "status", "z"];
                (0..len)
                    .map(|_| {
                        (keys[rng.random_range(0..keys.len())].to_string(), random(rng, depth - 1, nulls))
                    })
                    .collect::<Map<String, Value>>()
                    .into()
            }
        }
    }

    #[test]
    fn random_merges_are_rfc_7386_merges_of_the_kept_fields() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let kept = |k: &str| k != "spec" && k != "b";
        for _ in 0..5_000 {
            let (target, patch) = (random(&mut rng, 3, false), random(&mut rng, 3, true));
            both(target.clone(), patch.clone());
            let Value::Object(_) = patch else { continue };
            let view = match &target {
                Value::Object(map) => Value::Object(
                    map.iter().filter(|(k, _)| kept(k)).map(|(k, v)| (k.clone(), v.clone())).collect(),
                ),
                _ => json!({}),
            };
            let mut expected = view;
            json_patch::merge(&mut expected, &patch);
            assert_eq!(
                merged_within_taking(&target, &mut patch.clone(), kept),
                expected,
                "{target} + {patch}"
            );
        }
    }

    #[test]
    fn merges_as_rfc_7386_does() {
        both(json!({"a": "b"}), json!({"a": "c"}));
        both(json!({"a": "b"}), json!({"b": "c"}));
        both(json!({"a": "b"}), json!({"a": null}));
        both(json!({"a": "b", "b": "c"}), json!({"a": null}));
        both(json!({"a": ["b"]}), json!({"a": "c"}));
        both(json!({"a": "c"}), json!({"a": ["b"]}));
        both(json!({"a": {"b": "c"}}), json!({"a": {"b": "d", "c": null}}));
        both(json!({"a": [{"b": "c"}]}), json!({"a": [1]}));
        both(json!(["a", "b"]), json!(["c", "d"]));
        both(json!({"a": "b"}), json!(["c"]));
        both(json!({"a": "foo"}), json!(null));
        both(json!({"a": "foo"}), json!("bar"));
        both(json!({"e": null}), json!({"a": 1}));
        both(json!([1, 2]), json!({"a": "b", "c": null}));
        both(json!({}), json!({"a": {"bb": {"ccc": null}}}));
        both(
            json!({"metadata": {"name": "p", "labels": {"x": "1"}}, "spec": {"c": [1]}, "status": {"phase": "Pending"}}),
            json!({"metadata": {"labels": {"x": null, "y": "2"}}, "status": {"phase": "Running", "conditions": []}}),
        );
    }
}
