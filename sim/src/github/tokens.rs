//! Tokens, ids and runner configs the fake hands out. They are derived from the seed and a counter
//! with FNV-1a, so they are reproducible and draw nothing from any random stream (extra token requests
//! therefore never perturb assignment order).

use std::io::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::{Deserialize, Serialize};

use crate::fnv::Fnv1a64;
use crate::seed::Seed;

/// The FNV-1a hashes of `{seed}/{kind}/{n}` and of the same text followed by `/2`, written straight into
/// the hash.
fn digest(seed: Seed, kind: &str, n: u64) -> (u64, u64) {
    let mut hash = Fnv1a64::default();
    write!(hash, "{seed}/{kind}/{n}").expect("hashing cannot fail");
    let first = hash.finish();
    hash.write(b"/2");
    (first, hash.finish())
}

/// An opaque token: `<prefix>_<32 hex>`.
pub(crate) fn opaque(seed: Seed, prefix: &str, n: u64) -> String {
    let (a, b) = digest(seed, prefix, n);
    format!("{prefix}_{a:016x}{b:016x}")
}

/// A UUID-shaped id (version 4 layout).
pub(crate) fn uuid(seed: Seed, kind: &str, n: u64) -> String {
    let (a, b) = digest(seed, kind, n);
    let digit = |i: usize| {
        let word = if i < 16 { a } else { b };
        char::from_digit(((word >> (4 * (15 - i % 16))) & 0xf) as u32, 16).expect("a nibble")
    };
    // The 32 hex digits of both hashes, version and variant digits written over the 13th and 17th.
    let mut id = String::with_capacity(36);
    for at in 0..32 {
        if matches!(at, 8 | 12 | 16 | 20) {
            id.push('-');
        }
        id.push(match at {
            12 => '4',
            16 => '8',
            _ => digit(at),
        });
    }
    id
}

/// An unsigned JWT whose `exp` claim is `exp_seconds`, as the admin-token exchange returns.
pub(crate) fn admin_jwt(seed: Seed, n: u64, exp_seconds: i64) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let claims = serde_json::json!({ "exp": exp_seconds, "jti": opaque(seed, "admin", n) });
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{payload}.")
}

/// What a runner process starts with: the fake's `encodedJITConfig` (and the legacy runner's
/// `.runner`/`.credentials` stand-in).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunnerCredential {
    pub runner_id: i64,
    pub runner_name: String,
    pub scale_set_id: i64,
    pub secret: String,
}

impl RunnerCredential {
    /// Base64 of the JSON form.
    pub(super) fn encode(&self) -> String {
        STANDARD.encode(serde_json::to_vec(self).expect("a credential always serialises"))
    }

    /// The credential in `config`, if it is one this fake could have issued.
    pub(super) fn decode(config: &str) -> Option<RunnerCredential> {
        let bytes = STANDARD.decode(config.trim()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_hashes_the_seed_kind_and_counter_text() {
        use crate::fnv::fnv1a64;
        let text = format!("{}/job/42", Seed(7));
        let expected = (fnv1a64(text.as_bytes()), fnv1a64(format!("{text}/2").as_bytes()));
        assert_eq!(digest(Seed(7), "job", 42), expected);
    }

    #[test]
    fn tokens_are_reproducible_and_distinct_per_counter_and_seed() {
        assert_eq!(opaque(Seed(1), "qt", 3), opaque(Seed(1), "qt", 3));
        assert_ne!(opaque(Seed(1), "qt", 3), opaque(Seed(1), "qt", 4));
        assert_ne!(opaque(Seed(1), "qt", 3), opaque(Seed(2), "qt", 3));
        let id = uuid(Seed(1), "session", 1);
        assert_eq!(id.len(), 36);
        assert_eq!(id.matches('-').count(), 4);
    }

    #[test]
    fn uuids_are_both_hashes_in_hex_with_version_and_variant_digits() {
        for (seed, kind, n) in [(1, "session", 1), (7, "job", 42), (u64::MAX, "activity", 9_999)] {
            let (a, b) = digest(Seed(seed), kind, n);
            let hex = format!("{a:016x}{b:016x}");
            let expected = format!(
                "{}-{}-4{}-8{}-{}",
                &hex[0..8],
                &hex[8..12],
                &hex[13..16],
                &hex[17..20],
                &hex[20..32]
            );
            assert_eq!(uuid(Seed(seed), kind, n), expected);
        }
    }

    #[test]
    fn admin_tokens_are_jwts_carrying_their_expiry_in_the_exp_claim() {
        let token = admin_jwt(Seed(5), 1, 1_767_229_200);
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3, "header.payload.signature");
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["exp"], 1_767_229_200);
    }

    #[test]
    fn runner_credentials_round_trip_and_garbage_is_rejected() {
        let cred =
            RunnerCredential { runner_id: 4, runner_name: "r".into(), scale_set_id: 2, secret: "s".into() };
        assert_eq!(RunnerCredential::decode(&cred.encode()), Some(cred));
        assert_eq!(RunnerCredential::decode("not base64!"), None);
        assert_eq!(RunnerCredential::decode(&STANDARD.encode("{}")), None);
    }
}
