//! Go's text formatting, as kube-apiserver's messages print values: `strconv.Quote` (`%q`), `%v` of a
//! float64 (shortest digits, exponent form outside 1e-4..1e6), `%v` of a decoded JSON value, the `%#v` Go syntax of a decoded JSON
//! map or slice, and `encoding/json`'s HTML escaping. Field errors embed values this way
//! (`Invalid value: "string"`, `Unsupported value: 1.5`), so a client matching on a message sees the
//! same text it sees from a real server.
//!
//! Simplification: non-printable Unicode beyond ASCII control characters is not escaped by [`quote`].

use serde_json::Value;

/// `strconv.Quote`: double quotes, with `"`, `\` and control characters escaped as Go escapes them.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `%v` of a float64: `strconv.FormatFloat(f, 'g', -1, 64)`.
pub fn float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` prints the shortest digits that round-trip, as Go's shortest formatting does.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("a decimal exponent");
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// `%v` of a decoded JSON number: integers as integers, everything else as a float64.
pub fn number(n: &serde_json::Number) -> String {
    match n.as_i64() {
        Some(i) => i.to_string(),
        None => float(n.as_f64().unwrap_or(f64::NAN)),
    }
}

/// `%#v` of a decoded JSON value (`map[string]interface {}{"a":1}`, `[]interface {}{"x"}`).
pub fn go_syntax(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_syntax).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> =
                map.iter().map(|(k, v)| format!("{}:{}", quote(k), go_syntax(v))).collect();
            format!("map[string]interface {{}}{{{}}}", entries.join(", "))
        }
    }
}

/// `%v` of a decoded JSON value: `map[k:v k2:v2]` (keys sorted), `[a b]`, strings bare, `<nil>`.
pub fn plain(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!("[{}]", items.iter().map(plain).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries.iter().map(|(k, v)| format!("{k}:{}", plain(v))).collect();
            format!("map[{}]", entries.join(" "))
        }
    }
}

/// A field error's bad value as `ErrorBody` prints it: `%q` for strings, `%v` for numbers and booleans,
/// `null` for nil, `%#v` for maps and slices.
pub fn bad_value(value: &Value) -> String {
    match value {
        Value::Null => "\"null\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Array(_) | Value::Object(_) => go_syntax(value),
    }
}

/// `json.Marshal` of a decoded object: compact, keys sorted, and `<`, `>`, `&` escaped as `\u003c`…
pub fn json(value: &Value) -> String {
    value.to_string().replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quote_escapes_as_strconv_quote() {
        assert_eq!(quote("string"), "\"string\"");
        assert_eq!(quote("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\x01\"");
        assert_eq!(quote("héllo"), "\"héllo\"");
    }

    #[test]
    fn floats_print_as_go_percent_v() {
        assert_eq!(float(1.5), "1.5");
        assert_eq!(float(2.0), "2");
        assert_eq!(float(123_456.0), "123456");
        assert_eq!(float(1_000_000.0), "1e+06");
        assert_eq!(float(123_456_789.0), "1.23456789e+08");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(0.00001), "1e-05");
        assert_eq!(float(-2.5e-7), "-2.5e-07");
        assert_eq!(float(1e100), "1e+100");
    }

    #[test]
    fn values_print_as_field_errors_print_them() {
        assert_eq!(bad_value(&json!(5)), "5");
        assert_eq!(bad_value(&json!(-1.5)), "-1.5");
        assert_eq!(bad_value(&json!("x")), "\"x\"");
        assert_eq!(bad_value(&json!(true)), "true");
        assert_eq!(bad_value(&json!(null)), "\"null\"");
        assert_eq!(
            bad_value(&json!({"b": 1, "a": ["x"]})),
            "map[string]interface {}{\"a\":[]interface {}{\"x\"}, \"b\":1}"
        );
    }

    #[test]
    fn json_escapes_html_characters_as_go_does() {
        assert_eq!(json(&json!({"a": "<&>"})), "{\"a\":\"\\u003c\\u0026\\u003e\"}");
    }
}
