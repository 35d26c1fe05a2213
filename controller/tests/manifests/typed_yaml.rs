//! Multi-document YAML manifests read as JSON and checked against their k8s-openapi types: a
//! document decoded into its type and encoded again must equal itself, and `differences` names
//! each path where it does not (k8s-openapi keeps no unknown field, so a misspelt one shows).
//! Shared by the controller's manifest test and the scenarios' sweep-deployment test.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The documents of a multi-document YAML file, as JSON values (empty documents dropped).
pub(super) fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::Deserializer::from_str(&text)
        .map(|document| {
            let value: Value = serde::Deserialize::deserialize(document)
                .unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()));
            value
        })
        .filter(|value| !value.is_null())
        .collect()
}

/// `document` decoded as `K` and encoded again.
pub(super) fn round_trip<K: DeserializeOwned + Serialize>(document: &Value) -> Result<Value, String> {
    let typed: K = serde_json::from_value(document.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// Paths where `want` and `got` differ (a field only in `want` is one k8s-openapi did not keep).
pub(super) fn differences(at: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (key, value) in w {
                match g.get(key) {
                    Some(other) => differences(&format!("{at}.{key}"), value, other, out),
                    None => out.push(format!("{at}.{key}: unknown field (dropped by the typed decode)")),
                }
            }
            for key in g.keys().filter(|k| !w.contains_key(*k)) {
                out.push(format!("{at}.{key}: added by the typed decode"));
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (a, b)) in w.iter().zip(g).enumerate() {
                differences(&format!("{at}[{i}]"), a, b, out);
            }
        }
        (a, b) if a == b => {}
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        (a, b) => out.push(format!("{at}: {a} became {b}")),
    }
}
