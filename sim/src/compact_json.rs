//! Compact JSON of a [`Value`], byte for byte what `serde_json::to_vec` writes (tested), without
//! serde's per-token indirection: a string with nothing to escape, which is nearly every key and value
//! of an object, is copied whole instead of byte by byte through serde_json's escape table. The fake
//! API server encodes every stored version once through it for its answer and its watchers and hashes
//! every request body through it; the kubelet writes its status patches with it.

use std::io::Write;

use serde_json::Value;

/// The compact JSON of `value`.
pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    write_value(&mut out, value);
    out
}

/// Writes the compact JSON of `value` to `out`, a writer that cannot fail (a buffer or a hash).
pub fn write_value<W: Write>(out: &mut W, value: &Value) {
    match value {
        Value::Null => put(out, b"null"),
        Value::Bool(true) => put(out, b"true"),
        Value::Bool(false) => put(out, b"false"),
        Value::Number(n) => serde_json::to_writer(&mut *out, n).expect("the writer cannot fail"),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            put(out, b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    put(out, b",");
                }
                write_value(out, item);
            }
            put(out, b"]");
        }
        Value::Object(map) => write_object(out, map.iter(), |out, _, value| write_value(out, value)),
    }
}

/// Writes an object of `entries` (in the order given) to `out`, each value as `write_entry` writes it
/// (given the key and the value).
pub fn write_object<'a, W: Write>(
    out: &mut W,
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
    mut write_entry: impl FnMut(&mut W, &str, &'a Value),
) {
    put(out, b"{");
    for (i, (key, value)) in entries.enumerate() {
        if i > 0 {
            put(out, b",");
        }
        write_str(out, key);
        put(out, b":");
        write_entry(out, key, value);
    }
    put(out, b"}");
}

/// Writes `s` as a JSON string: whole when nothing in it needs escaping (no control character, quote or
/// backslash; serde_json escapes nothing else), else through serde_json.
pub fn write_str<W: Write>(out: &mut W, s: &str) {
    if !needs_escape(s.as_bytes()) {
        put(out, b"\"");
        put(out, s.as_bytes());
        put(out, b"\"");
    } else {
        serde_json::to_writer(&mut *out, s).expect("the writer cannot fail");
    }
}

/// Whether `bytes` hold a byte serde_json escapes: eight bytes at a time (a byte below 0x20, or equal to
/// `"` or `\`, found with the word-at-a-time tests for a byte below n and a zero byte), the rest one table
/// load a byte without a branch (faster than comparisons, or an early exit, on short strings).
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let hits = below(word, 0x20)
            | below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1);
        if hits != 0 {
            return true;
        }
    }
    words.remainder().iter().fold(0, |escapes, &b| escapes | ESCAPED[usize::from(b)]) != 0
}

/// 1 for each byte serde_json escapes in a string: control characters, the quote, the backslash.
static ESCAPED: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = 1;
        byte += 1;
    }
    table[b'"' as usize] = 1;
    table[b'\\' as usize] = 1;
    table
};

fn put<W: Write>(out: &mut W, bytes: &[u8]) {
    out.write_all(bytes).expect("the writer cannot fail");
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use serde_json::{Map, json};

    use super::*;

    /// A random value: every JSON type, numbers of every kind, and strings drawn from an alphabet
    /// with every escape serde_json writes, multi-byte characters and DEL.
    fn random_value(rng: &mut ChaCha8Rng, depth: u32) -> Value {
        const ALPHABET: &[&str] = &[
            "a", "Z", "0", "/", "\"", "\\", "\n", "\t", "\r", "\u{8}", "\u{c}", "\u{1}", "\u{1f}", "\u{7f}",
            "é", "€", "😀", " ", "~",
        ];
        let text = |rng: &mut ChaCha8Rng| {
            let len = rng.random_range(0..12);
            (0..len).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())]).collect::<String>()
        };
        let kind = if depth == 0 { rng.random_range(0..7) } else { rng.random_range(0..9) };
        match kind {
            0 => Value::Null,
            1 => Value::Bool(rng.random()),
            2 => json!(rng.random::<u64>()),
            3 => json!(rng.random::<i64>()),
            4 => json!(rng.random::<f64>() * 1e6 - 5e5),
            5 => json!(rng.random_range(-3..3)),
            6 => Value::String(text(rng)),
            7 => Value::Array((0..rng.random_range(0..5)).map(|_| random_value(rng, depth - 1)).collect()),
            _ => Value::Object(
                (0..rng.random_range(0..6))
                    .map(|_| (text(rng), random_value(rng, depth - 1)))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    #[test]
    fn a_byte_to_escape_is_found_at_every_place_of_a_word_and_its_tail() {
        for byte in 0..=u8::MAX {
            for at in 0..19 {
                let mut bytes = vec![b'a'; 19];
                bytes[at] = byte;
                assert_eq!(needs_escape(&bytes), ESCAPED[usize::from(byte)] == 1, "byte {byte:#x} at {at}");
            }
        }
        assert!(!needs_escape("é€😀 ~\u{7f}plain text of some length".as_bytes()));
    }

    #[test]
    fn writes_what_serde_json_writes() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..5_000 {
            let value = random_value(&mut rng, 4);
            assert_eq!(to_vec(&value), serde_json::to_vec(&value).unwrap(), "{value}");
        }
        let fixed = json!({"": [], "e": {}, "f": 0.1, "g": -0.0, "h": 1e300, "i": u64::MAX, "j": i64::MIN});
        assert_eq!(to_vec(&fixed), serde_json::to_vec(&fixed).unwrap());
    }
}
