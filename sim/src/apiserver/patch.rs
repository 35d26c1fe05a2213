//! Patch application: JSON merge patch (RFC 7386), JSON patch (RFC 6902), strategic merge patch for
//! built-in kinds (see [`strategic`]), and a clear refusal of server-side apply.

use std::borrow::Cow;

use serde_json::Value;

use super::body::WriteBody;
use super::merge;
use super::registry::ResourceType;
use super::status::{self, ApiError};
use super::strategic;

/// A patch's content type, as the request header names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
}

impl PatchType {
    /// Parses a `Content-Type` header for PATCH, refusing what the server does not take.
    pub fn from_content_type(content_type: &str, rt: &ResourceType) -> Result<PatchType, ApiError> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media {
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/strategic-merge-patch+json" if rt.is_builtin() => Ok(PatchType::StrategicMerge),
            "application/strategic-merge-patch+json" => Err(status::strategic_merge_on_custom(media)),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
                Err(status::apply_unsupported())
            }
            other => Err(status::unsupported_media_type(other)),
        }
    }

    /// The name in traces.
    pub fn as_str(self) -> &'static str {
        match self {
            PatchType::Merge => "merge",
            PatchType::Json => "json",
            PatchType::StrategicMerge => "strategic",
        }
    }
}

/// Applies `patch` to `target`, an object of kind `rt`, returning the patched object. A merge patch
/// gives its values up to the result (see [`merge::merged_within_taking`]).
pub fn apply(
    rt: &ResourceType,
    patch_type: PatchType,
    target: Target<'_>,
    patch: &mut WriteBody<'_>,
) -> Result<Value, ApiError> {
    let body = patch
        .json_mut()
        .map_err(|e| status::bad_request(format!("couldn't decode the patch as JSON: {e}")))?;
    let out = match patch_type {
        PatchType::Merge => {
            if !body.is_object() {
                return Err(status::bad_request("a merge patch must be a JSON object"));
            }
            let Target { object, fields } = target;
            merge::merged_within_taking(object, body, |k| fields.is_none_or(|f| f.contains(&k)))
        }
        PatchType::StrategicMerge => strategic::apply(rt, &target.object(), body)?,
        PatchType::Json => {
            let ops: json_patch::Patch = serde::Deserialize::deserialize(&*body)
                .map_err(|e| status::bad_request(format!("the JSON patch is malformed: {e}")))?;
            let mut out = target.object().into_owned();
            json_patch::patch(&mut out, &ops).map_err(|e| json_patch_error(&e))?;
            out
        }
    };
    if !out.is_object() {
        return Err(status::bad_request("the patched object is not a JSON object"));
    }
    Ok(out)
}

/// What a patch applies to: an object, or only the named top-level fields of it (the rest left out of
/// the result).
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The object.
    pub object: &'a Value,
    /// The top-level fields patched and kept; `None`: all of them.
    pub fields: Option<&'a [&'a str]>,
}

impl<'a> Target<'a> {
    /// The whole object.
    pub fn whole(object: &'a Value) -> Self {
        Target { object, fields: None }
    }

    /// The object as the patch sees it: borrowed when whole, the kept fields copied otherwise.
    fn object(self) -> Cow<'a, Value> {
        match (self.fields, self.object.as_object()) {
            (Some(fields), Some(map)) => {
                let kept = map.iter().filter(|(k, _)| fields.contains(&k.as_str()));
                Cow::Owned(Value::Object(kept.map(|(k, v)| (k.clone(), v.clone())).collect()))
            }
            _ => Cow::Borrowed(self.object),
        }
    }
}

/// Any failure to apply a decoded JSON patch (a failed `test` included) is a 422, as kube-apiserver's
/// `applyJSPatch` answers it.
fn json_patch_error(e: &json_patch::PatchError) -> ApiError {
    let mut err = status::bad_request(e.to_string());
    err.code = 422;
    err.body["code"] = 422.into();
    err.body["reason"] = "Invalid".into();
    err
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::apiserver::fixtures;

    #[test]
    fn content_types_map_to_patch_kinds_or_refusals() {
        let r = fixtures::registry();
        let pods = r.get(r.find_plural("pods").unwrap());
        let er = r.get(r.find_plural("ephemeralrunners").unwrap());
        assert_eq!(PatchType::from_content_type("application/merge-patch+json", er), Ok(PatchType::Merge));
        assert_eq!(
            PatchType::from_content_type("application/strategic-merge-patch+json", pods),
            Ok(PatchType::StrategicMerge)
        );
        assert_eq!(
            PatchType::from_content_type("application/strategic-merge-patch+json", er).unwrap_err().code,
            415
        );
        let apply = PatchType::from_content_type("application/apply-patch+yaml", er).unwrap_err();
        assert!(apply.message().contains("server-side apply"));
        assert_eq!(PatchType::from_content_type("text/plain", er).unwrap_err().code, 415);
    }

    #[test]
    fn merge_and_json_patches_apply() {
        let er = fixtures::resource("ephemeralrunners");
        let apply = |t, target: &Value, bytes: &[u8]| {
            apply(&er, t, Target::whole(target), &mut WriteBody { bytes, json: None })
        };
        let target = json!({"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"replicas": 1}});
        let merged =
            apply(PatchType::Merge, &target, br#"{"metadata":{"labels":{"a":null,"b":"2"}}}"#).unwrap();
        assert_eq!(merged["metadata"]["labels"], json!({"b": "2"}));
        let patched =
            apply(PatchType::Json, &target, br#"[{"op":"replace","path":"/spec/replicas","value":3}]"#)
                .unwrap();
        assert_eq!(patched["spec"]["replicas"], 3);
        let failed = apply(PatchType::Json, &target, br#"[{"op":"test","path":"/spec/replicas","value":9}]"#);
        assert_eq!(failed.unwrap_err().code, 422);
        let missing = apply(PatchType::Json, &target, br#"[{"op":"remove","path":"/spec/nope"}]"#);
        assert_eq!(missing.unwrap_err().code, 422);
        assert_eq!(apply(PatchType::Merge, &target, b"[1]").unwrap_err().code, 400);
    }
}
