//! CustomResourceDefinitions read as data: the fake API server learns every custom resource it serves
//! from `apiextensions.k8s.io/v1` CRD manifests (multi-document YAML or JSON, as `arc-controller crds`
//! prints them or any controller ships them), never from a controller's Rust types.
//!
//! From each CRD it takes the group, the names (kind, plural, singular, shortNames, listKind), the
//! scope, the storage version's `openAPIV3Schema` (a [`Schema`]), its status subresource and its
//! selectable fields. Simplification: only the storage version is served (it must be served); other
//! served versions are not, as serving them needs conversion. A manifest that cannot be read is a
//! [`CrdError`] naming the file, the document and what is wrong, never a panic.

use crate::json_at::At;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::schema::{JsonType, Schema};

/// One custom resource, as a CRD defines it.
#[derive(Debug, Clone, PartialEq)]
pub struct Crd {
    /// `metadata.name`: `plural.group`.
    pub name: String,
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// `spec.names.singular` (default: the kind in lower case).
    pub singular: String,
    /// `spec.names.shortNames`.
    pub short_names: Vec<String>,
    /// `spec.names.listKind` (default: kind + `List`).
    pub list_kind: String,
    /// `spec.scope` is `Namespaced`.
    pub namespaced: bool,
    /// The storage version's name, the one version served.
    pub version: String,
    /// The storage version has `subresources.status`.
    pub status_subresource: bool,
    /// The storage version's `selectableFields`, as field-selector paths (`spec.color`).
    pub selectable_fields: Vec<String>,
    /// The storage version's `openAPIV3Schema`.
    pub schema: Arc<Schema>,
}

/// A CRD manifest that cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CrdError {
    /// A document is not YAML or JSON, or is not a v1 CustomResourceDefinition.
    #[error("{file}: document {document}: {message}")]
    Document {
        /// The manifest's file name (or another label for where the text came from).
        file: String,
        /// The 1-based document number in a multi-document stream.
        document: usize,
        /// What is wrong.
        message: String,
    },
    /// A CRD whose content is invalid (a missing name, a bad scope, an unreadable schema…).
    #[error("{file}: document {document}: CustomResourceDefinition {crd:?}: {message}")]
    Definition {
        /// The manifest's file name.
        file: String,
        /// The 1-based document number.
        document: usize,
        /// The CRD's `metadata.name`, as far as it could be read.
        crd: String,
        /// What is wrong, with the path of the offending field.
        message: String,
    },
    /// A manifest with no CustomResourceDefinition in it.
    #[error("{file}: no CustomResourceDefinition found")]
    Empty {
        /// The manifest's file name.
        file: String,
    },
    /// Two CRDs define the same resource or kind.
    #[error("{file}: CustomResourceDefinition {name:?} defines {what}, which another CRD already defines")]
    Duplicate {
        /// The manifest's file name.
        file: String,
        /// The second CRD's name.
        name: String,
        /// The resource (`plural.group`) or kind (`Kind.group`) defined twice.
        what: String,
    },
}

/// Every custom resource a server serves, each defined once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrdSet {
    crds: Vec<Crd>,
}

impl CrdSet {
    /// No custom resources.
    pub fn new() -> Self {
        CrdSet::default()
    }

    /// The CRDs of one manifest (`file` names it in errors).
    pub fn from_manifests(file: &str, text: &str) -> Result<Self, CrdError> {
        let mut set = CrdSet::new();
        set.add_manifests(file, text)?;
        Ok(set)
    }

    /// Adds the CRDs of one manifest; a CRD that defines a resource or kind already defined is an error.
    pub fn add_manifests(&mut self, file: &str, text: &str) -> Result<(), CrdError> {
        let mut all = self.crds.clone();
        for crd in parse_manifests(file, text)? {
            let taken = all.iter().find_map(|c| {
                if c.name == crd.name {
                    Some(crd.name.clone())
                } else if c.group == crd.group && c.kind == crd.kind {
                    Some(format!("{}.{}", crd.kind, crd.group))
                } else {
                    None
                }
            });
            if let Some(what) = taken {
                return Err(CrdError::Duplicate { file: file.into(), name: crd.name, what });
            }
            all.push(crd);
        }
        self.crds = all;
        Ok(())
    }

    /// The CRDs in the order they were added.
    pub fn crds(&self) -> &[Crd] {
        &self.crds
    }
}

/// Reads every CustomResourceDefinition of a YAML or JSON stream (documents may also be `List`s of
/// CRDs; empty documents are skipped).
pub fn parse_manifests(file: &str, text: &str) -> Result<Vec<Crd>, CrdError> {
    let mut out = Vec::new();
    for (index, document) in documents(text).enumerate() {
        let document_number = index + 1;
        let doc_error =
            |message: String| CrdError::Document { file: file.into(), document: document_number, message };
        let value = document.map_err(|e| doc_error(format!("not YAML or JSON: {e}")))?;
        for item in definitions_in(value).map_err(doc_error)? {
            let crd = Crd::from_value(&item).map_err(|message| CrdError::Definition {
                file: file.into(),
                document: document_number,
                crd: item.at("/metadata/name").and_then(Value::as_str).unwrap_or("").into(),
                message,
            })?;
            out.push(crd);
        }
    }
    if out.is_empty() {
        return Err(CrdError::Empty { file: file.into() });
    }
    Ok(out)
}

/// The documents of a stream: a JSON stream (text that starts with `{` or `[`) read by the JSON
/// parser, which is many times faster on ARC's 2.8 MB of CRDs, anything else by the YAML one (JSON is
/// YAML, so both read a JSON stream alike).
fn documents(text: &str) -> Box<dyn Iterator<Item = Result<Value, String>> + '_> {
    if text.trim_start().starts_with(['{', '[']) {
        Box::new(
            serde_json::Deserializer::from_str(text)
                .into_iter::<Value>()
                .map(|d| d.map_err(|e| e.to_string())),
        )
    } else {
        Box::new(
            serde_yaml::Deserializer::from_str(text)
                .map(|d| Value::deserialize(d).map_err(|e| e.to_string())),
        )
    }
}

/// The CRD objects of one document: itself, the items of a list, or nothing for an empty document.
fn definitions_in(value: Value) -> Result<Vec<Value>, String> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
    match kind {
        "CustomResourceDefinition" => Ok(vec![value]),
        "List" | "CustomResourceDefinitionList" => {
            let items = value.get("items").and_then(Value::as_array).ok_or("a list without items")?;
            items
                .iter()
                .map(|item| definitions_in(item.clone()))
                .collect::<Result<Vec<_>, _>>()
                .map(|v| v.concat())
        }
        "" if !value.is_object() => Err("not an object".into()),
        "" => Err("no kind: expected a CustomResourceDefinition".into()),
        other => Err(format!("kind {other:?} is not a CustomResourceDefinition")),
    }
}

/// A string at a `/`-separated pointer, with its dotted path in the error.
fn text<'v>(value: &'v Value, pointer: &str) -> Result<&'v str, String> {
    let path = pointer.trim_start_matches('/').replace('/', ".");
    match value.at(pointer) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        Some(Value::String(_)) | None | Some(Value::Null) => Err(format!("{path} is missing")),
        Some(_) => Err(format!("{path} must be a string")),
    }
}

fn optional_text(value: &Value, pointer: &str) -> Result<Option<String>, String> {
    match value.at(pointer) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => text(value, pointer).map(|s| Some(s.to_string())),
    }
}

impl Crd {
    fn from_value(crd: &Value) -> Result<Crd, String> {
        let api_version = text(crd, "/apiVersion")?;
        if api_version != "apiextensions.k8s.io/v1" {
            return Err(format!("apiVersion {api_version:?}: only apiextensions.k8s.io/v1 CRDs are read"));
        }
        let name = text(crd, "/metadata/name")?.to_string();
        let group = text(crd, "/spec/group")?.to_string();
        if !group.contains('.') {
            return Err(format!("spec.group {group:?} must contain at least one dot"));
        }
        let kind = text(crd, "/spec/names/kind")?.to_string();
        let plural = text(crd, "/spec/names/plural")?.to_string();
        if name != format!("{plural}.{group}") {
            return Err(format!("metadata.name {name:?} must be spec.names.plural + \".\" + spec.group"));
        }
        if crd.at("/spec/preserveUnknownFields").and_then(Value::as_bool) == Some(true) {
            return Err("spec.preserveUnknownFields: true is not allowed in apiextensions.k8s.io/v1".into());
        }
        let storage = StorageVersion::find(crd)?;
        Ok(Crd {
            singular: optional_text(crd, "/spec/names/singular")?.unwrap_or_else(|| kind.to_lowercase()),
            list_kind: optional_text(crd, "/spec/names/listKind")?.unwrap_or_else(|| format!("{kind}List")),
            short_names: short_names(crd)?,
            namespaced: scope(crd)?,
            version: storage.name,
            status_subresource: storage.status_subresource,
            selectable_fields: storage.selectable_fields,
            schema: Arc::new(storage.schema),
            name,
            group,
            kind,
            plural,
        })
    }
}

fn short_names(crd: &Value) -> Result<Vec<String>, String> {
    match crd.at("/spec/names/shortNames") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str().map(str::to_string).ok_or("spec.names.shortNames must be a list of strings".into())
            })
            .collect(),
        Some(_) => Err("spec.names.shortNames must be a list of strings".into()),
    }
}

fn scope(crd: &Value) -> Result<bool, String> {
    match text(crd, "/spec/scope")? {
        "Namespaced" => Ok(true),
        "Cluster" => Ok(false),
        other => Err(format!("spec.scope {other:?} must be Namespaced or Cluster")),
    }
}

/// What the fake takes from the storage version.
struct StorageVersion {
    name: String,
    status_subresource: bool,
    selectable_fields: Vec<String>,
    schema: Schema,
}

impl StorageVersion {
    fn find(crd: &Value) -> Result<StorageVersion, String> {
        let versions = crd
            .at("/spec/versions")
            .and_then(Value::as_array)
            .filter(|v| !v.is_empty())
            .ok_or("spec.versions must list at least one version")?;
        let storage: Vec<usize> = (0..versions.len())
            .filter(|i| versions[*i].get("storage").and_then(Value::as_bool) == Some(true))
            .collect();
        let [index] = storage[..] else {
            return Err(format!(
                "spec.versions must have exactly one storage version, found {}",
                storage.len()
            ));
        };
        let version = &versions[index];
        let at = format!("spec.versions[{index}]");
        let name = text(version, "/name").map_err(|e| format!("{at}.{e}"))?.to_string();
        if version.get("served").and_then(Value::as_bool) != Some(true) {
            return Err(format!(
                "{at}: storage version {name:?} is not served (the fake serves only the storage version)"
            ));
        }
        let root = version
            .at("/schema/openAPIV3Schema")
            .ok_or_else(|| format!("{at}.schema.openAPIV3Schema is missing"))?;
        let schema =
            Schema::parse(root, &format!("{at}.schema.openAPIV3Schema")).map_err(|e| e.to_string())?;
        if schema.json_type != Some(JsonType::Object) {
            return Err(format!("{at}.schema.openAPIV3Schema.type must be object"));
        }
        Ok(StorageVersion {
            name,
            status_subresource: version.at("/subresources/status").is_some_and(|s| !s.is_null()),
            selectable_fields: selectable_fields(version, &at)?,
            schema,
        })
    }
}

fn selectable_fields(version: &Value, at: &str) -> Result<Vec<String>, String> {
    let Some(fields) = version.get("selectableFields").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let path = text(f, "/jsonPath").map_err(|e| format!("{at}.selectableFields[{i}].{e}"))?;
            Ok(path.trim_start_matches('.').to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDGETS: &str = r#"
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, shortNames: [wd]}
  scope: Cluster
  versions:
    - name: v1beta1
      served: true
      storage: false
      schema: {openAPIV3Schema: {type: object}}
    - name: v1
      served: true
      storage: true
      selectableFields: [{jsonPath: .spec.color}]
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {color: {type: string}}}
"#;

    #[test]
    fn a_crd_yields_names_scope_storage_version_and_schema() {
        let set = CrdSet::from_manifests("widgets.yaml", WIDGETS).unwrap();
        let w = &set.crds()[0];
        assert_eq!(
            (w.name.as_str(), w.kind.as_str(), w.plural.as_str()),
            ("widgets.example.com", "Widget", "widgets")
        );
        assert_eq!((w.singular.as_str(), w.list_kind.as_str()), ("widget", "WidgetList"));
        assert_eq!((w.namespaced, w.version.as_str(), w.status_subresource), (false, "v1", false));
        assert_eq!(
            (w.short_names.clone(), w.selectable_fields.clone()),
            (vec!["wd".to_string()], vec!["spec.color".to_string()])
        );
        assert!(w.schema.properties["spec"].properties.contains_key("color"));
    }

    #[test]
    fn json_and_lists_are_read_too() {
        let yaml: Value = serde_yaml::from_str(WIDGETS.trim_start_matches("\n---\n")).unwrap();
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [yaml]});
        let set = CrdSet::from_manifests("list.json", &list.to_string()).unwrap();
        assert_eq!(set.crds()[0].plural, "widgets");
    }

    #[test]
    fn errors_name_the_file_the_document_and_the_problem() {
        let bad_scope = WIDGETS.replace("scope: Cluster", "scope: Global");
        let err = CrdSet::from_manifests("w.yaml", &bad_scope).unwrap_err();
        assert_eq!(
            err.to_string(),
            "w.yaml: document 1: CustomResourceDefinition \"widgets.example.com\": spec.scope \"Global\" must be Namespaced or Cluster"
        );
        let bad_type = WIDGETS.replace("color: {type: string}", "color: {type: strng}");
        let err = CrdSet::from_manifests("w.yaml", &bad_type).unwrap_err().to_string();
        assert!(err.ends_with("spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.color.type: unknown type \"strng\""), "{err}");
        let two = format!("{WIDGETS}---\napiVersion: v1\nkind: ConfigMap\n");
        let err = CrdSet::from_manifests("w.yaml", &two).unwrap_err();
        assert_eq!(
            err.to_string(),
            "w.yaml: document 2: kind \"ConfigMap\" is not a CustomResourceDefinition"
        );
        let err = CrdSet::from_manifests("w.yaml", "a: [unclosed").unwrap_err();
        assert!(err.to_string().starts_with("w.yaml: document 1: not YAML or JSON"), "{err}");
        assert_eq!(
            CrdSet::from_manifests("e.yaml", "").unwrap_err(),
            CrdError::Empty { file: "e.yaml".into() }
        );
        let no_storage = WIDGETS.replace("storage: true", "storage: false");
        let err = CrdSet::from_manifests("w.yaml", &no_storage).unwrap_err().to_string();
        assert!(err.ends_with("spec.versions must have exactly one storage version, found 0"), "{err}");
    }

    #[test]
    fn a_resource_defined_twice_is_an_error() {
        let mut set = CrdSet::from_manifests("a.yaml", WIDGETS).unwrap();
        let err = set.add_manifests("b.yaml", WIDGETS).unwrap_err();
        assert!(matches!(err, CrdError::Duplicate { ref what, .. } if what == "widgets.example.com"));
        assert_eq!(set.crds().len(), 1);
    }
}
