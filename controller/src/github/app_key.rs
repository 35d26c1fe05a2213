//! [`AppKey`]: a GitHub App's private key, read from the PEM GitHub hands out (PKCS#1, `BEGIN RSA
//! PRIVATE KEY`) or its PKCS#8 form (`BEGIN PRIVATE KEY`), and the RS256 signature the app's JWTs
//! carry (RSASSA-PKCS1-v1_5 with SHA-256, RFC 7518 §3.3).
//!
//! Signing uses *ring*, which rustls already builds for TLS (no cmake, no aws-lc). PKCS#1 v1.5
//! signatures are deterministic: the random source ring asks for only blinds the computation, so
//! the same key, claims and clock give the same JWT every time.

use std::fmt;

use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;

/// Why a GitHub App private key cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppKeyError {
    /// The text holds no PEM private key.
    #[error(
        "github_app_private_key is not a PEM private key (expected BEGIN RSA PRIVATE KEY or BEGIN PRIVATE KEY): {0}"
    )]
    NotPem(String),
    /// A PEM key that is not an RSA key ring accepts (GitHub App keys are RSA, 2048 bits or more).
    #[error("github_app_private_key is not a usable RSA key: {0}")]
    Rejected(String),
    /// Signing failed (ring reports no detail).
    #[error("cannot sign the GitHub App JWT with github_app_private_key")]
    Signing,
}

/// A parsed GitHub App private key.
pub struct AppKey {
    pair: RsaKeyPair,
}

impl fmt::Debug for AppKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AppKey(<{} bit RSA key, redacted>)", self.pair.public().modulus_len() * 8)
    }
}

impl AppKey {
    /// Parses a PEM private key, PKCS#1 or PKCS#8. Surrounding whitespace (a secret value often ends
    /// in a newline) is ignored.
    pub fn from_pem(pem: &str) -> Result<AppKey, AppKeyError> {
        let der = PrivateKeyDer::from_pem_slice(pem.trim().as_bytes())
            .map_err(|e| AppKeyError::NotPem(e.to_string()))?;
        let pair = match &der {
            PrivateKeyDer::Pkcs1(key) => RsaKeyPair::from_der(key.secret_pkcs1_der()),
            PrivateKeyDer::Pkcs8(key) => RsaKeyPair::from_pkcs8(key.secret_pkcs8_der()),
            PrivateKeyDer::Sec1(_) => {
                return Err(AppKeyError::Rejected("an EC key; GitHub App keys are RSA".into()));
            }
            _ => return Err(AppKeyError::Rejected("an unknown key type".into())),
        };
        let pair = pair.map_err(|rejected| AppKeyError::Rejected(rejected.to_string()))?;
        Ok(AppKey { pair })
    }

    /// The RS256 signature of `message`.
    pub fn sign_rs256(&self, message: &[u8]) -> Result<Vec<u8>, AppKeyError> {
        let mut signature = vec![0; self.pair.public().modulus_len()];
        let rng = ring::rand::SystemRandom::new();
        self.pair.sign(&RSA_PKCS1_SHA256, &rng, message, &mut signature).map_err(|_| AppKeyError::Signing)?;
        Ok(signature)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The test-only App key of `fixtures/github/` (PKCS#1, 2048 bits).
    pub(crate) const FIXTURE_KEY: &str = include_str!("../../../fixtures/github/app-private-key.pem");

    #[test]
    fn a_pkcs1_key_signs_deterministically() {
        let key = AppKey::from_pem(FIXTURE_KEY).unwrap();
        let first = key.sign_rs256(b"header.claims").unwrap();
        assert_eq!(first.len(), 256, "a 2048-bit key signs 256 bytes");
        assert_eq!(first, key.sign_rs256(b"header.claims").unwrap());
        assert_ne!(first, key.sign_rs256(b"header.other").unwrap());
        assert!(!format!("{key:?}").contains("MII"), "the key never prints");
    }

    #[test]
    fn a_pkcs8_key_signs_like_its_pkcs1_form() {
        let pkcs1 = AppKey::from_pem(FIXTURE_KEY).unwrap();
        let PrivateKeyDer::Pkcs1(der) = PrivateKeyDer::from_pem_slice(FIXTURE_KEY.as_bytes()).unwrap() else {
            panic!("the fixture is PKCS#1");
        };
        let pkcs8 = pkcs8_pem(der.secret_pkcs1_der());
        let pkcs8 = AppKey::from_pem(&pkcs8).unwrap();
        assert_eq!(pkcs1.sign_rs256(b"m").unwrap(), pkcs8.sign_rs256(b"m").unwrap());
    }

    #[test]
    fn text_that_is_not_an_rsa_pem_key_is_a_clear_error() {
        assert!(matches!(AppKey::from_pem("not a key"), Err(AppKeyError::NotPem(_))));
        let garbage = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n";
        let err = AppKey::from_pem(garbage).unwrap_err();
        assert!(matches!(err, AppKeyError::Rejected(_)), "{err}");
        assert!(err.to_string().contains("github_app_private_key"), "{err}");
    }

    /// Wraps a PKCS#1 key in PKCS#8 (RFC 5208: version 0, rsaEncryption, the key as an OCTET STRING).
    fn pkcs8_pem(pkcs1: &[u8]) -> String {
        use base64::Engine as _;
        let algorithm =
            [0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00];
        let mut inner = vec![0x02, 0x01, 0x00];
        inner.extend_from_slice(&algorithm);
        inner.extend(der_header(0x04, pkcs1.len()));
        inner.extend_from_slice(pkcs1);
        let mut der = der_header(0x30, inner.len());
        der.extend(inner);
        let body = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> =
            body.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).expect("base64 is ASCII")).collect();
        format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n"))
    }

    fn der_header(tag: u8, len: usize) -> Vec<u8> {
        let len = u16::try_from(len).expect("short test keys");
        let [high, low] = len.to_be_bytes();
        vec![tag, 0x82, high, low]
    }
}
