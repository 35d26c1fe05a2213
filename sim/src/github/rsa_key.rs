//! The RSA public key inside an SPKI PEM (`BEGIN PUBLIC KEY`), read with just enough DER: the key a
//! GitHub App's JWTs are verified against, and what a config's key is checked with.

use rustls_pki_types::SubjectPublicKeyInfoDer;
use rustls_pki_types::pem::PemObject;

/// The RSA public key (PKCS#1 `RSAPublicKey` DER) inside an SPKI PEM, or why there is none.
pub(crate) fn rsa_public_key(pem: &str) -> Result<Vec<u8>, String> {
    let spki = SubjectPublicKeyInfoDer::from_pem_slice(pem.trim().as_bytes())
        .map_err(|e| format!("not a PEM public key (BEGIN PUBLIC KEY): {e}"))?;
    let (outer, _) = der_element(spki.as_ref(), 0x30).ok_or("the public key is not a DER sequence")?;
    let (_algorithm, rest) = der_element(outer, 0x30).ok_or("the public key has no algorithm")?;
    let (bits, _) = der_element(rest, 0x03).ok_or("the public key has no bit string")?;
    match bits.split_first() {
        Some((0, key)) => Ok(key.to_vec()),
        _ => Err("the public key's bit string is malformed".into()),
    }
}

/// The content of the DER element with `tag` at the start of `input`, and what follows it.
fn der_element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = input.split_first()?;
    if first != tag {
        return None;
    }
    let (&len_byte, rest) = rest.split_first()?;
    let (len, rest) = if len_byte < 0x80 {
        (usize::from(len_byte), rest)
    } else {
        let count = usize::from(len_byte & 0x7f);
        let (bytes, rest) = (rest.get(..count)?, rest.get(count..)?);
        (bytes.iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b)), rest)
    };
    Some((rest.get(..len)?, rest.get(len..)?))
}
