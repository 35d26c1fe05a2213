//! What a finished run leaves behind for oracles, summaries and benches: the trace, the API server's
//! audit and read logs and counters, the fake GitHub's events, jobs and runners, the kubelet's events,
//! the controller's metrics, and the objects at the end.

use std::collections::BTreeMap;

use arc_controller::runtime::metrics::MetricKey;
use serde_json::Value;

use std::sync::Arc;

use crate::apiserver::reads::ReadEntry;
use crate::apiserver::{AuditEntry, Change, RequestCounts};
use crate::github::{GitHubEvent, Job, Runner};
use crate::kubelet::KubeletEvent;
use crate::seed::Seed;
use crate::trace::Trace;

/// Everything observable about one run.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The seed.
    pub seed: Seed,
    /// Which controller ran (`scale-set`, `legacy`).
    pub plug: &'static str,
    /// Sim ms when the world was found settled, if it was.
    pub settled_at_ms: Option<u64>,
    /// Sim ms when the run stopped.
    pub end_ms: u64,
    /// Sim ms when the last job was submitted (the workload's end).
    pub workload_end_ms: u64,
    /// The trace (lines kept per its mode).
    pub trace: Trace,
    /// Every mutating API request.
    pub audit: Vec<AuditEntry>,
    /// Which version of each EphemeralRunnerSet and EphemeralRunner each actor was handed, and when
    /// (gets, list items, watch events): the bound on what a controller's cache could hold.
    pub reads: Vec<ReadEntry>,
    /// API requests by verb, resource and code.
    pub api_requests: RequestCounts,
    /// The fake GitHub's event log.
    pub github_events: Vec<GitHubEvent>,
    /// Every job at the end.
    pub jobs: Vec<Job>,
    /// Every runner at the end (removed ones included).
    pub runners: Vec<Runner>,
    /// The kubelet's event log.
    pub kubelet_events: Vec<KubeletEvent>,
    /// The controller's metrics at the end (reconciles, API calls, copies, predicate drops).
    pub metrics: BTreeMap<MetricKey, i64>,
    /// The listeners' metrics at the end (their API and GitHub calls), kept apart from the controller's.
    pub listener_metrics: BTreeMap<MetricKey, i64>,
    /// Objects at the end, by resource plural.
    pub objects: BTreeMap<String, Vec<Value>>,
    /// Every committed change to the kinds oracles follow (pods, secrets and the ARC kinds), with its
    /// sim ms, in commit order. Shared with the store, so keeping them costs no copies.
    pub changes: Vec<(u64, Arc<Change>)>,
    /// Request ids of the jobs the workload submitted, in order.
    pub submitted_jobs: Vec<i64>,
    /// Controller restarts performed.
    pub controller_restarts: u32,
    /// Restarts that cut at least one reconcile short.
    pub restarts_mid_reconcile: u32,
    /// Resource plurals by registry id (to read `changes`).
    pub plurals: Vec<String>,
}

impl RunRecord {
    /// Sum of a controller metric over label sets matching `filter`.
    pub fn metric(&self, name: &str, filter: &[(&str, &str)]) -> i64 {
        self.metrics
            .iter()
            .filter(|(k, _)| k.name == name && filter.iter().all(|(l, v)| k.label(l) == Some(v)))
            .map(|(_, v)| *v)
            .sum()
    }

    /// The recorded changes of `plural`, in commit order.
    pub fn changes_of<'a>(&'a self, plural: &'a str) -> impl Iterator<Item = &'a (u64, Arc<Change>)> + 'a {
        self.changes.iter().filter(move |(_, c)| c.key.resource == self.resource_id(plural))
    }

    fn resource_id(&self, plural: &str) -> usize {
        self.plurals.iter().position(|p| p == plural).unwrap_or(usize::MAX)
    }

    /// Objects of `plural` at the end.
    pub fn objects_of(&self, plural: &str) -> &[Value] {
        self.objects.get(plural).map(Vec::as_slice).unwrap_or(&[])
    }
}
