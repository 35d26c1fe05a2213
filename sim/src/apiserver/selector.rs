//! Label and field selectors, parsed as kube-apiserver parses them and matched against stored JSON.
//!
//! Label selectors support `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k` and `!k`, joined by
//! commas. Field selectors support `=`, `==` and `!=` on `metadata.name`, `metadata.namespace` and the
//! per-kind paths the registry lists. Anything else is a parse error, answered 400 as the real server does.

use crate::json_at::At;
use std::collections::BTreeSet;

use serde_json::Value;

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector; empty matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector(Vec<LabelRequirement>);

/// A parsed field selector; empty matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector(Vec<(String, bool, String)>);

/// Why a selector did not parse; the message is what the 400 Status carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(pub String);

impl LabelSelector {
    /// Parses a `labelSelector` query value.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for term in split_terms(input)? {
            reqs.push(parse_label_term(&term)?);
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether an object with these labels matches.
    pub fn matches(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|req| match req {
            LabelRequirement::Equals(k, v) => get(k) == Some(v.as_str()),
            LabelRequirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            LabelRequirement::In(k, vs) => get(k).is_some_and(|x| vs.contains(x)),
            LabelRequirement::NotIn(k, vs) => !get(k).is_some_and(|x| vs.contains(x)),
            LabelRequirement::Exists(k) => get(k).is_some(),
            LabelRequirement::DoesNotExist(k) => get(k).is_none(),
        })
    }

    /// Whether the selector is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Splits on commas outside parentheses, trimming; an empty input gives no terms.
fn split_terms(input: &str) -> Result<Vec<String>, SelectorError> {
    let mut terms = Vec::new();
    let (mut depth, mut current) = (0i32, String::new());
    for c in input.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(SelectorError(format!("unable to parse requirement: unbalanced ')' in {input:?}")));
        }
        current.push(c);
    }
    if depth != 0 {
        return Err(SelectorError(format!("unable to parse requirement: unbalanced '(' in {input:?}")));
    }
    terms.push(current);
    let terms: Vec<String> = terms.into_iter().map(|t| t.trim().to_string()).collect();
    if terms.len() == 1 && terms[0].is_empty() {
        return Ok(Vec::new());
    }
    if terms.iter().any(String::is_empty) {
        return Err(SelectorError(format!("unable to parse requirement: empty term in {input:?}")));
    }
    Ok(terms)
}

fn parse_label_term(term: &str) -> Result<LabelRequirement, SelectorError> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok(LabelRequirement::DoesNotExist(checked_key(key.trim())?));
    }
    if let Some((k, v)) = term.split_once("!=") {
        return Ok(LabelRequirement::NotEquals(checked_key(k.trim())?, checked_value(v.trim())?));
    }
    if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(LabelRequirement::Equals(checked_key(k.trim())?, checked_value(v.trim())?));
    }
    let words: Vec<&str> = term.splitn(2, char::is_whitespace).collect();
    if words.len() == 1 {
        return Ok(LabelRequirement::Exists(checked_key(words[0])?));
    }
    let key = checked_key(words[0])?;
    let rest = words[1].trim_start();
    let (op, set) = if let Some(s) = rest.strip_prefix("notin") {
        ("notin", s)
    } else if let Some(s) = rest.strip_prefix("in") {
        ("in", s)
    } else {
        return Err(SelectorError(format!("unable to parse requirement: unknown operator in {term:?}")));
    };
    let values = parse_set(set.trim(), term)?;
    Ok(if op == "in" { LabelRequirement::In(key, values) } else { LabelRequirement::NotIn(key, values) })
}

fn parse_set(set: &str, term: &str) -> Result<BTreeSet<String>, SelectorError> {
    let inner = set.strip_prefix('(').and_then(|s| s.strip_suffix(')')).ok_or_else(|| {
        SelectorError(format!("unable to parse requirement: expected '(values)' in {term:?}"))
    })?;
    let values: Result<BTreeSet<String>, SelectorError> =
        inner.split(',').map(|v| checked_value(v.trim())).collect();
    let values = values?;
    if values.is_empty() || inner.trim().is_empty() {
        return Err(SelectorError(format!(
            "unable to parse requirement: {term:?}: for 'in', 'notin' operators, values set can't be empty"
        )));
    }
    Ok(values)
}

fn checked_key(key: &str) -> Result<String, SelectorError> {
    let valid = !key.is_empty()
        && key.len() <= 316
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if valid {
        Ok(key.to_string())
    } else {
        Err(SelectorError(format!("unable to parse requirement: invalid label key {key:?}")))
    }
}

fn checked_value(value: &str) -> Result<String, SelectorError> {
    let valid =
        value.len() <= 63 && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(value.to_string())
    } else {
        Err(SelectorError(format!("unable to parse requirement: invalid label value {value:?}")))
    }
}

impl FieldSelector {
    /// Parses a `fieldSelector` query value, accepting only `supported` paths plus name and namespace.
    pub fn parse(input: &str, supported: &[String]) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        for term in split_terms(input)? {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(SelectorError(format!("invalid selector: '{term}'; can't understand '{term}'")));
            };
            let field = field.trim();
            let known = field == "metadata.name"
                || field == "metadata.namespace"
                || supported.iter().any(|s| s == field);
            if !known {
                return Err(SelectorError(format!("field label not supported: {field}")));
            }
            reqs.push((field.to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector(reqs))
    }

    /// Whether `object` matches every requirement (a missing field reads as the empty string).
    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let actual = field
                .split('.')
                .try_fold(object, |v, part| v.get(part))
                .and_then(Value::as_str)
                .unwrap_or("");
            (actual == value) == *equal
        })
    }

    /// Whether the selector is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Both selectors of a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    /// The label selector.
    pub labels: LabelSelector,
    /// The field selector.
    pub fields: FieldSelector,
}

impl Selectors {
    /// Whether `object` matches both.
    pub fn matches(&self, object: &Value) -> bool {
        let labels = object.at("/metadata/labels").and_then(Value::as_object);
        self.labels.matches(labels) && self.fields.matches(object)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(labels: Value) -> Value {
        json!({"metadata": {"name": "p1", "namespace": "ns", "labels": labels}, "status": {"phase": "Running"}})
    }

    #[test]
    fn label_selectors_support_every_operator() {
        let obj = pod(json!({"app": "web", "tier": "front"}));
        let labels = obj.at("/metadata/labels").and_then(Value::as_object);
        let cases = [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app in (web, db)", true),
            ("app notin (web)", false),
            ("missing notin (web)", true),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("app=web,tier in (front)", true),
            ("app=web,tier=back", false),
            ("", true),
        ];
        for (sel, expected) in cases {
            assert_eq!(LabelSelector::parse(sel).unwrap().matches(labels), expected, "{sel}");
        }
    }

    #[test]
    fn bad_label_selectors_are_parse_errors() {
        for sel in ["app in web", "app in ()", "a b c", "app=(x", "app=web,", "bad key=x", "app=va lue"] {
            assert!(LabelSelector::parse(sel).is_err(), "{sel}");
        }
    }

    #[test]
    fn field_selectors_match_name_namespace_and_kind_paths() {
        let obj = pod(json!({}));
        let supported = &["status.phase".to_string()];
        assert!(FieldSelector::parse("metadata.name=p1", supported).unwrap().matches(&obj));
        assert!(FieldSelector::parse("metadata.namespace!=other", supported).unwrap().matches(&obj));
        assert!(!FieldSelector::parse("status.phase==Pending", supported).unwrap().matches(&obj));
        let err = FieldSelector::parse("spec.nodeName=n1", supported).unwrap_err();
        assert_eq!(err.0, "field label not supported: spec.nodeName");
    }
}
