//! Counters and gauges, named like controller-runtime's so that dashboards read the same.
//!
//! One [`Metrics`] registry is shared by every part of the controller. Keys are a metric name plus
//! sorted labels, held in a `BTreeMap`, so a snapshot or a Prometheus rendering is byte-stable.
//! Scenarios, oracles and benches read these figures; nothing in here knows who reads them.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};

/// Reconciles by controller and result (`success`, `requeue`, `requeue_after`, `error`).
pub const RECONCILE_TOTAL: &str = "controller_runtime_reconcile_total";
/// Reconcile errors by controller and reason (`AlreadyExists`, `Conflict`, `Panic`, …).
pub const RECONCILE_ERRORS_TOTAL: &str = "controller_runtime_reconcile_errors_total";
/// Reconciles running right now, by controller (a gauge).
pub const ACTIVE_WORKERS: &str = "controller_runtime_active_workers";
/// Adds handled by a workqueue, by queue name.
pub const WORKQUEUE_ADDS_TOTAL: &str = "workqueue_adds_total";
/// Current depth of a workqueue, by queue name (a gauge).
pub const WORKQUEUE_DEPTH: &str = "workqueue_depth";
/// Delayed adds (`add_after`, including rate-limited requeues), by queue name, as client-go counts them.
pub const WORKQUEUE_RETRIES_TOTAL: &str = "workqueue_retries_total";
/// Kubernetes API calls made by the controller, by verb, kind and outcome code.
pub const API_CALLS_TOTAL: &str = "arc_api_calls_total";
/// GitHub calls made by the controller and listener, by operation and outcome.
pub const GITHUB_CALLS_TOTAL: &str = "arc_github_calls_total";
/// HTTP attempts made by the GitHub client (each retry counts), by operation and status code
/// (`transport` or `timeout` when there was no answer).
pub const GITHUB_HTTP_REQUESTS_TOTAL: &str = "arc_github_http_requests_total";
/// Deep copies of cached objects, by kind.
pub const DEEP_COPIES_TOTAL: &str = "arc_deep_copies_total";
/// Update events dropped by a predicate, by predicate name.
pub const PREDICATE_DROPPED_TOTAL: &str = "arc_predicate_dropped_updates_total";
/// Scale-ups the EphemeralRunnerSet controller skipped because the gap came from its own clean-up of
/// finished runners under the same patch ID (\[V\] `finishedRunnerCleanupPatchID`), by
/// `ephemeral_runner_set` (`namespace/name`).
pub const ERS_SCALE_UP_SUPPRESSED_TOTAL: &str = "arc_ers_scale_up_suppressed_total";
/// Legacy runner pods deleted so that they are recreated, by reason (`template_changed`, `stopped`, …).
pub const LEGACY_POD_RECREATIONS_TOTAL: &str = "arc_legacy_runner_pod_recreations_total";
/// Legacy runner pod recreations called off because the runner could not be unregistered (busy, or
/// a GitHub error), by reason (`runner_busy`, …).
pub const LEGACY_RECREATIONS_DEFERRED_TOTAL: &str = "arc_legacy_runner_recreations_deferred_total";

/// Whether this process leads (1) or stands by (0), by lease name: client-go's leader-election gauge.
pub const LEADER_ELECTION_MASTER_STATUS: &str = "leader_election_master_status";

/// The Prometheus type of metric `name`: the gauges are named here, everything else counts.
pub fn metric_type(name: &str) -> &'static str {
    match name {
        ACTIVE_WORKERS | WORKQUEUE_DEPTH | LEADER_ELECTION_MASTER_STATUS => "gauge",
        _ => "counter",
    }
}

/// A metric name with its labels, sorted by label name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MetricKey {
    /// The metric name.
    pub name: String,
    /// `(label, value)` pairs, sorted by label.
    pub labels: Vec<(String, String)>,
}

impl MetricKey {
    /// Builds a key, sorting `labels`.
    pub fn new(name: &str, labels: &[(&str, &str)]) -> Self {
        let mut labels: Vec<(String, String)> =
            labels.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        labels.sort();
        MetricKey { name: name.to_string(), labels }
    }

    /// The value of label `label`, if present.
    pub fn label(&self, label: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| k == label).map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for MetricKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if self.labels.is_empty() {
            return Ok(());
        }
        f.write_char('{')?;
        for (i, (k, v)) in self.labels.iter().enumerate() {
            if i > 0 {
                f.write_char(',')?;
            }
            write!(f, "{k}=\"{v}\"")?;
        }
        f.write_char('}')
    }
}

/// The shared registry. Cheap to clone; clones share values.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    values: Arc<Mutex<BTreeMap<MetricKey, i64>>>,
}

impl Metrics {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one to a counter.
    pub fn inc(&self, name: &str, labels: &[(&str, &str)]) {
        self.add(name, labels, 1);
    }

    /// Adds `n` (possibly negative, for gauges) to a value.
    pub fn add(&self, name: &str, labels: &[(&str, &str)], n: i64) {
        let key = MetricKey::new(name, labels);
        *self.lock().entry(key).or_insert(0) += n;
    }

    /// Sets a gauge.
    pub fn set(&self, name: &str, labels: &[(&str, &str)], value: i64) {
        self.lock().insert(MetricKey::new(name, labels), value);
    }

    /// The value under exactly these labels (0 when never touched).
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> i64 {
        self.lock().get(&MetricKey::new(name, labels)).copied().unwrap_or(0)
    }

    /// The sum over every label set of `name` whose labels include all of `filter`.
    pub fn sum(&self, name: &str, filter: &[(&str, &str)]) -> i64 {
        self.lock()
            .iter()
            .filter(|(k, _)| k.name == name && filter.iter().all(|(l, v)| k.label(l) == Some(v)))
            .map(|(_, v)| *v)
            .sum()
    }

    /// A copy of every value, in key order.
    pub fn snapshot(&self) -> BTreeMap<MetricKey, i64> {
        self.lock().clone()
    }

    /// The registry in Prometheus text format (no HELP/TYPE lines), one `key value` per line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (k, v) in self.lock().iter() {
            let _ = writeln!(out, "{k} {v}");
        }
        out
    }

    /// The registry in the Prometheus text exposition format (0.0.4): a `# TYPE` line before each
    /// metric's samples, label values escaped, in key order.
    pub fn render_prometheus(&self) -> String {
        let mut out = String::new();
        let mut current = "";
        let values = self.lock();
        for (key, value) in values.iter() {
            if key.name != current {
                current = &key.name;
                let _ = writeln!(out, "# TYPE {} {}", key.name, metric_type(&key.name));
            }
            out.push_str(&key.name);
            if !key.labels.is_empty() {
                let labels: Vec<String> =
                    key.labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape_label(v))).collect();
                let _ = write!(out, "{{{}}}", labels.join(","));
            }
            let _ = writeln!(out, " {value}");
        }
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<MetricKey, i64>> {
        self.values.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A label value as the exposition format quotes it: backslash, double quote and newline escaped.
fn escape_label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prometheus_rendering_types_each_metric_and_escapes_label_values() {
        let m = Metrics::new();
        m.inc(RECONCILE_TOTAL, &[("controller", "ephemeralrunner"), ("result", "success")]);
        m.set(ACTIVE_WORKERS, &[("controller", "ephemeralrunner")], 2);
        m.inc(API_CALLS_TOTAL, &[("verb", "get"), ("kind", "a\"b\\c")]);
        let text = m.render_prometheus();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "# TYPE arc_api_calls_total counter",
                "arc_api_calls_total{kind=\"a\\\"b\\\\c\",verb=\"get\"} 1",
                "# TYPE controller_runtime_active_workers gauge",
                "controller_runtime_active_workers{controller=\"ephemeralrunner\"} 2",
                "# TYPE controller_runtime_reconcile_total counter",
                "controller_runtime_reconcile_total{controller=\"ephemeralrunner\",result=\"success\"} 1",
            ]
        );
    }

    #[test]
    fn counters_sum_over_matching_labels_and_render_sorted() {
        let m = Metrics::new();
        m.inc(RECONCILE_TOTAL, &[("result", "success"), ("controller", "ephemeralrunner")]);
        m.inc(RECONCILE_TOTAL, &[("controller", "ephemeralrunner"), ("result", "success")]);
        m.inc(RECONCILE_TOTAL, &[("controller", "ephemeralrunner"), ("result", "error")]);
        m.inc(RECONCILE_TOTAL, &[("controller", "ephemeralrunnerset"), ("result", "success")]);
        assert_eq!(m.get(RECONCILE_TOTAL, &[("controller", "ephemeralrunner"), ("result", "success")]), 2);
        assert_eq!(m.sum(RECONCILE_TOTAL, &[("controller", "ephemeralrunner")]), 3);
        assert_eq!(m.sum(RECONCILE_TOTAL, &[]), 4);
        assert_eq!(
            m.render().lines().next(),
            Some("controller_runtime_reconcile_total{controller=\"ephemeralrunner\",result=\"error\"} 1")
        );
    }

    #[test]
    fn gauges_can_be_set_and_moved() {
        let m = Metrics::new();
        m.set(WORKQUEUE_DEPTH, &[("name", "q")], 3);
        m.add(WORKQUEUE_DEPTH, &[("name", "q")], -1);
        assert_eq!(m.get(WORKQUEUE_DEPTH, &[("name", "q")]), 2);
    }
}
