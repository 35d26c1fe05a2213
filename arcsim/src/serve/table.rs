//! Tables, as kube-apiserver answers kubectl's `Accept: application/json;as=Table`: the printer columns
//! of each CRD (`additionalPrinterColumns`, read from the CRD manifests as data), a pod's READY,
//! STATUS and RESTARTS, and every object's AGE measured from the paused world's clock (so ages read
//! as they did at that simulated instant, not against today's date).

use arc_sim::json_at::At;
use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;
use serde_json::{Value, json};

use arc_sim::apiserver::ResourceType;

/// A printer column of a CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Its header.
    pub name: String,
    /// Its simple JSON path (`.status.phase`).
    pub json_path: String,
    /// Its type (`string`, `integer`, `date`, …).
    pub kind: String,
}

/// Printer columns by resource plural.
#[derive(Debug, Clone, Default)]
pub struct Columns(BTreeMap<String, Vec<Column>>);

impl Columns {
    /// The printer columns of every CRD in `manifests` (YAML, several documents); documents that are
    /// not CRDs, or whose columns cannot be read, are skipped.
    pub fn from_manifests(manifests: &str) -> Columns {
        let mut by_plural = BTreeMap::new();
        for document in serde_yaml::Deserializer::from_str(manifests) {
            let Ok(crd) = Value::deserialize(document) else { continue };
            let plural = crd.at("/spec/names/plural").and_then(Value::as_str).unwrap_or_default();
            let versions = crd.at("/spec/versions").and_then(Value::as_array).cloned().unwrap_or_default();
            let storage = versions.iter().find(|v| v.get("storage").and_then(Value::as_bool) == Some(true));
            let columns = storage.and_then(|v| v.get("additionalPrinterColumns")).and_then(Value::as_array);
            let columns: Vec<Column> = columns.into_iter().flatten().filter_map(column).collect();
            by_plural.insert(plural.to_string(), columns);
        }
        Columns(by_plural)
    }
}

fn column(c: &Value) -> Option<Column> {
    Some(Column {
        name: c.get("name")?.as_str()?.to_string(),
        json_path: c.get("jsonPath")?.as_str()?.to_string(),
        kind: c.get("type").and_then(Value::as_str).unwrap_or("string").to_string(),
    })
}

/// The table of `objects` of type `rt`, as it was at `now`.
pub fn table(rt: &ResourceType, columns: &Columns, objects: &[&Value], now: Timestamp, rv: u64) -> Value {
    let crd = columns.0.get(&rt.plural).filter(|_| rt.is_custom());
    let mut headers = vec![("Name", "string")];
    let custom: Vec<(String, String)> =
        crd.into_iter().flatten().map(|c| (c.name.clone(), c.kind.clone())).collect();
    if rt.is_pod() {
        headers.extend([("Ready", "string"), ("Status", "string"), ("Restarts", "string")]);
    }
    let mut definitions: Vec<Value> = headers.iter().map(|(n, t)| definition(n, t)).collect();
    definitions.extend(custom.iter().map(|(n, t)| definition(n, t)));
    definitions.push(definition("Age", "string"));
    let rows: Vec<Value> = objects.iter().map(|o| row(rt, crd.map(Vec::as_slice), o, now)).collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv.to_string()},
        "columnDefinitions": definitions, "rows": rows})
}

fn definition(name: &str, kind: &str) -> Value {
    let format = if name == "Name" { "name" } else { "" };
    json!({"name": name, "type": kind, "format": format, "description": "", "priority": 0})
}

fn row(rt: &ResourceType, crd: Option<&[Column]>, object: &Value, now: Timestamp) -> Value {
    let mut cells = vec![object.at("/metadata/name").cloned().unwrap_or(Value::Null)];
    if rt.is_pod() {
        cells.extend(pod_cells(object));
    }
    for c in crd.unwrap_or(&[]) {
        let value = object.at(&c.json_path.replace('.', "/")).cloned().unwrap_or(Value::Null);
        cells.push(if c.kind == "date" { age_cell(value.as_str(), now) } else { value });
    }
    cells.push(age_cell(object.at("/metadata/creationTimestamp").and_then(Value::as_str), now));
    let metadata = object.get("metadata").cloned().unwrap_or(Value::Null);
    json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": metadata}})
}

/// READY, STATUS and RESTARTS as `kubectl get pods` shows them (simplified: the first waiting or
/// terminated reason of a container stands for the pod).
fn pod_cells(pod: &Value) -> [Value; 3] {
    let statuses = pod.at("/status/containerStatuses").and_then(Value::as_array).cloned().unwrap_or_default();
    let containers = pod.at("/spec/containers").and_then(Value::as_array).map_or(0, Vec::len);
    let ready = statuses.iter().filter(|s| s.get("ready").and_then(Value::as_bool) == Some(true)).count();
    let restarts: i64 = statuses.iter().filter_map(|s| s.get("restartCount").and_then(Value::as_i64)).sum();
    let reason = statuses.iter().find_map(|s| {
        let state = s.get("state")?;
        state.at("/waiting/reason").or_else(|| state.at("/terminated/reason"))?.as_str()
    });
    let phase = pod.at("/status/phase").and_then(Value::as_str).unwrap_or("Pending");
    let status = if pod.at("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else {
        pod.at("/status/reason").and_then(Value::as_str).or(reason).unwrap_or(phase)
    };
    [json!(format!("{ready}/{containers}")), json!(status), json!(restarts.to_string())]
}

fn age_cell(timestamp: Option<&str>, now: Timestamp) -> Value {
    let Some(then) = timestamp.and_then(|t| t.parse::<Timestamp>().ok()) else { return json!("<unknown>") };
    let seconds = now.as_second().saturating_sub(then.as_second());
    json!(human_duration(seconds))
}

/// A duration as kubectl prints ages (`45s`, `6m40s`, `25m`, `3h12m`, `2d5h`).
pub fn human_duration(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..120 => format!("{s}s"),
        120..600 if s % 60 != 0 => format!("{}m{}s", s / 60, s % 60),
        120..10_800 => format!("{}m", s / 60),
        10_800..28_800 if (s / 60) % 60 != 0 => format!("{}h{}m", s / 3600, (s / 60) % 60),
        10_800..172_800 => format!("{}h", s / 3600),
        172_800..691_200 if (s / 3600) % 24 != 0 => format!("{}d{}h", s / 86_400, (s / 3600) % 24),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_kubectl_prints_them() {
        assert_eq!(human_duration(45), "45s");
        assert_eq!(human_duration(400), "6m40s");
        assert_eq!(human_duration(1500), "25m");
        assert_eq!(human_duration(11_520), "3h12m");
        assert_eq!(human_duration(190_800), "2d5h");
        assert_eq!(human_duration(-5), "0s");
    }

    #[test]
    fn arc_crds_name_their_printer_columns() {
        let columns = Columns::from_manifests(arc_controller::crd::MANIFESTS);
        let er: Vec<&str> = columns.0["ephemeralrunners"].iter().map(|c| c.name.as_str()).collect();
        assert!(er.contains(&"RunnerId") && er.contains(&"Phase"), "{er:?}");
    }
}
