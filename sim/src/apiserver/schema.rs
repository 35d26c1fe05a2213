//! A custom resource's structural schema: the `openAPIV3Schema` of one CRD version, read into a tree
//! that [`validate`](super::validate) checks objects against and [`prune`](super::prune) drops unknown
//! fields by.
//!
//! What is read: `type` (object, array, string, integer, number, boolean), `nullable`, `properties`,
//! `required`, `additionalProperties` (a schema, or `true`), `items`, `enum`, `minimum`/`maximum` with
//! their exclusive forms, `multipleOf`, `minLength`/`maxLength`, `pattern`, `minItems`/`maxItems`,
//! `minProperties`/`maxProperties`, `format`, `x-kubernetes-preserve-unknown-fields`,
//! `x-kubernetes-int-or-string` and `x-kubernetes-embedded-resource`. Simplification: `allOf`,
//! `anyOf`, `oneOf`, `not`, `default`, `x-kubernetes-validations` (CEL) and the list-type extensions are
//! accepted and ignored. A `$ref`, an unknown `type` or an invalid `pattern` is an error, as the real
//! server refuses such a CRD.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// A JSON type a schema node can require.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    /// `object`.
    Object,
    /// `array`.
    Array,
    /// `string`.
    String,
    /// `integer`.
    Integer,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
}

impl JsonType {
    fn parse(name: &str) -> Option<JsonType> {
        Some(match name {
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            "string" => JsonType::String,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "boolean" => JsonType::Boolean,
            _ => return None,
        })
    }

    /// The name as schemas spell it.
    pub fn as_str(self) -> &'static str {
        self.as_slice()[0]
    }

    /// The name as a list of one, for a validator that also checks nodes of two types.
    pub fn as_slice(self) -> &'static [&'static str] {
        match self {
            JsonType::Object => &["object"],
            JsonType::Array => &["array"],
            JsonType::String => &["string"],
            JsonType::Integer => &["integer"],
            JsonType::Number => &["number"],
            JsonType::Boolean => &["boolean"],
        }
    }
}

/// What `additionalProperties` allows: values of one schema (a map), or anything.
#[derive(Debug, Clone, PartialEq)]
pub enum Additional {
    /// `additionalProperties: true`: any value, kept as is.
    Any,
    /// `additionalProperties: {schema}`: every value fits this schema.
    Schema(Box<Schema>),
}

/// A compiled `pattern` and its source text (messages print the source).
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The pattern as written.
    pub source: String,
    /// The compiled expression (Go's RE2 syntax and Rust's `regex` agree on what CRDs use).
    pub regex: regex::Regex,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// One node of a structural schema. Absent keywords are `None`, `false` or empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// `type`; `None` for an untyped node (only valid under preserve-unknown-fields or int-or-string).
    pub json_type: Option<JsonType>,
    /// `nullable`.
    pub nullable: bool,
    /// `format` as written.
    pub format: Option<String>,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource`.
    pub embedded_resource: bool,
    /// `properties`.
    pub properties: BTreeMap<String, Schema>,
    /// `required`, in the order written.
    pub required: Vec<String>,
    /// `additionalProperties`.
    pub additional_properties: Option<Additional>,
    /// `items`.
    pub items: Option<Box<Schema>>,
    /// `enum`.
    pub enum_values: Vec<Value>,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `minLength`.
    pub min_length: Option<u64>,
    /// `maxLength`.
    pub max_length: Option<u64>,
    /// `pattern`.
    pub pattern: Option<Pattern>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `minProperties`.
    pub min_properties: Option<u64>,
    /// `maxProperties`.
    pub max_properties: Option<u64>,
}

/// A schema that cannot be read: the JSON path of the offending keyword and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SchemaError {
    /// Where, e.g. `openAPIV3Schema.properties.spec.type`.
    pub path: String,
    /// What, e.g. `unknown type "strng"`.
    pub message: String,
}

fn error(path: &str, message: impl Into<String>) -> SchemaError {
    SchemaError { path: path.to_string(), message: message.into() }
}

impl Schema {
    /// Reads a schema node found at `path` (used in error messages).
    pub fn parse(value: &Value, path: &str) -> Result<Schema, SchemaError> {
        let Some(node) = value.as_object() else {
            return Err(error(path, "a schema must be an object"));
        };
        if node.contains_key("$ref") {
            return Err(error(&format!("{path}.$ref"), "$ref is not allowed in a CRD schema"));
        }
        let mut schema = Schema {
            json_type: json_type(node, path)?,
            nullable: flag(node, "nullable", path)?,
            format: string(node, "format", path)?,
            int_or_string: flag(node, "x-kubernetes-int-or-string", path)?,
            preserve_unknown_fields: flag(node, "x-kubernetes-preserve-unknown-fields", path)?,
            embedded_resource: flag(node, "x-kubernetes-embedded-resource", path)?,
            ..Schema::default()
        };
        schema.read_children(node, path)?;
        schema.read_bounds(node, path)?;
        Ok(schema)
    }

    fn read_children(&mut self, node: &Map<String, Value>, path: &str) -> Result<(), SchemaError> {
        if let Some(props) = node.get("properties") {
            let props =
                props.as_object().ok_or_else(|| error(&format!("{path}.properties"), "must be an object"))?;
            for (name, child) in props {
                let child = Schema::parse(child, &format!("{path}.properties.{name}"))?;
                self.properties.insert(name.clone(), child);
            }
        }
        self.required = strings(node, "required", path)?;
        self.additional_properties = match node.get("additionalProperties") {
            None | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(Additional::Any),
            Some(child) => {
                let child = Schema::parse(child, &format!("{path}.additionalProperties"))?;
                Some(Additional::Schema(Box::new(child)))
            }
        };
        if let Some(items) = node.get("items") {
            let child_path = format!("{path}.items");
            if items.is_array() {
                return Err(error(
                    &child_path,
                    "must be a single schema (an array of schemas is not structural)",
                ));
            }
            self.items = Some(Box::new(Schema::parse(items, &child_path)?));
        }
        self.enum_values = match node.get("enum") {
            None => Vec::new(),
            Some(Value::Array(values)) => values.clone(),
            Some(_) => return Err(error(&format!("{path}.enum"), "must be an array")),
        };
        Ok(())
    }

    fn read_bounds(&mut self, node: &Map<String, Value>, path: &str) -> Result<(), SchemaError> {
        self.minimum = float(node, "minimum", path)?;
        self.maximum = float(node, "maximum", path)?;
        self.exclusive_minimum = flag(node, "exclusiveMinimum", path)?;
        self.exclusive_maximum = flag(node, "exclusiveMaximum", path)?;
        self.multiple_of = float(node, "multipleOf", path)?;
        self.min_length = count(node, "minLength", path)?;
        self.max_length = count(node, "maxLength", path)?;
        self.min_items = count(node, "minItems", path)?;
        self.max_items = count(node, "maxItems", path)?;
        self.min_properties = count(node, "minProperties", path)?;
        self.max_properties = count(node, "maxProperties", path)?;
        if let Some(source) = string(node, "pattern", path)? {
            let regex = regex::Regex::new(&source).map_err(|e| {
                error(&format!("{path}.pattern"), format!("not a valid regular expression: {e}"))
            })?;
            self.pattern = Some(Pattern { source, regex });
        }
        Ok(())
    }

    /// The schema of property `name`, or of any map value when `additionalProperties` is a schema.
    pub fn child(&self, name: &str) -> Option<&Schema> {
        self.properties.get(name).or(match &self.additional_properties {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        })
    }
}

fn json_type(node: &Map<String, Value>, path: &str) -> Result<Option<JsonType>, SchemaError> {
    match node.get("type") {
        None => Ok(None),
        Some(Value::String(name)) if name.is_empty() => Ok(None),
        Some(Value::String(name)) => JsonType::parse(name)
            .map(Some)
            .ok_or_else(|| error(&format!("{path}.type"), format!("unknown type {name:?}"))),
        Some(_) => Err(error(&format!("{path}.type"), "must be a string")),
    }
}

fn flag(node: &Map<String, Value>, key: &str, path: &str) -> Result<bool, SchemaError> {
    match node.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(error(&format!("{path}.{key}"), "must be a boolean")),
    }
}

fn string(node: &Map<String, Value>, key: &str, path: &str) -> Result<Option<String>, SchemaError> {
    match node.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(error(&format!("{path}.{key}"), "must be a string")),
    }
}

fn strings(node: &Map<String, Value>, key: &str, path: &str) -> Result<Vec<String>, SchemaError> {
    let bad = || error(&format!("{path}.{key}"), "must be a list of strings");
    match node.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            items.iter().map(|i| i.as_str().map(str::to_string).ok_or_else(bad)).collect()
        }
        Some(_) => Err(bad()),
    }
}

fn float(node: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, SchemaError> {
    match node.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(error(&format!("{path}.{key}"), "must be a number")),
    }
}

fn count(node: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u64>, SchemaError> {
    match node.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| error(&format!("{path}.{key}"), "must be a non-negative integer")),
        Some(_) => Err(error(&format!("{path}.{key}"), "must be a non-negative integer")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_the_keywords_of_a_structural_schema() {
        let s = Schema::parse(
            &json!({"type": "object", "required": ["spec"], "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer", "format": "int32", "minimum": 0},
                "mode": {"type": "string", "enum": ["a", "b"], "pattern": "^[ab]$", "maxLength": 1},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "port": {"x-kubernetes-int-or-string": true},
                "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "items": {"type": "array", "items": {"type": "string"}, "maxItems": 3}
            }}}}),
            "openAPIV3Schema",
        )
        .unwrap();
        let spec = &s.properties["spec"];
        assert_eq!(s.required, ["spec"]);
        assert_eq!(spec.properties["replicas"].minimum, Some(0.0));
        assert_eq!(spec.properties["mode"].pattern.as_ref().unwrap().source, "^[ab]$");
        assert_eq!(spec.child("labels").unwrap().child("any").unwrap().json_type, Some(JsonType::String));
        assert!(spec.properties["port"].int_or_string && spec.properties["raw"].preserve_unknown_fields);
        assert_eq!(spec.properties["items"].items.as_ref().unwrap().json_type, Some(JsonType::String));
    }

    #[test]
    fn bad_schemas_are_errors_naming_the_keyword() {
        let err = Schema::parse(&json!({"properties": {"a": {"type": "strng"}}}), "s").unwrap_err();
        assert_eq!(err.to_string(), "s.properties.a.type: unknown type \"strng\"");
        let err = Schema::parse(&json!({"pattern": "("}), "s").unwrap_err();
        assert!(err.to_string().starts_with("s.pattern: not a valid regular expression"));
        let err = Schema::parse(&json!({"$ref": "#/x"}), "s").unwrap_err();
        assert_eq!(err.path, "s.$ref");
        assert_eq!(Schema::parse(&json!({"minLength": -1}), "s").unwrap_err().path, "s.minLength");
        assert!(Schema::parse(&json!("object"), "s").is_err());
    }
}
