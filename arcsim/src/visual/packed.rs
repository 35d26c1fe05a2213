//! The page's data, packed: the timeline's JSON gzipped and written in base64, so the page of a
//! ten-minute run (tens of thousands of events, megabytes of labels and bodies that repeat the same
//! names) is a file of hundreds of KiB rather than of several MiB. `page.js` unpacks it in the
//! browser with `DecompressionStream('gzip')`, fetching nothing; [`unpack`] is the same in Rust, for
//! tests and tools that read a page.

use std::io::{Read as _, Write as _};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

/// The `data-encoding` attribute of the data element: what [`pack`] produced.
pub const ENCODING: &str = "gzip+base64";

/// `json` gzipped and base64-encoded: text safe anywhere in HTML (only `A–Z a–z 0–9 + / =`).
pub fn pack(json: &str) -> String {
    let mut gz = GzEncoder::new(Vec::with_capacity(json.len() / 8), Compression::default());
    gz.write_all(json.as_bytes()).expect("writing to memory never fails");
    STANDARD.encode(gz.finish().expect("writing to memory never fails"))
}

/// The JSON text [`pack`] packed, or why `packed` is not such a text.
pub fn unpack(packed: &str) -> Result<String, String> {
    let bytes = STANDARD.decode(packed.trim()).map_err(|e| format!("not base64: {e}"))?;
    let mut json = String::new();
    GzDecoder::new(bytes.as_slice())
        .read_to_string(&mut json)
        .map_err(|e| format!("not gzip of text: {e}"))?;
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_text_unpacks_to_itself_and_is_html_safe() {
        let json = r#"{"label":["<a> & \"b\"","é"],"n":[1,2,3]}"#.repeat(50);
        let packed = pack(&json);
        assert!(packed.chars().all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c)), "{packed}");
        assert!(
            packed.len() < json.len() / 4,
            "repeating text packs small ({} of {})",
            packed.len(),
            json.len()
        );
        assert_eq!(unpack(&packed).as_deref(), Ok(json.as_str()));
    }

    #[test]
    fn what_is_not_packed_is_refused_with_a_reason() {
        assert!(unpack("not base64!").unwrap_err().contains("base64"));
        assert!(unpack(&STANDARD.encode("plain")).unwrap_err().contains("gzip"));
    }
}
