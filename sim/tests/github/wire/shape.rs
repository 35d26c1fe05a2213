//! Comparing an answer of the fake with a golden case's answer: the same field names and JSON types,
//! recursively, and equal values except where the fake mints them (ids, tokens, times, URLs with ids,
//! error texts).

use serde_json::Value;

/// Keys whose values the fake mints from its own counters, seed and clock: only their type is compared.
const MINTED: &[&str] = &[
    "id",
    "runnerScaleSetId",
    "runnerRequestId",
    "runnerId",
    "messageId",
    "workflowRunId",
    "jobId",
    "sessionId",
    "token",
    "messageQueueAccessToken",
    "encodedJITConfig",
    "expires_at",
    "createdOn",
    "queueTime",
    "scaleSetAssignTime",
    "runnerAssignTime",
    "finishTime",
    "messageQueueUrl",
    "runnerJitConfigUrl",
    "acquireJobUrl",
    "message",
    "documentation_url",
];

/// The differences between `expected` and `actual`, one line each; `also_minted` adds keys to
/// [`MINTED`] for one case.
pub(super) fn differences(expected: &Value, actual: &Value, also_minted: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    compare("$", None, expected, actual, also_minted, &mut out);
    out
}

fn compare(at: &str, key: Option<&str>, want: &Value, got: &Value, extra: &[&str], out: &mut Vec<String>) {
    let minted = key.is_some_and(|k| MINTED.contains(&k) || extra.contains(&k));
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for name in w.keys().filter(|k| !g.contains_key(*k)) {
                out.push(format!("{at}.{name}: missing"));
            }
            for name in g.keys().filter(|k| !w.contains_key(*k)) {
                out.push(format!("{at}.{name}: not in the case"));
            }
            for (name, w_value) in w {
                if let Some(g_value) = g.get(name) {
                    compare(&format!("{at}.{name}"), Some(name), w_value, g_value, extra, out);
                }
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() != g.len() => {
            out.push(format!("{at}: {} items in the case, {} here", w.len(), g.len()));
        }
        (Value::Array(w), Value::Array(g)) => {
            for (i, (w, g)) in w.iter().zip(g).enumerate() {
                compare(&format!("{at}[{i}]"), key, w, g, extra, out);
            }
        }
        (Value::String(w), Value::String(g)) if embedded_json(w).is_some() => {
            match (embedded_json(w), serde_json::from_str::<Value>(g)) {
                (Some(w), Ok(g)) => compare(&format!("{at}(json)"), None, &w, &g, extra, out),
                _ => out.push(format!("{at}: a JSON string in the case, {g:?} here")),
            }
        }
        (Value::Number(w), Value::Number(g)) if w.is_i64() != g.is_i64() => {
            out.push(format!("{at}: number kinds differ: {w} in the case, {g} here"));
        }
        _ if kind(want) != kind(got) => {
            out.push(format!("{at}: {} in the case, {} here: {got}", kind(want), kind(got)));
        }
        _ if !minted && want != got => out.push(format!("{at}: {want} in the case, {got} here")),
        _ => {}
    }
}

/// A string holding a JSON array or object (a message's `body`), parsed.
fn embedded_json(text: &str) -> Option<Value> {
    let parsed: Value = serde_json::from_str(text).ok()?;
    (parsed.is_array() || parsed.is_object()).then_some(parsed)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[test]
fn renamed_fields_type_changes_and_values_are_differences_but_minted_values_are_not() {
    let case = serde_json::json!({"id": 5, "name": "a", "labels": [{"type": "System"}], "body": "[{\"runnerId\":1}]"});
    let same = serde_json::json!({"id": 9, "name": "a", "labels": [{"type": "System"}], "body": "[{\"runnerId\":2}]"});
    assert!(differences(&case, &same, &[]).is_empty());
    let renamed = serde_json::json!({"id": 5, "Name": "a", "labels": [{"type": "System"}], "body": "[{\"runnerID\":1}]"});
    assert_eq!(differences(&case, &renamed, &[]).len(), 4, "{:?}", differences(&case, &renamed, &[]));
    let retyped = serde_json::json!({"id": "5", "name": "b", "labels": [], "body": "[{\"runnerId\":1}]"});
    assert_eq!(differences(&case, &retyped, &[]).len(), 3, "{:?}", differences(&case, &retyped, &[]));
}
