//! [`Body`]: a request's bytes and their JSON, parsed once. The log's body hash, the fault layer's
//! precondition check, a create's requested name and the write itself (decode or patch) all read the
//! same JSON; each used to parse the bytes again.

use serde_json::Value;

use crate::compact_json as compact;
use crate::fnv::Fnv1a64;

/// A request body: its bytes, and the JSON they hold when they hold JSON.
#[derive(Debug, Clone, Copy)]
pub struct Body<'a> {
    /// The bytes as sent.
    pub bytes: &'a [u8],
    /// Their JSON (`None`: empty, or not JSON; a reader that needs JSON parses `bytes` again for the
    /// error to report).
    pub json: Option<&'a Value>,
}

impl<'a> Body<'a> {
    /// Bytes parsed elsewhere (`json` is what they parsed to, if anything).
    pub fn new(bytes: &'a [u8], json: Option<&'a Value>) -> Self {
        Body { bytes, json }
    }

    /// The JSON, or the parse error of the bytes.
    pub fn parsed(&self) -> Result<std::borrow::Cow<'a, Value>, serde_json::Error> {
        match self.json {
            Some(json) => Ok(std::borrow::Cow::Borrowed(json)),
            None => serde_json::from_slice(self.bytes).map(std::borrow::Cow::Owned),
        }
    }

    /// FNV-1a of the body with `metadata.resourceVersion` left out (the compact JSON of the rest, or
    /// the bytes when they are not JSON): two runs whose global version counters differ still log the
    /// same hash when they send the same change (an optimistic-lock patch carries the version it saw).
    pub fn hash_without_resource_version(&self) -> u64 {
        match self.json {
            Some(json) => {
                let mut hash = Fnv1a64::default();
                write_without_resource_version(&mut hash, json);
                hash.finish()
            }
            None => crate::fnv::fnv1a64(self.bytes),
        }
    }
}

/// A request body a write may take its JSON from, once the log's hash and the fault layer's checks
/// have read it ([`Body`]): a create's object is the body's JSON itself, and a merge patch's values
/// move into the patched object instead of being copied.
#[derive(Debug)]
pub struct WriteBody<'a> {
    /// The bytes as sent.
    pub bytes: &'a [u8],
    /// Their JSON, if they hold JSON and it has not been taken.
    pub json: Option<Value>,
}

impl WriteBody<'_> {
    /// The body, read.
    pub fn view(&self) -> Body<'_> {
        Body::new(self.bytes, self.json.as_ref())
    }

    /// The JSON to change in place, or the parse error of the bytes.
    pub fn json_mut(&mut self) -> Result<&mut Value, serde_json::Error> {
        if self.json.is_none() {
            self.json = Some(serde_json::from_slice(self.bytes)?);
        }
        Ok(self.json.as_mut().expect("just parsed"))
    }

    /// The JSON, taken, or the parse error of the bytes.
    pub fn take(&mut self) -> Result<Value, serde_json::Error> {
        match self.json.take() {
            Some(json) => Ok(json),
            None => serde_json::from_slice(self.bytes),
        }
    }
}

/// Writes the compact JSON of `value` as if `metadata.resourceVersion` were not there.
fn write_without_resource_version(out: &mut Fnv1a64, value: &Value) {
    let Value::Object(object) = value else { return compact::write_value(out, value) };
    compact::write_object(out, object.iter(), |out, key, value| match value {
        Value::Object(meta) if key == "metadata" => {
            let kept = meta.iter().filter(|(key, _)| *key != "resourceVersion");
            compact::write_object(out, kept, |out, _, value| compact::write_value(out, value));
        }
        _ => compact::write_value(out, value),
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The hash as it was computed before: the body parsed, its resourceVersion removed, serialized.
    fn removed_and_hashed(mut value: Value) -> u64 {
        if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
        }
        crate::fnv::fnv1a64(value.to_string().as_bytes())
    }

    #[test]
    fn the_hash_leaves_out_the_resource_version_as_removing_it_did() {
        let bodies = [
            json!({"metadata": {"name": "a", "resourceVersion": "7", "uid": "u"}, "spec": {"x": [1, "two"]}}),
            json!({"metadata": {"resourceVersion": "7"}}),
            json!({"metadata": "not a map", "status": null}),
            json!({"spec": {"metadata": {"resourceVersion": "nested stays"}}}),
            json!([1, 2, 3]),
            json!("text"),
        ];
        for body in bodies {
            let bytes = serde_json::to_vec(&body).unwrap();
            let parsed: Value = serde_json::from_slice(&bytes).unwrap();
            let hashed = Body::new(&bytes, Some(&parsed)).hash_without_resource_version();
            assert_eq!(hashed, removed_and_hashed(body.clone()), "{body}");
        }
        assert_eq!(Body::new(b"{nope", None).hash_without_resource_version(), crate::fnv::fnv1a64(b"{nope"));
        assert!(Body::new(b"{nope", None).parsed().is_err());
    }
}
