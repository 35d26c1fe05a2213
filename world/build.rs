//! Turns ARC's CRD manifests (`controller/crds/arc.yaml`, 2.8 MB of YAML) into a JSON stream at build
//! time, so a process that builds a world parses JSON (milliseconds) instead of YAML (a tenth of a
//! second, a sixth of a one-second `arcsim run`). The YAML stays the source: `world::crds` serves the
//! JSON, and a test checks that both parse to the same CRDs.

use std::{env, fs, path::PathBuf};

use serde::Deserialize;

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let source = manifest_dir.join("../controller/crds/arc.yaml");
    println!("cargo:rerun-if-changed={}", source.display());
    let text = fs::read_to_string(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
    let mut json = String::new();
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value = serde_json::Value::deserialize(document)
            .unwrap_or_else(|e| panic!("{}: not YAML: {e}", source.display()));
        if !value.is_null() {
            json.push_str(&serde_json::to_string(&value).expect("a YAML value encodes as JSON"));
            json.push('\n');
        }
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("arc-crds.json");
    fs::write(&out, json).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}
