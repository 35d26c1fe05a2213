//! [`At`]: `Value::pointer` without its cost. serde_json unescapes every token of a JSON pointer with two
//! `str::replace` calls (two allocations a token) before it looks it up; the fakes and the judges read
//! fixed paths such as `/metadata/name` millions of times a sweep. `at` walks the same path and
//! allocates only for a token that holds an escape (`~0`, `~1`), which it leaves to `pointer`.

use serde_json::Value;

/// Reading a value at a JSON pointer.
pub trait At {
    /// The value at `pointer` (RFC 6901), exactly as [`Value::pointer`] finds it.
    fn at(&self, pointer: &str) -> Option<&Value>;
}

impl At for Value {
    fn at(&self, pointer: &str) -> Option<&Value> {
        if pointer.contains('~') {
            return self.pointer(pointer);
        }
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').try_fold(self, |target, token| match target {
            Value::Object(map) => map.get(token),
            Value::Array(list) => index(token).and_then(|i| list.get(i)),
            _ => None,
        })
    }
}

/// An array index as JSON pointers write it: digits, no sign, no leading zero.
fn index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn at_finds_what_pointer_finds() {
        let doc = json!({
            "metadata": {"name": "x", "labels": {"a/b": "1", "m~n": "2", "": "3"}},
            "items": [{"k": 1}, {"k": 2}],
            "0": "zero",
        });
        let paths = [
            "",
            "/",
            "/metadata/name",
            "/metadata/labels/a~1b",
            "/metadata/labels/m~0n",
            "/metadata/labels/",
            "/items/1/k",
            "/items/01/k",
            "/items/+1",
            "/items/2",
            "/items/-",
            "/0",
            "/metadata/name/x",
            "metadata",
            "/missing",
            "//",
        ];
        for path in paths {
            assert_eq!(doc.at(path), doc.pointer(path), "{path:?}");
        }
    }
}
