//! [`Wire`]: an object's JSON, encoded once and shared. kube-apiserver's watch cache encodes an event
//! once per encoding and hands the same bytes to every watcher; a committed change here carries its
//! object's encoding the same way, made by the first watch that sends it.

use std::sync::OnceLock;

use bytes::Bytes;
use serde_json::Value;

/// The JSON of one object, encoded on first use.
#[derive(Debug, Clone, Default)]
pub struct Wire(OnceLock<Bytes>);

impl Wire {
    /// The JSON of `object` (which must be the object this encoding belongs to), encoded the first time.
    pub fn of(&self, object: &Value) -> Bytes {
        self.0.get_or_init(|| Bytes::from(crate::compact_json::to_vec(object))).clone()
    }
}

/// One line of a watch stream: `{"type":TYPE,"object":OBJECT}` and a newline, in the order
/// kube-apiserver writes a `metav1.WatchEvent` (its Go struct's field order: type, then object). A
/// client that decodes the event as a tagged enum reads the object in one pass only in this order.
pub fn watch_line(kind: &str, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + kind.len() + 24);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_watch_line_is_the_serialized_event_and_the_encoding_is_made_once() {
        let object = json!({"metadata": {"name": "a\"b", "labels": {"z": "1", "a": "2"}}, "spec": [1, 2.5]});
        let wire = Wire::default();
        let first = wire.of(&object);
        assert_eq!(first.as_ptr(), wire.of(&json!({"other": true})).as_ptr(), "encoded once, shared");
        let line = watch_line("MODIFIED", &first);
        let expected =
            format!("{{\"type\":\"MODIFIED\",\"object\":{}}}\n", serde_json::to_string(&object).unwrap());
        assert_eq!(std::str::from_utf8(&line).unwrap(), expected);
        let decoded: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(decoded, json!({"type": "MODIFIED", "object": object}));
    }
}
