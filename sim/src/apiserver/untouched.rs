//! [`Untouched`]: the fields a patch leaves as they were stored. A JSON merge patch changes only the
//! fields it names, level by level, and so does a strategic merge patch without directives (`$patch`,
//! `$retainKeys`, `$setElementOrder/…`, `$deleteFromPrimitiveList/…`) at that level; every other
//! field of the patched object is the stored one. Pruning and validation, which every stored custom
//! resource already went through against the same schema, can leave those fields alone.

use serde_json::{Map, Value};

use super::body::Body;
use super::patch::PatchType;

/// What a patch names at one level of the object (`None`: any field of that level may have changed).
#[derive(Debug, Clone, Copy, Default)]
pub struct Untouched<'a>(Option<&'a Map<String, Value>>);

impl<'a> Untouched<'a> {
    /// Nothing is known to be untouched (a PUT, a JSON patch).
    pub const NOTHING: Untouched<'static> = Untouched(None);

    /// The top level of a patch of `patch_type` with body `body`.
    pub fn of(patch_type: PatchType, body: Body<'a>) -> Self {
        match patch_type {
            PatchType::Merge | PatchType::StrategicMerge => Untouched::level(body.json),
            PatchType::Json => Untouched::NOTHING,
        }
    }

    fn level(named: Option<&'a Value>) -> Self {
        let directive = |named: &&Map<String, Value>| named.keys().any(|k| k.starts_with('$'));
        Untouched(named.and_then(Value::as_object).filter(|named| !directive(named)))
    }

    /// Whether anything is known to be left as stored at this level.
    pub fn is_known(&self) -> bool {
        self.0.is_some()
    }

    /// Whether the patch leaves `field` of this level as stored.
    pub fn leaves(&self, field: &str) -> bool {
        self.0.is_some_and(|named| !named.contains_key(field))
    }

    /// The level below `field`: what the patch names inside it (nothing known when it names `field`
    /// as anything but an object, or not at all).
    pub fn within(&self, field: &str) -> Untouched<'a> {
        Untouched::level(self.0.and_then(|named| named.get(field)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn untouched(patch_type: PatchType, patch: &Value) -> Untouched<'_> {
        Untouched::of(patch_type, Body::new(b"", Some(patch)))
    }

    #[test]
    fn a_merge_patch_leaves_what_it_does_not_name() {
        let patch = json!({"metadata": {"labels": {"a": "b"}}, "status": {"phase": "Running"}});
        let top = untouched(PatchType::Merge, &patch);
        assert!(top.leaves("spec") && !top.leaves("status") && !top.leaves("metadata"));
        assert!(top.within("status").leaves("conditions") && !top.within("status").leaves("phase"));
        assert!(!top.within("spec").leaves("x"), "an unnamed field's inside is not described");
    }

    #[test]
    fn json_patches_and_directives_leave_nothing_known() {
        let patch = json!({"spec": {"$retainKeys": ["a"], "a": 1}, "status": {}});
        assert!(!untouched(PatchType::Json, &patch).leaves("spec"));
        let top = untouched(PatchType::StrategicMerge, &patch);
        assert!(top.leaves("metadata") && !top.within("spec").leaves("b"));
        let directive = json!({"$patch": "replace", "spec": {}});
        assert!(!untouched(PatchType::StrategicMerge, &directive).leaves("status"));
    }
}
