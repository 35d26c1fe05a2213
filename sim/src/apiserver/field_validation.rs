//! The `fieldValidation` query parameter (kube-apiserver 1.27+): what a write with unknown fields gets.
//!
//! The decoder prunes unknown fields of a custom resource (see [`prune`](super::prune)) and reports
//! their paths; the directive decides what the client hears, as `k8s.io/apiserver`'s create, update
//! and patch handlers decide it: `Ignore` drops them silently; `Warn` (the default when the parameter
//! is absent) drops them and answers a `Warning: 299 - "unknown field \"spec.foo\""` header per field;
//! `Strict` (kubectl's default) refuses the write: 400 BadRequest `… cannot be handled as a Kind: strict
//! decoding error: unknown field "spec.foo"` for a create or update, 422 Invalid on the `patch` field
//! for a patch. Any other value is the 422 the options' validation gives. Simplification: built-in
//! kinds have no schema in the fake, so their unknown fields are kept and never reported.

use serde_json::Value;

use super::gofmt;
use super::registry::ResourceType;
use super::status::{self, ApiError, Cause};

/// What to do with unknown fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and warn (the default).
    #[default]
    Warn,
    /// Refuse the request.
    Strict,
}

/// The write whose options carry the parameter (the options kind names it in the 422).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// POST: `CreateOptions`.
    Create,
    /// PUT: `UpdateOptions`.
    Update,
    /// PATCH: `PatchOptions`.
    Patch,
}

impl FieldValidation {
    /// Parses the query value (absent or empty means `Warn`).
    pub fn parse(value: Option<&str>, write: WriteKind) -> Result<FieldValidation, ApiError> {
        match value.unwrap_or("") {
            "" | "Warn" => Ok(FieldValidation::Warn),
            "Ignore" => Ok(FieldValidation::Ignore),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(unsupported(other, write)),
        }
    }

    /// The answer to a create or update body whose decoding dropped `unknown` fields: the warnings to
    /// send, or the strict 400.
    pub fn on_decode(self, rt: &ResourceType, unknown: &[String]) -> Result<Vec<String>, ApiError> {
        if self == FieldValidation::Strict && !unknown.is_empty() {
            return Err(status::bad_request(format!(
                "{kind} in version {version:?} cannot be handled as a {kind}: {}",
                strict_error(unknown),
                kind = rt.kind,
                version = rt.version,
            )));
        }
        Ok(self.warnings(unknown))
    }

    /// The answer to a patch whose result (`patched`, before pruning) had `unknown` fields: the
    /// warnings to send, or the strict 422 on the `patch` field (kube-apiserver names no kind there).
    pub fn on_patch(self, patched: &Value, unknown: &[String]) -> Result<Vec<String>, ApiError> {
        if self == FieldValidation::Strict && !unknown.is_empty() {
            let value = gofmt::quote(&gofmt::json(patched));
            let cause = Cause {
                reason: "FieldValueInvalid",
                field: "patch".into(),
                message: format!("Invalid value: {value}: {}", strict_error(unknown)),
            };
            return Err(status::invalid_of("", "", "", &[cause]));
        }
        Ok(self.warnings(unknown))
    }

    fn warnings(self, unknown: &[String]) -> Vec<String> {
        match self {
            FieldValidation::Warn => unknown.iter().map(|p| unknown_field(p)).collect(),
            FieldValidation::Ignore | FieldValidation::Strict => Vec::new(),
        }
    }
}

fn unknown_field(path: &str) -> String {
    format!("unknown field {}", gofmt::quote(path))
}

/// `runtime.NewStrictDecodingError(...).Error()`.
fn strict_error(unknown: &[String]) -> String {
    let fields: Vec<String> = unknown.iter().map(|p| unknown_field(p)).collect();
    format!("strict decoding error: {}", fields.join(", "))
}

/// The 422 for a `fieldValidation` value the options' validation does not know.
fn unsupported(value: &str, write: WriteKind) -> ApiError {
    let options = match write {
        WriteKind::Create => "CreateOptions",
        WriteKind::Update => "UpdateOptions",
        WriteKind::Patch => "PatchOptions",
    };
    let cause = Cause {
        reason: "FieldValueNotSupported",
        field: "fieldValidation".into(),
        message: format!(
            "Unsupported value: {}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
            gofmt::quote(value)
        ),
    };
    status::invalid_of("meta.k8s.io", options, "", &[cause])
}

/// The `Warning` header value for one warning (`299 - "text"`, quotes and backslashes escaped).
pub fn warning_header(text: &str) -> String {
    let escaped: String =
        text.chars().flat_map(|c| if c == '"' || c == '\\' { vec!['\\', c] } else { vec![c] }).collect();
    format!("299 - \"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::apiserver::fixtures;

    #[test]
    fn the_directive_defaults_to_warn_and_refuses_unknown_values() {
        assert_eq!(FieldValidation::parse(None, WriteKind::Create), Ok(FieldValidation::Warn));
        assert_eq!(FieldValidation::parse(Some("Strict"), WriteKind::Patch), Ok(FieldValidation::Strict));
        let err = FieldValidation::parse(Some("strict"), WriteKind::Create).unwrap_err();
        assert_eq!(
            err.message(),
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
        );
        assert_eq!((err.code, err.body["details"]["kind"].as_str()), (422, Some("CreateOptions")));
    }

    #[test]
    fn unknown_fields_warn_or_refuse() {
        let widget = fixtures::resource("widgets");
        let unknown = ["spec.foo".to_string(), "spec.tags[0].x".to_string()];
        let warnings = FieldValidation::Warn.on_decode(&widget, &unknown).unwrap();
        assert_eq!(warnings, ["unknown field \"spec.foo\"", "unknown field \"spec.tags[0].x\""]);
        assert_eq!(warning_header(&warnings[0]), "299 - \"unknown field \\\"spec.foo\\\"\"");
        assert!(FieldValidation::Ignore.on_decode(&widget, &unknown).unwrap().is_empty());
        let err = FieldValidation::Strict.on_decode(&widget, &unknown[..1]).unwrap_err();
        assert_eq!(
            (err.code, err.message()),
            (
                400,
                "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.foo\""
            )
        );
        let err = FieldValidation::Strict.on_patch(&json!({"spec": {"foo": 1}}), &unknown[..1]).unwrap_err();
        assert_eq!(
            err.message(),
            " \"\" is invalid: patch: Invalid value: \"{\\\"spec\\\":{\\\"foo\\\":1}}\": strict decoding error: unknown field \"spec.foo\""
        );
    }
}
