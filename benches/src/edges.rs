//! The watch edges the update predicates sit on, measured from the world's side. For each edge: the
//! updates the controller's informer was sent, those that changed nothing the owner's reconciler reads
//! (the most a predicate may drop), and those its predicate dropped (the controller's own metric).
//!
//! What each reconciler reads is written here over the wire JSON, from ARC-MODEL §5.1 and ARC's
//! reconcilers, apart from the controller's projections (`arc_controller::scaleset::predicates`), so a
//! test that compares the two counts checks the predicate instead of restating it. Simplification: the
//! controller runs one informer per resource, each MODIFIED delivery to it is one update whose old
//! object is the change's previous state; a relist after 410 would add updates not counted here (the
//! quiet worlds the tests use never relist).

use std::collections::BTreeMap;

use arc_controller::runtime::metrics::PREDICATE_DROPPED_TOTAL;
use arc_controller::scaleset::predicates::{
    ARS_FROM_ERS, EPHEMERAL_RUNNER_FROM_POD, ERS_FROM_EPHEMERAL_RUNNER,
};
use arc_judging::probes::history::Commits;
use arc_judging::view::is_controller;
use arc_sim::apiserver::{Committed, EventType, WatchItem, WatchSent};
use arc_sim::record::Interest;
use arc_world::RunRecord;
use serde_json::{Value, json};

/// The fields a reconciler reads of one watched object, as comparable JSON.
type View = fn(&Value, &Reads) -> Vec<Value>;

/// Which optional fields the reconcilers read, as the run's switches set them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// The runner-set reconciler reads `status.jobId` of its runners (`predicate_includes_job_id`).
    pub runner_job_id: bool,
    /// The scale-set reconciler reads its runner set's counts (`ars_predicate_includes_counts`).
    pub runner_set_counts: bool,
}

/// One watch edge: the owner's predicate (its metric label) on updates of `resource`.
#[derive(Debug, Clone, Copy)]
pub struct Edge {
    /// The predicate's name in the dropped-updates metric.
    pub predicate: &'static str,
    /// Owner ← watched, for tables.
    pub label: &'static str,
    /// The watched resource (plural).
    pub resource: &'static str,
    view: View,
}

/// The three predicated edges of the scale-set controllers.
pub const EDGES: [Edge; 3] = [
    Edge {
        predicate: EPHEMERAL_RUNNER_FROM_POD,
        label: "EphemeralRunner ← Pod",
        resource: "pods",
        view: pod_view,
    },
    Edge {
        predicate: ERS_FROM_EPHEMERAL_RUNNER,
        label: "EphemeralRunnerSet ← EphemeralRunner",
        resource: "ephemeralrunners",
        view: runner_view,
    },
    Edge {
        predicate: ARS_FROM_ERS,
        label: "AutoscalingRunnerSet ← EphemeralRunnerSet",
        resource: "ephemeralrunnersets",
        view: runner_set_view,
    },
];

/// One edge's counts in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EdgeCounts {
    /// Updates delivered to the controller's informer.
    pub seen: u64,
    /// Of those, updates whose old and new objects read the same to the owner.
    pub removable: u64,
    /// Updates the predicate dropped.
    pub dropped: i64,
}

/// What a run must keep for [`measure`].
pub fn needs() -> Interest {
    let resources: Vec<&str> = EDGES.iter().map(|e| e.resource).collect();
    Interest::of_resources::<WatchSent>(&resources).and_resources::<Committed>(&resources)
}

/// Every edge's counts in `record`, by predicate name.
pub fn measure(record: &RunRecord, reads: &Reads) -> BTreeMap<&'static str, EdgeCounts> {
    EDGES.iter().map(|edge| (edge.predicate, edge.counts(record, reads))).collect()
}

impl Edge {
    fn counts(&self, record: &RunRecord, reads: &Reads) -> EdgeCounts {
        let commits = Commits::of(record, self.resource);
        let mut out = EdgeCounts {
            dropped: record.metric(PREDICATE_DROPPED_TOTAL, &[("predicate", self.predicate)]),
            ..EdgeCounts::default()
        };
        let updates = record
            .events_of::<WatchSent>()
            .filter(|w| w.resource == self.resource && w.actor.as_deref().is_some_and(is_controller));
        for sent in updates {
            let WatchItem::Change { kind: "MODIFIED", key, rv } = &sent.item else { continue };
            let Some(change) = rv.parse().ok().and_then(|rv| commits.change_at(key, rv)) else { continue };
            let Some(old) = change.old.as_deref().filter(|_| change.kind == EventType::Modified) else {
                continue;
            };
            out.seen += 1;
            out.removable += u64::from((self.view)(old, reads) == (self.view)(&change.object, reads));
        }
        out
    }
}

/// `v` at `ptr`, with an absent value read as `absent` (an absent list or map equals an empty one).
fn at(v: &Value, ptr: &str, absent: Value) -> Value {
    v.pointer(ptr).filter(|x| !x.is_null()).cloned().unwrap_or(absent)
}

/// The metadata every reconciler acts on: generation, deletion, finalizers, labels, annotations and
/// owners (resourceVersion, managedFields and timestamps are not read).
fn reconciled_metadata(v: &Value) -> Vec<Value> {
    vec![
        at(v, "/metadata/generation", Value::Null),
        at(v, "/metadata/deletionTimestamp", Value::Null),
        at(v, "/metadata/finalizers", json!([])),
        at(v, "/metadata/labels", json!({})),
        at(v, "/metadata/annotations", json!({})),
        at(v, "/metadata/ownerReferences", json!([])),
    ]
}

/// What ARC's EphemeralRunner reconciler reads of its pod (`updateRunStatusFromPod` and the pod-state
/// checks): identity, deletion, phase, reason, message, container and init-container states, and
/// whether its latest Ready condition is True. Labels, IPs and other conditions it does not read.
fn pod_view(pod: &Value, _: &Reads) -> Vec<Value> {
    vec![
        at(pod, "/metadata/uid", Value::Null),
        at(pod, "/metadata/deletionTimestamp", Value::Null),
        at(pod, "/status/phase", Value::Null),
        at(pod, "/status/reason", Value::Null),
        at(pod, "/status/message", Value::Null),
        at(pod, "/status/containerStatuses", json!([])),
        at(pod, "/status/initContainerStatuses", json!([])),
        Value::Bool(ready(pod)),
    ]
}

/// The status of the pod's `Ready` condition with the latest transition time (none: not ready).
fn ready(pod: &Value) -> bool {
    let conditions = pod.pointer("/status/conditions").and_then(Value::as_array);
    let mut latest: Option<(&str, &Value)> = None;
    for condition in conditions.into_iter().flatten().filter(|c| c["type"] == "Ready") {
        let Some(at) = condition["lastTransitionTime"].as_str() else { continue };
        if latest.is_none_or(|(best, _)| at > best) {
            latest = Some((at, condition));
        }
    }
    latest.is_some_and(|(_, c)| c["status"] == "True")
}

/// What ARC's EphemeralRunnerSet reconciler reads of a runner: metadata, spec, phase (absent reads
/// Pending), runner id, and the job id where the switch has it read `HasJob()`.
fn runner_view(er: &Value, reads: &Reads) -> Vec<Value> {
    let mut view = reconciled_metadata(er);
    view.push(at(er, "/spec", json!({})));
    let phase = er.pointer("/status/phase").and_then(Value::as_str).filter(|p| !p.is_empty());
    view.push(Value::from(phase.unwrap_or("Pending")));
    view.push(at(er, "/status/runnerId", json!(0)));
    if reads.runner_job_id {
        view.push(at(er, "/status/jobId", json!("")));
    }
    view
}

/// What ARC's AutoscalingRunnerSet reconciler reads of its runner set: metadata, spec, phase, the
/// applied revision, and the counts its status mirrors where the switch has it read them.
fn runner_set_view(ers: &Value, reads: &Reads) -> Vec<Value> {
    let mut view = reconciled_metadata(ers);
    view.push(at(ers, "/spec", json!({})));
    view.push(at(ers, "/status/phase", Value::Null));
    view.push(at(ers, "/status/appliedActionableRevision", json!(0)));
    if reads.runner_set_counts {
        for field in [
            "currentReplicas",
            "pendingEphemeralRunners",
            "runningEphemeralRunners",
            "failedEphemeralRunners",
        ] {
            view.push(at(ers, &format!("/status/{field}"), json!(0)));
        }
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    const READS: Reads = Reads { runner_job_id: true, runner_set_counts: true };

    #[test]
    fn a_pod_update_of_ips_and_scheduling_alone_reads_the_same() {
        let old = json!({"metadata": {"uid": "u"}, "status": {"phase": "Pending"}});
        let new = json!({"metadata": {"uid": "u"}, "status": {"phase": "Pending", "podIP": "10.0.0.1",
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "t1"}]}});
        assert_eq!(pod_view(&old, &READS), pod_view(&new, &READS));
    }

    #[test]
    fn readiness_is_the_latest_ready_condition() {
        let pod = |status| {
            json!({"status": {"conditions": [
            {"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Ready", "status": status, "lastTransitionTime": "2026-01-01T00:00:01Z"}]}})
        };
        assert!(ready(&pod("True")));
        assert!(!ready(&pod("False")));
        assert_ne!(pod_view(&pod("True"), &READS), pod_view(&pod("False"), &READS));
    }

    #[test]
    fn a_runner_without_a_phase_reads_as_pending_and_its_job_id_only_where_read() {
        let bare = json!({"spec": {}});
        let pending = json!({"spec": {}, "status": {"phase": "Pending"}});
        assert_eq!(runner_view(&bare, &READS), runner_view(&pending, &READS));
        let with_job = json!({"spec": {}, "status": {"phase": "Pending", "jobId": "7"}});
        assert_ne!(runner_view(&pending, &READS), runner_view(&with_job, &READS));
        let without = Reads { runner_job_id: false, ..READS };
        assert_eq!(runner_view(&pending, &without), runner_view(&with_job, &without));
    }

    #[test]
    fn runner_set_counts_are_read_only_where_the_switch_says() {
        let a = json!({"status": {"currentReplicas": 1}});
        let b = json!({"status": {"currentReplicas": 2}});
        assert_ne!(runner_set_view(&a, &READS), runner_set_view(&b, &READS));
        let without = Reads { runner_set_counts: false, ..READS };
        assert_eq!(runner_set_view(&a, &without), runner_set_view(&b, &without));
    }
}
