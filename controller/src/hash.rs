//! The fixed hashes ARC writes into names, labels and annotations: FNV-1a (32- and 64-bit) and
//! Kubernetes' "safe encoding" of a number into consonants and digits.
//!
//! ARC (`hash/fnv.go`, `hash/hash.go`) computes `fnv32a` over its input, prints the sum in decimal,
//! and maps each character through apimachinery's `rand.SafeEncodeString` alphabet. We do the same
//! arithmetic, so [`fnv_hash_string`] (the listener-name suffix) matches ARC byte for byte. For
//! structured inputs ARC feeds the hasher a `go-spew` dump of Go structs, which has no Rust
//! equivalent; we feed it the canonical JSON of the value instead (struct fields in declaration
//! order, maps as `BTreeMap`, so the bytes are stable across runs and machines). The values differ
//! from ARC's, but they are compared only with values this controller computed, never with ARC's.
//!
//! One deliberate departure: ARC's `FNVHashStringObjects` resets the hasher before each object, so
//! only its *last* argument reaches the sum. [`ObjectsHasher`] hashes every part, which is what
//! ARC-MODEL §2.4 and §7 describe and what #1087's commit message intends.
//!
//! Never `DefaultHasher`: its output may change between Rust releases.

use std::io;

use serde::Serialize;

const FNV32_OFFSET_BASIS: u32 = 0x811c_9dc5;
const FNV32_PRIME: u32 = 0x0100_0193;
const FNV64_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV64_PRIME: u64 = 0x0000_0100_0000_01b3;

/// apimachinery's `util/rand` alphabet: no vowels, no look-alike digits, so no words and no typos.
const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// How many characters of [`fnv_hash_string`] ARC keeps in a listener name.
const LISTENER_SUFFIX_LEN: usize = 8;

/// Why a value could not be hashed: its JSON serialization failed (for example a map with
/// non-string keys, or a custom `Serialize` that returns an error).
#[derive(Debug, thiserror::Error)]
#[error("cannot hash value: JSON serialization failed: {0}")]
pub struct HashError(#[from] serde_json::Error);

/// An incremental FNV-1a 32-bit hasher (Go's `fnv.New32a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a32(u32);

impl Default for Fnv1a32 {
    fn default() -> Self {
        Fnv1a32(FNV32_OFFSET_BASIS)
    }
}

impl Fnv1a32 {
    /// Feeds `bytes` into the hash.
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u32::from(b);
            self.0 = self.0.wrapping_mul(FNV32_PRIME);
        }
    }

    /// The hash of everything fed so far.
    pub fn sum(&self) -> u32 {
        self.0
    }
}

impl io::Write for Fnv1a32 {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The FNV-1a 32-bit hash of `bytes`.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut h = Fnv1a32::default();
    h.update(bytes);
    h.sum()
}

/// The FNV-1a 64-bit hash of `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV64_OFFSET_BASIS, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV64_PRIME))
}

/// apimachinery's `rand.SafeEncodeString`: each character is replaced by the alphabet entry at its
/// code point modulo the alphabet size. The output has as many characters as the input.
pub fn safe_encode(text: &str) -> String {
    text.chars().map(|c| char::from(SAFE_ALPHABET[(c as usize) % SAFE_ALPHABET.len()])).collect()
}

/// Safe-encoded decimal rendering of a 32-bit sum, as ARC prints every hash it stores.
fn encode_sum(sum: u32) -> String {
    safe_encode(&sum.to_string())
}

/// ARC's `hash.FNVHashString`: FNV-1a 32 of `text`, in decimal, safe-encoded.
pub fn fnv_hash_string(text: &str) -> String {
    encode_sum(fnv1a32(text.as_bytes()))
}

/// ARC's `ComputeTemplateHash`, over the canonical JSON of `value`: the string stored in
/// `actions.github.com/integrity-hash` annotations.
pub fn template_hash<T: Serialize + ?Sized>(value: &T) -> Result<String, HashError> {
    let mut hasher = ObjectsHasher::default();
    hasher.add(value)?;
    Ok(hasher.finish())
}

/// ARC's `FNVHashStringObjects` (without its reset quirk, see the module docs): one hash over
/// several values, each written as canonical JSON followed by a newline separator.
#[derive(Debug, Default, Clone)]
pub struct ObjectsHasher {
    hasher: Fnv1a32,
    parts: usize,
}

impl ObjectsHasher {
    /// Adds `value` as the next part.
    pub fn add<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<&mut Self, HashError> {
        if self.parts > 0 {
            self.hasher.update(b"\n");
        }
        serde_json::to_writer(&mut self.hasher, value)?;
        self.parts += 1;
        Ok(self)
    }

    /// The safe-encoded hash of all parts added so far.
    pub fn finish(&self) -> String {
        encode_sum(self.hasher.sum())
    }
}

/// The name of an ARS's AutoscalingListener: `<ars>-<first 8 chars of FNV(ns@group@url)>-listener`
/// (ARC's `scaleSetListenerName`). The suffix is ARC's safe-encoded decimal hash, so the name is the
/// one ARC gives the same scale set (for example `arc-runner-set-754b578d-listener`).
pub fn listener_name(ars_name: &str, ars_namespace: &str, runner_group: &str, config_url: &str) -> String {
    let mut suffix = fnv_hash_string(&format!("{ars_namespace}@{runner_group}@{config_url}"));
    suffix.truncate(LISTENER_SUFFIX_LEN);
    format!("{ars_name}-{suffix}-listener")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn fnv32_matches_the_published_test_vectors() {
        assert_eq!(fnv1a32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a32(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn fnv64_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn safe_encoding_maps_digits_like_apimachinery() {
        // '0' is 48, 48 % 27 = 21 -> '4'; '6' is 54, 54 % 27 = 0 -> 'b'.
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
    }

    #[test]
    fn fnv_hash_string_is_the_safe_encoded_decimal_sum() {
        // fnv1a32("a") = 3826002220
        assert_eq!(fnv_hash_string("a"), safe_encode("3826002220"));
        assert_eq!(fnv_hash_string("a"), "7d6b446664");
    }

    #[test]
    fn listener_name_takes_eight_characters_of_the_namespace_group_url_hash() {
        let name = listener_name("arc", "ns", "default", "https://github.com/org");
        let full = fnv_hash_string("ns@default@https://github.com/org");
        assert_eq!(name, format!("arc-{}-listener", &full[..8]));
        assert_ne!(name, listener_name("arc", "other-ns", "default", "https://github.com/org"));
    }

    #[test]
    fn template_hash_is_stable_and_sensitive_to_content() {
        let a: BTreeMap<&str, &str> = [("x", "1"), ("y", "2")].into();
        let b: BTreeMap<&str, &str> = [("y", "2"), ("x", "1")].into();
        let c: BTreeMap<&str, &str> = [("x", "1"), ("y", "3")].into();
        assert_eq!(template_hash(&a).unwrap(), template_hash(&b).unwrap());
        assert_ne!(template_hash(&a).unwrap(), template_hash(&c).unwrap());
    }

    #[test]
    fn objects_hasher_covers_every_part_not_only_the_last() {
        let hash = |first: &str, last: &str| {
            let mut h = ObjectsHasher::default();
            h.add(first).unwrap().add(last).unwrap();
            h.finish()
        };
        assert_ne!(hash("a", "z"), hash("b", "z"));
        assert_ne!(hash("a", "z"), hash("a", "y"));
    }

    #[test]
    fn objects_hasher_separates_parts() {
        let mut joined = ObjectsHasher::default();
        joined.add("ab").unwrap();
        let mut split = ObjectsHasher::default();
        split.add("a").unwrap().add("b").unwrap();
        assert_ne!(joined.finish(), split.finish());
    }

    #[test]
    fn a_value_that_cannot_be_serialized_is_an_error() {
        let bad: BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        assert!(template_hash(&bad).is_err());
    }
}
