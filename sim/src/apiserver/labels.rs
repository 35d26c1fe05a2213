//! Label and annotation validation, worded as apimachinery words it: `IsQualifiedName`,
//! `IsValidLabelValue` and `IsDNS1123Subdomain` (`k8s.io/apimachinery/pkg/util/validation`), and
//! `ValidateLabels` / `ValidateAnnotations` (`pkg/apis/meta/v1/validation`,
//! `pkg/api/validation/objectmeta.go`), which every kind's metadata goes through on create and update.
//!
//! Simplification: Go walks the label map in random order; the fake reports keys in sorted order.

use serde_json::Value;

use super::gofmt;
use super::status::Cause;
use super::untouched::Untouched;

/// The longest label value (`LabelValueMaxLength`).
pub const LABEL_VALUE_MAX: usize = 63;
/// The longest name part of a qualified name (`qualifiedNameMaxLength`).
pub const QUALIFIED_NAME_MAX: usize = 63;
/// The longest DNS-1123 subdomain (`DNS1123SubdomainMaxLength`).
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// The most bytes all annotation keys and values of an object may take (`TotalAnnotationSizeLimitB`).
pub const ANNOTATIONS_SIZE_MAX: usize = 256 * 1024;

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// Whether `value` matches `QUALIFIED_NAME_FMT`: alphanumerics at both ends, `-`, `_`, `.` between.
/// Matched by hand (the patterns are simple; a regex search was a third of validating a label), and
/// tested against the regex itself.
fn matches_qualified_name(value: &str) -> bool {
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    framed(value, u8::is_ascii_alphanumeric, inner)
}

/// Whether `value` is non-empty, starts and ends with an `edge` byte, and holds only `inner` bytes.
fn framed(value: &str, edge: impl Fn(&u8) -> bool, inner: impl Fn(&u8) -> bool) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => edge(first) && edge(last) && bytes.iter().all(inner),
        _ => false,
    }
}

/// Whether `value` matches `LABEL_VALUE_FMT`: empty, or a qualified name's name part.
fn matches_label_value(value: &str) -> bool {
    value.is_empty() || matches_qualified_name(value)
}

/// Whether `value` matches `DNS1123_SUBDOMAIN_FMT`: dot-separated labels of lower-case alphanumerics
/// and `-`, each starting and ending with an alphanumeric.
fn matches_dns1123_subdomain(value: &str) -> bool {
    let lower_alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    value.split('.').all(|label| framed(label, lower_alnum, |b| lower_alnum(b) || *b == b'-'))
}

/// `RegexError`: the message, the examples, and the pattern used (Go's text has two spaces before
/// each "or").
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!("{msg} (e.g. {}regex used for validation is '{fmt}')", examples.join(" or "))
}

fn max_len_error(max: usize) -> String {
    format!("must be no more than {max} characters")
}

/// `IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name part.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let name_rule = || regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"]);
    let mut parts = value.splitn(3, '/');
    let parts = [parts.next(), parts.next(), parts.next()];
    let mut errs = Vec::new();
    let name = match parts {
        [Some(name), None, None] => name,
        [Some(prefix), Some(name), None] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(is_dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                name_rule()
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".into());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_error(QUALIFIED_NAME_MAX)));
    }
    if !matches_qualified_name(name) {
        errs.push(format!("name part {}", name_rule()));
    }
    errs
}

/// `IsValidLabelValue`.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX {
        errs.push(max_len_error(LABEL_VALUE_MAX));
    }
    if !matches_label_value(value) {
        errs.push(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, &["MyValue", "my_value", "12345"]));
    }
    errs
}

fn invalid(field: &str, bad: &str, detail: String) -> Cause {
    let bad = gofmt::bad_value(&Value::String(bad.to_string()));
    Cause {
        reason: "FieldValueInvalid",
        field: field.into(),
        message: format!("Invalid value: {bad}: {detail}"),
    }
}

/// `ValidateLabels` of `metadata.labels` (keys in sorted order).
pub fn validate_labels(meta: &Value) -> Vec<Cause> {
    validate_labels_within(meta, Untouched::NOTHING)
}

/// [`validate_labels`] of the labels a patch did not leave as stored (`left`, within the labels).
fn validate_labels_within(meta: &Value, left: Untouched<'_>) -> Vec<Cause> {
    let Some(labels) = meta.get("labels").and_then(Value::as_object) else { return Vec::new() };
    let mut causes = Vec::new();
    for (key, value) in labels.iter().filter(|(key, _)| !left.leaves(key)) {
        causes.extend(is_qualified_name(key).into_iter().map(|m| invalid("metadata.labels", key, m)));
        let value = value.as_str().unwrap_or_default();
        causes.extend(is_valid_label_value(value).into_iter().map(|m| invalid("metadata.labels", value, m)));
    }
    causes
}

/// `ValidateAnnotations` of `metadata.annotations`: keys are qualified names (case aside), and keys
/// and values together take at most 256 KiB.
pub fn validate_annotations(meta: &Value) -> Vec<Cause> {
    let Some(annotations) = meta.get("annotations").and_then(Value::as_object) else { return Vec::new() };
    let mut causes = Vec::new();
    let mut size = 0;
    for (key, value) in annotations {
        let lower = if key.bytes().any(|b| b.is_ascii_uppercase()) || !key.is_ascii() {
            std::borrow::Cow::Owned(key.to_lowercase())
        } else {
            std::borrow::Cow::Borrowed(key.as_str())
        };
        causes.extend(is_qualified_name(&lower).into_iter().map(|m| invalid("metadata.annotations", key, m)));
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if size > ANNOTATIONS_SIZE_MAX {
        causes.push(Cause {
            reason: "FieldValueTooLong",
            field: "metadata.annotations".into(),
            message: format!("Too long: may not be more than {ANNOTATIONS_SIZE_MAX} bytes"),
        });
    }
    causes
}

/// Labels then annotations of an object's metadata, as `ValidateObjectMeta` orders them.
pub fn validate_metadata(object: &Value) -> Vec<Cause> {
    validate_metadata_patched(object, Untouched::NOTHING)
}

/// [`validate_metadata`] of a patched object: labels a patch left as stored ([`Untouched`], from the
/// object's top level) were valid when stored and are not checked again, nor are annotations the
/// patch did not name (their size limit is over all of them, so a patch naming any checks all).
pub fn validate_metadata_patched(object: &Value, untouched: Untouched<'_>) -> Vec<Cause> {
    let Some(meta) = object.get("metadata") else { return Vec::new() };
    if untouched.leaves("metadata") {
        return Vec::new();
    }
    let named = untouched.within("metadata");
    let mut causes = if named.leaves("labels") {
        Vec::new()
    } else {
        validate_labels_within(meta, named.within("labels"))
    };
    if !named.leaves("annotations") {
        causes.extend(validate_annotations(meta));
    }
    causes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every string of up to four characters over an alphabet that hits each class's edges.
    fn strings() -> Vec<String> {
        let alphabet = ['a', 'Z', '0', '-', '_', '.', '/', 'é', ' '];
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..4 {
            last = last.iter().flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}"))).collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn a_patch_checks_the_labels_it_names_and_every_annotation_once_it_names_one() {
        use crate::apiserver::body::Body;
        use crate::apiserver::patch::PatchType;
        let object =
            json!({"metadata": {"labels": {"bad key!": "v", "ok": "v"}, "annotations": {"Bad Key": "v"}}});
        let check = |patch: Value| {
            let untouched = Untouched::of(PatchType::Merge, Body::new(b"", Some(&patch)));
            validate_metadata_patched(&object, untouched).into_iter().map(|c| c.field).collect::<Vec<_>>()
        };
        let (labels, annotations) =
            (validate_labels(&object["metadata"]), validate_annotations(&object["metadata"]));
        assert!(!labels.is_empty() && !annotations.is_empty());
        let fields = |causes: &[Cause]| causes.iter().map(|c| c.field.clone()).collect::<Vec<_>>();
        assert!(check(json!({"spec": {}})).is_empty());
        assert!(check(json!({"metadata": {"labels": {"ok": "w"}}})).is_empty());
        assert_eq!(check(json!({"metadata": {"labels": {"bad key!": "v"}}})), fields(&labels));
        assert_eq!(check(json!({"metadata": {"annotations": {"x": "y"}}})), fields(&annotations));
        assert_eq!(check(json!({"metadata": null})), fields(&validate_metadata(&object)));
    }

    #[test]
    fn the_hand_matchers_agree_with_apimachinerys_patterns() {
        let anchored = |fmt: &str| regex::Regex::new(&format!("^{fmt}$")).unwrap();
        type Matcher = fn(&str) -> bool;
        let matchers: [(&str, Matcher); 3] = [
            (QUALIFIED_NAME_FMT, matches_qualified_name),
            (LABEL_VALUE_FMT, matches_label_value),
            (DNS1123_SUBDOMAIN_FMT, matches_dns1123_subdomain),
        ];
        for (fmt, matches) in matchers {
            let pattern = anchored(fmt);
            for s in strings() {
                assert_eq!(matches(&s), pattern.is_match(&s), "{fmt} on {s:?}");
            }
        }
    }

    #[test]
    fn qualified_names_take_an_optional_dns_prefix() {
        for ok in ["app", "app.kubernetes.io/name", "A_b-c.d", "x"] {
            assert!(is_qualified_name(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            is_qualified_name("-bad"),
            [
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
        assert_eq!(is_qualified_name("/x"), ["prefix part must be non-empty"]);
        assert!(
            is_qualified_name("Example.com/x")[0].starts_with("prefix part a lowercase RFC 1123 subdomain")
        );
        assert_eq!(is_qualified_name(&"a".repeat(64)), ["name part must be no more than 63 characters"]);
        assert!(is_qualified_name("a/b/c")[0].starts_with("a qualified name must consist of"));
        assert_eq!(is_qualified_name("").len(), 2, "empty and not matching");
    }

    #[test]
    fn label_values_may_be_empty_but_not_too_long_or_odd() {
        assert!(is_valid_label_value("").is_empty() && is_valid_label_value("v1.2_x").is_empty());
        assert_eq!(
            is_valid_label_value("bad value"),
            [
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ]
        );
        assert_eq!(is_valid_label_value(&"v".repeat(64)), ["must be no more than 63 characters"]);
    }

    #[test]
    fn bad_labels_and_annotations_become_causes_on_their_map() {
        let object = json!({"metadata": {"labels": {"ok": "fine", "bad key": "v", "k": "-v"},
            "annotations": {"Example.com/Key": "x", "no//": "y"}}});
        let causes = validate_metadata(&object);
        let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["metadata.labels", "metadata.labels", "metadata.annotations"]);
        assert!(causes[0].message.starts_with("Invalid value: \"bad key\": name part must consist of"));
        assert!(causes[1].message.starts_with("Invalid value: \"-v\": a valid label must be"));
        assert!(causes[2].message.starts_with("Invalid value: \"no//\": a qualified name must consist of"));
        let huge = json!({"metadata": {"annotations": {"a": "x".repeat(ANNOTATIONS_SIZE_MAX)}}});
        let causes = validate_metadata(&huge);
        assert_eq!(causes[0].message, "Too long: may not be more than 262144 bytes");
    }
}
