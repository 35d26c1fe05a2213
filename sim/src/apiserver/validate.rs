//! Structural-schema validation of custom resources, with kube-apiserver's field errors.
//!
//! kube-apiserver validates a custom resource with kube-openapi's schema validator and turns each
//! result into a field error (`apiextensions-apiserver/pkg/apiserver/validation`,
//! `kubeOpenAPIResultToFieldErrors`). This module walks a value the same way, node by node in the
//! validator's order (type, string, number, array, enum, object), and words each failure as that chain
//! does: `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer:
//! "string"`. [`validate`] returns the causes; [`status::invalid`](super::status::invalid) joins them.
//!
//! Simplifications: properties and map keys are visited in sorted order (Go visits maps in random
//! order, so a real server's multi-error messages vary between calls); string formats are not checked
//! (only the type check's format rule is kept); CEL rules and `allOf`/`anyOf`/`oneOf`/`not` are not
//! evaluated; bounds that do not fit the node's type are not reported as schema errors.

use serde_json::{Map, Number, Value};

use super::gofmt;
use super::node_path::NodePath;
use super::schema::{Additional, JsonType, Schema};
use super::status::Cause;
use super::untouched::Untouched;

/// Formats kube-apiserver validates in CRD schemas (`apiextensions-apiserver` `formats.go`, with `-`
/// removed); any other `format` is ignored, as the real server strips it.
const SUPPORTED_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
];

/// The largest integer a float64 holds exactly (`swag.IsFloat64AJSONInteger`'s range).
const MAX_JSON_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Validates `value` against `schema`. Field paths start at `field_root` (`status` when a status write
/// is validated against the status schema alone; `None` for a whole object, whose root errors read
/// `<nil>` as the real server's do).
pub fn validate(schema: &Schema, value: &Value, field_root: Option<&str>) -> Vec<Cause> {
    let mut v = Validator { causes: Vec::new(), field_root, root: None };
    v.node(schema, value, &NodePath::Root, Untouched::NOTHING);
    v.causes
}

/// [`validate`] of a patched value, leaving alone every field left as stored: every stored custom
/// resource was validated against the same schema when it was written (and CRD validation ratcheting,
/// GA in 1.33, drops the errors of unchanged fields anyway). `root` says of each top-level field
/// whether it was left as stored (`None`) or what of it the patch left ([`Untouched`]); below the top
/// level, what the patch does not name was left.
pub fn validate_patched<'a>(
    schema: &Schema,
    value: &Value,
    root: &'a LeftAtRoot<'a>,
    field_root: Option<&'a str>,
) -> Vec<Cause> {
    let mut v = Validator { causes: Vec::new(), field_root, root: Some(root) };
    v.node(schema, value, &NodePath::Root, Untouched::NOTHING);
    v.causes
}

/// What a patch left of each top-level field: `None`, all of it; else what it left inside.
pub type LeftAtRoot<'a> = dyn Fn(&str) -> Option<Untouched<'a>> + 'a;

struct Validator<'a> {
    causes: Vec<Cause>,
    field_root: Option<&'a str>,
    /// What a patch left of each top-level field ([`validate_patched`]).
    root: Option<&'a LeftAtRoot<'a>>,
}

/// A JSON number as the Go decoder hands it over: an int64, or a float64.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn of(n: &Number) -> Num {
        match n.as_i64() {
            Some(i) => Num::Int(i),
            None => Num::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

fn is_json_integer(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() <= MAX_JSON_INTEGER
}

impl Validator<'_> {
    fn node(&mut self, s: &Schema, value: &Value, path: &NodePath<'_>, untouched: Untouched<'_>) {
        self.check_type(s, value, path);
        match value {
            Value::String(text) => self.check_string(s, text, path),
            Value::Number(n) => self.check_number(s, Num::of(n), path),
            Value::Array(items) => self.check_array(s, items, path),
            _ => {}
        }
        self.check_enum(s, value, path);
        if let Value::Object(map) = value {
            self.check_object(s, map, path, untouched);
        }
    }

    /// The field path of an error at openapi path `name` (`fldPath.Child(TrimPrefix(name, "."))`).
    fn field(&self, name: &str) -> String {
        let name = name.strip_prefix('.').unwrap_or(name);
        match (self.field_root, name.is_empty()) {
            (None, true) => "<nil>".into(),
            (Some(root), true) => root.into(),
            (None, false) => name.into(),
            (Some(root), false) => format!("{root}.{name}"),
        }
    }

    fn push(&mut self, reason: &'static str, name: &str, message: String) {
        let field = self.field(name);
        self.causes.push(Cause { reason, field, message });
    }

    /// `FieldValueInvalid` carrying the bad value and the openapi message.
    fn invalid(&mut self, name: &str, bad: String, detail: String) {
        self.push("FieldValueInvalid", name, format!("Invalid value: {bad}: {detail}"));
    }

    /// kube-openapi's type error: `{name} in body must be of type {expected}: "{found}"`.
    fn type_invalid(&mut self, name: &str, expected: &str, found: &str) {
        let detail = format!("{name} in body must be of type {expected}: {}", gofmt::quote(found));
        let message = format!("Invalid value: {}: {detail}", gofmt::quote(found));
        self.push("FieldValueTypeInvalid", name, message);
    }

    fn check_type(&mut self, s: &Schema, value: &Value, path: &NodePath<'_>) {
        let types = types_of(s);
        let format = supported_format(s);
        if value.is_null() {
            if !types.is_empty() && !s.nullable {
                self.type_invalid(&path.to_string(), &types.join(","), "null");
            }
            return;
        }
        if types.is_empty() && format.is_none() {
            return;
        }
        let (found, found_format) = go_type_of(value);
        let has = |t: &str| types.contains(&t);
        let float_int = found == "number" && has("integer") && value.as_f64().is_some_and(is_json_integer);
        let int_float = found == "integer" && has("number");
        let stringish = value.is_string() || value.is_array();
        if let Some(format) = format {
            if !(stringish || has(found) || float_int || int_float) {
                return self.type_invalid(&path.to_string(), format, found_format);
            }
            if stringish && !has("number") && !has("integer") {
                return;
            }
        }
        if !(has(found) || float_int || int_float) {
            self.type_invalid(&path.to_string(), &types.join(","), found);
        }
    }

    /// maxLength, minLength, pattern: the first failure only, as kube-openapi's string validator.
    fn check_string(&mut self, s: &Schema, text: &str, path: &NodePath<'_>) {
        if s.max_length.is_none() && s.min_length.is_none() && s.pattern.is_none() {
            return;
        }
        let length = text.chars().count() as u64;
        if let Some(max) = s.max_length.filter(|max| length > *max) {
            let message = format!("Too long: may not be more than {max} bytes");
            return self.push("FieldValueTooLong", &path.to_string(), message);
        }
        if let Some(min) = s.min_length.filter(|min| length < *min) {
            let detail = format!("{path} in body should be at least {min} chars long");
            return self.invalid(&path.to_string(), gofmt::quote(text), detail);
        }
        if let Some(p) = s.pattern.as_ref().filter(|p| !p.regex.is_match(text)) {
            let detail = format!("{path} in body should match '{}'", p.source);
            self.invalid(&path.to_string(), gofmt::quote(text), detail);
        }
    }

    fn check_number(&mut self, s: &Schema, n: Num, path: &NodePath<'_>) {
        let bad = || match n {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => gofmt::float(f),
        };
        let integer_node = s.json_type == Some(JsonType::Integer) && !s.int_or_string;
        if integer_node && matches!(n, Num::Float(f) if !is_json_integer(f)) {
            // kube-openapi's range check is a plain error, reported at the root with an empty value.
            let detail = format!("Checked value must be of type integer (default format) in {path}");
            self.invalid("", "\"\"".into(), detail);
        }
        if let Some(factor) = s.multiple_of.filter(|f| *f > 0.0)
            && let Some(shown) = not_multiple(n, factor)
        {
            self.invalid(&path.to_string(), bad(), format!("{path} in body should be a multiple of {shown}"));
        }
        if let Some(min) = s.minimum
            && let Some((word, shown)) = below(n, min, s.exclusive_minimum)
        {
            self.invalid(&path.to_string(), bad(), format!("{path} in body should be {word} {shown}"));
        }
        if let Some(max) = s.maximum
            && let Some((word, shown)) = above(n, max, s.exclusive_maximum)
        {
            self.invalid(&path.to_string(), bad(), format!("{path} in body should be {word} {shown}"));
        }
    }

    fn check_array(&mut self, s: &Schema, items: &[Value], path: &NodePath<'_>) {
        if let Some(item_schema) = &s.items {
            for (i, item) in items.iter().enumerate() {
                self.node(item_schema, item, &path.item(i), Untouched::NOTHING);
            }
        }
        let size = items.len() as u64;
        if let Some(min) = s.min_items.filter(|min| size < *min) {
            let detail = format!("{path} in body should have at least {min} items");
            self.invalid(&path.to_string(), size.to_string(), detail);
        }
        if let Some(max) = s.max_items.filter(|max| size > *max) {
            let message = format!("Too many: {size}: must have at most {max} items");
            self.push("FieldValueTooMany", &path.to_string(), message);
        }
    }

    fn check_enum(&mut self, s: &Schema, value: &Value, path: &NodePath<'_>) {
        if s.enum_values.is_empty() || (!value.is_null() && s.enum_values.iter().any(|e| same(e, value))) {
            return;
        }
        let supported: Vec<String> = s
            .enum_values
            .iter()
            .map(|e| gofmt::quote(&e.as_str().map_or_else(|| e.to_string(), str::to_string)))
            .collect();
        let message = format!(
            "Unsupported value: {}: supported values: {}",
            gofmt::bad_value(value),
            supported.join(", ")
        );
        self.push("FieldValueNotSupported", &path.to_string(), message);
    }

    fn check_object(
        &mut self,
        s: &Schema,
        map: &Map<String, Value>,
        path: &NodePath<'_>,
        untouched: Untouched<'_>,
    ) {
        let size = map.len() as u64;
        if let Some(min) = s.min_properties.filter(|min| size < *min) {
            let detail = format!("{path} in body should have at least {min} properties");
            self.invalid(&path.to_string(), size.to_string(), detail);
        }
        if let Some(max) = s.max_properties.filter(|max| size > *max) {
            let message = format!("Too many: {size}: must have at most {max} items");
            self.push("FieldValueTooMany", &path.to_string(), message);
        }
        let root = self.root.filter(|_| matches!(path, NodePath::Root));
        // What to validate a field with (what the patch left inside it); `None`: the patch left all of
        // it, so it is not validated again.
        let below = |key: &str| match root {
            Some(root) => root(key),
            None => (!untouched.leaves(key)).then(|| untouched.within(key)),
        };
        if let Some(Additional::Schema(values)) = &s.additional_properties {
            for (key, value) in map.iter().filter(|(k, _)| !s.properties.contains_key(*k)) {
                if let Some(below) = below(key) {
                    self.node(values, value, &path.entry(key), below);
                }
            }
        }
        for (name, child) in &s.properties {
            if let (Some(value), Some(below)) = (map.get(name), below(name)) {
                self.node(child, value, &path.property(name), below);
            }
        }
        for name in s.required.iter().filter(|r| !map.contains_key(*r)) {
            self.push("FieldValueRequired", &path.entry(name).to_string(), "Required value".into());
        }
    }
}

/// The JSON types a node's schema allows (none: any).
fn types_of(s: &Schema) -> &'static [&'static str] {
    match (s.int_or_string, s.json_type) {
        (true, _) => &["integer", "string"],
        (false, Some(t)) => t.as_slice(),
        (false, None) => &[],
    }
}

/// The format kube-apiserver keeps from the schema (`None` when absent or unsupported).
fn supported_format(s: &Schema) -> Option<&str> {
    let format = s.format.as_deref()?;
    SUPPORTED_FORMATS.contains(&format.replace('-', "").as_str()).then_some(format)
}

/// The JSON type kube-openapi infers for a decoded value, and its format name (`int64`, `float64`).
fn go_type_of(value: &Value) -> (&'static str, &'static str) {
    match value {
        Value::Null => ("null", ""),
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) if n.as_i64().is_some() => ("integer", "int64"),
        Value::Number(_) => ("number", "float64"),
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
    }
}

/// Below the minimum: the comparison word and the bound as printed (integers compare with the bound
/// truncated to an integer, as `MinimumNativeType` does).
fn below(n: Num, min: f64, exclusive: bool) -> Option<(&'static str, String)> {
    let word = if exclusive { "greater than" } else { "greater than or equal to" };
    match n {
        Num::Int(i) => {
            let bound = min as i64;
            (i < bound || (exclusive && i == bound)).then(|| (word, bound.to_string()))
        }
        Num::Float(f) => (f < min || (exclusive && f == min)).then(|| (word, gofmt::float(min))),
    }
}

/// Above the maximum, as [`below`].
fn above(n: Num, max: f64, exclusive: bool) -> Option<(&'static str, String)> {
    let word = if exclusive { "less than" } else { "less than or equal to" };
    match n {
        Num::Int(i) => {
            let bound = max as i64;
            (i > bound || (exclusive && i == bound)).then(|| (word, bound.to_string()))
        }
        Num::Float(f) => (f > max || (exclusive && f == max)).then(|| (word, gofmt::float(max))),
    }
}

/// The factor as printed when `n` is not a multiple of it.
fn not_multiple(n: Num, factor: f64) -> Option<String> {
    match n {
        Num::Int(i) => {
            let factor = factor as i64;
            (factor > 0 && i % factor != 0).then(|| factor.to_string())
        }
        Num::Float(f) => {
            let mult = if factor < 1.0 { 1.0 / factor * f } else { f / factor };
            (!is_json_integer(mult)).then(|| gofmt::float(factor))
        }
    }
}

/// Enum membership: numbers compare by value (an int64 converts to the enum's float64), the rest by
/// equality.
fn same(allowed: &Value, value: &Value) -> bool {
    match (allowed, value) {
        (Value::Number(a), Value::Number(b)) => Num::of(a).as_f64() == Num::of(b).as_f64(),
        _ => allowed == value,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::apiserver::body::Body;
    use crate::apiserver::patch::PatchType;

    fn schema(v: Value) -> Schema {
        Schema::parse(&v, "s").unwrap()
    }

    fn messages(s: &Schema, v: Value) -> Vec<String> {
        validate(s, &v, None)
            .into_iter()
            .map(|c| format!("{}: {} ({})", c.field, c.message, c.reason))
            .collect()
    }

    #[test]
    fn fields_left_as_stored_are_not_validated_again() {
        let s = schema(json!({"type": "object", "required": ["spec"], "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
            "spec": {"type": "object", "properties": {"n": {"type": "integer"}, "o": {"type": "integer"}}},
            "status": {"type": "object", "properties": {"m": {"type": "integer"}}}}}));
        let fields = |causes: Vec<Cause>| causes.into_iter().map(|c| c.field).collect::<Vec<_>>();
        let all_bad =
            json!({"metadata": {"name": 1}, "spec": {"n": "bad", "o": "bad"}, "status": {"m": "bad"}});
        let patch = json!({"spec": {"o": "bad"}});
        let untouched = Untouched::of(PatchType::Merge, Body::new(b"", Some(&patch)));
        let root = |k: &str| match k {
            "metadata" => Some(Untouched::NOTHING),
            _ => (!untouched.leaves(k)).then(|| untouched.within(k)),
        };
        assert_eq!(fields(validate_patched(&s, &all_bad, &root, None)), ["metadata.name", "spec.o"]);
        assert_eq!(fields(validate(&s, &all_bad, None)), ["metadata.name", "spec.n", "spec.o", "status.m"]);
        let no_spec = json!({"status": {"m": 1}});
        assert_eq!(fields(validate_patched(&s, &no_spec, &|_| None, None)), ["spec"], "required still holds");
    }

    fn ers() -> Schema {
        schema(json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["patchID"],
            "properties": {"replicas": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 5},
                "patchID": {"type": "integer"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "name": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-z]+$"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "list": {"type": "array", "maxItems": 1, "minItems": 1, "items": {"type": "string"}},
                "port": {"x-kubernetes-int-or-string": true},
                "when": {"type": "string", "format": "date-time"},
                "opt": {"type": "string", "nullable": true}}}}}))
    }

    #[test]
    fn a_wrong_type_reads_as_kube_apiserver_words_it() {
        let out = messages(&ers(), json!({"spec": {"patchID": 0, "replicas": "string"}}));
        assert_eq!(
            out,
            [
                "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\" (FieldValueTypeInvalid)"
            ]
        );
        let out = messages(&ers(), json!({"spec": {"patchID": 0, "replicas": true, "port": 1.5, "when": 3}}));
        assert_eq!(
            out,
            [
                "spec.port: Invalid value: \"number\": spec.port in body must be of type integer,string: \"number\" (FieldValueTypeInvalid)",
                "spec.replicas: Invalid value: \"boolean\": spec.replicas in body must be of type integer: \"boolean\" (FieldValueTypeInvalid)",
                "spec.when: Invalid value: \"int64\": spec.when in body must be of type date-time: \"int64\" (FieldValueTypeInvalid)",
            ]
        );
    }

    #[test]
    fn a_non_integral_float_for_an_integer_also_fails_the_range_check() {
        let out = messages(&ers(), json!({"spec": {"patchID": 1.5}}));
        assert_eq!(
            out,
            [
                "spec.patchID: Invalid value: \"number\": spec.patchID in body must be of type integer: \"number\" (FieldValueTypeInvalid)",
                "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in spec.patchID (FieldValueInvalid)",
            ]
        );
        assert!(messages(&ers(), json!({"spec": {"patchID": 2.0}})).is_empty());
    }

    #[test]
    fn bounds_lengths_patterns_and_counts() {
        let out = messages(&ers(), json!({"spec": {"patchID": 0, "replicas": -1, "name": "A", "list": []}}));
        assert_eq!(
            out,
            [
                "spec.list: Invalid value: 0: spec.list in body should have at least 1 items (FieldValueInvalid)",
                "spec.name: Invalid value: \"A\": spec.name in body should be at least 2 chars long (FieldValueInvalid)",
                "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0 (FieldValueInvalid)",
            ]
        );
        let out = messages(
            &ers(),
            json!({"spec": {"patchID": 0, "replicas": 6, "name": "abcd", "list": ["a", "b"]}}),
        );
        assert_eq!(
            out,
            [
                "spec.list: Too many: 2: must have at most 1 items (FieldValueTooMany)",
                "spec.name: Too long: may not be more than 3 bytes (FieldValueTooLong)",
                "spec.replicas: Invalid value: 6: spec.replicas in body should be less than or equal to 5 (FieldValueInvalid)",
            ]
        );
        let out = messages(&ers(), json!({"spec": {"patchID": 0, "name": "a1"}}));
        assert_eq!(
            out,
            [
                "spec.name: Invalid value: \"a1\": spec.name in body should match '^[a-z]+$' (FieldValueInvalid)"
            ]
        );
    }

    #[test]
    fn required_enum_maps_and_nulls() {
        let out =
            messages(&ers(), json!({"spec": {"mode": "c", "labels": {"x": 1}, "opt": null, "list": [null]}}));
        assert_eq!(
            out,
            [
                "spec.labels.x: Invalid value: \"integer\": spec.labels.x in body must be of type string: \"integer\" (FieldValueTypeInvalid)",
                "spec.list[0]: Invalid value: \"null\": spec.list[0] in body must be of type string: \"null\" (FieldValueTypeInvalid)",
                "spec.mode: Unsupported value: \"c\": supported values: \"a\", \"b\" (FieldValueNotSupported)",
                "spec.patchID: Required value (FieldValueRequired)",
            ]
        );
    }

    #[test]
    fn status_validation_words_paths_relative_to_status() {
        let s = schema(json!({"type": "object", "properties": {"phase": {"type": "string"}}}));
        let out = validate(&s, &json!({"phase": 3}), Some("status"));
        assert_eq!(out[0].field, "status.phase");
        assert_eq!(
            out[0].message,
            "Invalid value: \"integer\": phase in body must be of type string: \"integer\""
        );
    }

    #[test]
    fn untyped_and_preserved_nodes_take_anything() {
        let s = schema(
            json!({"type": "object", "properties": {"raw": {"x-kubernetes-preserve-unknown-fields": true}}}),
        );
        assert!(validate(&s, &json!({"raw": {"any": [1, "x"]}}), None).is_empty());
    }
}
