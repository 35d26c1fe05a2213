//! Deletions of live runners: never while their runner holds a job (race 3, §8.3), and never given a
//! Running phase once deletion has begun (§5.2).

use std::collections::BTreeMap;

use arc_sim::apiserver::{AuditEntry, Committed};
use arc_sim::faults::ApiVerb;
use arc_sim::github::EventKind;
use arc_sim::github::GitHubEvent;
use arc_sim::kubelet::KubeletEvent;
use arc_sim::kubelet::KubeletEventKind;
use arc_sim::record::{Event, Interest};
use arc_sim::world::RunRecord;

use super::Oracle;
use super::view::{is_deleting, key_of, runner_id, runner_phase};
use crate::story::{Evidence, Subject};
use crate::verdict::Violation;

/// When the controller deletes an EphemeralRunner whose pod is still running, its runner holds no job
/// at GitHub (RemoveRunner first: removed, or kept on JobStillRunning).
pub struct NoBusyRunnerDeleted;

impl Oracle for NoBusyRunnerDeleted {
    fn name(&self) -> &'static str {
        "no-busy-runner-deleted"
    }

    fn describe(&self) -> &'static str {
        "the controller never deletes a runner with a live pod while GitHub has a job assigned to it"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<AuditEntry>(&["ephemeralrunners"])
            .and_resources::<Committed>(&["ephemeralrunners"])
            .and::<GitHubEvent>()
            .and::<KubeletEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let ids = runner_ids_by_name(run);
        let running = running_pods(run);
        let mut out = Vec::new();
        for a in run.audit().filter(|a| a.resource == "ephemeralrunners" && a.verb == ApiVerb::Delete) {
            if a.actor != "controller" || a.code >= 300 || a.status_subresource {
                continue;
            }
            let key = format!("{}/{}", a.namespace, a.name);
            let Some(id) = ids.get(&key) else { continue };
            let pod_live = running
                .get(&key)
                .is_some_and(|spans| spans.iter().any(|(from, to)| *from <= a.ms && a.ms < *to));
            if let Some(job) = job_held_at(run, *id, a.ms).filter(|_| pod_live) {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: a.ms,
                    objects: vec![
                        format!("ephemeralrunner {key}"),
                        format!("runner {id}"),
                        format!("job {job}"),
                    ],
                    message: "deleted while its pod ran and GitHub had a job assigned to its runner".into(),
                });
            }
        }
        out
    }

    /// The delete, the commit that gave the runner its id, its pod's container start and the job's
    /// assignment.
    fn evidence(&self, run: &RunRecord, violation: &Violation) -> Evidence {
        let named = Subject::parse_all(&violation.objects);
        let evidence = Evidence::around(run, violation, &self.needs());
        evidence.citing(run, |e| read_by_busy_runner_deleted(e, &named, violation.at_ms))
    }
}

/// Whether [`NoBusyRunnerDeleted`] read `event` to find a violation about `named` at `at_ms`.
fn read_by_busy_runner_deleted(event: &Event, named: &[Subject], at_ms: u64) -> bool {
    let (mut key, mut runner, mut job) = ("", 0, 0);
    for subject in named {
        match subject {
            Subject::Object { key: k, .. } => key = k,
            Subject::Runner(id) => runner = *id,
            Subject::Job(id) => job = *id,
        }
    }
    if let Some(a) = event.get::<AuditEntry>() {
        return a.verb == ApiVerb::Delete && a.ms == at_ms && format!("{}/{}", a.namespace, a.name) == key;
    }
    if let Some(c) = event.get::<Committed>() {
        let was = c.change.old.as_deref().map_or(0, runner_id);
        return key_of(&c.change.object) == key && runner_id(&c.change.object) == runner && was != runner;
    }
    if let Some(k) = event.get::<KubeletEvent>() {
        return k.pod == key && matches!(k.kind, KubeletEventKind::ContainerStarted { .. });
    }
    event.get::<GitHubEvent>().is_some_and(|g| {
        matches!(g.kind, EventKind::JobAssigned { request_id, runner_id } if request_id == job && runner_id == runner)
    })
}

/// `namespace/name → runnerId` of every EphemeralRunner that registered.
fn runner_ids_by_name(run: &RunRecord) -> BTreeMap<String, i64> {
    run.changes_of("ephemeralrunners")
        .filter(|(_, c)| runner_id(&c.object) != 0)
        .map(|(_, c)| (key_of(&c.object), runner_id(&c.object)))
        .collect()
}

/// Per pod `namespace/name`: the spans (start, stop) its main container ran.
fn running_pods(run: &RunRecord) -> BTreeMap<String, Vec<(u64, u64)>> {
    let mut spans: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    for e in run.kubelet_events() {
        match e.kind {
            KubeletEventKind::ContainerStarted { .. } => {
                spans.entry(e.pod.clone()).or_default().push((e.ms, u64::MAX))
            }
            KubeletEventKind::ContainerStopped { .. } => {
                if let Some(last) = spans.get_mut(&e.pod).and_then(|s| s.last_mut()) {
                    last.1 = e.ms;
                }
            }
            _ => {}
        }
    }
    spans
}

/// The job GitHub had assigned to `runner` at `ms`, if any.
fn job_held_at(run: &RunRecord, runner: i64, ms: u64) -> Option<i64> {
    let mut held = None;
    for e in run.github_events().take_while(|e| e.at_ms <= ms) {
        match e.kind {
            EventKind::JobAssigned { request_id, runner_id } if runner_id == runner => {
                held = Some(request_id)
            }
            EventKind::JobCompleted { request_id, .. } if held == Some(request_id) => held = None,
            EventKind::RunnerRemoved { runner_id, .. } if runner_id == runner => held = None,
            _ => {}
        }
    }
    held
}

/// Running is never written onto an EphemeralRunner that is being deleted.
pub struct NoRunningWhileDeleting;

impl Oracle for NoRunningWhileDeleting {
    fn name(&self) -> &'static str {
        "no-running-while-deleting"
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner being deleted is never moved to phase Running"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut out = Vec::new();
        let mut phase: BTreeMap<String, String> = BTreeMap::new();
        for (ms, c) in run.changes_of("ephemeralrunners") {
            let uid = super::view::uid_of(&c.object).to_string();
            let now = runner_phase(&c.object).to_string();
            let became_running = now == "Running" && phase.get(&uid).is_some_and(|was| was != "Running");
            if became_running && is_deleting(&c.object) {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: ms,
                    objects: vec![format!("ephemeralrunner {}", key_of(&c.object))],
                    message: "phase set to Running after deletion began".into(),
                });
            }
            phase.insert(uid, now);
        }
        out
    }
}

/// Each EphemeralRunner gets its finalizers in at most one write (#4320/#4580: created with both).
pub struct FinalizersInOneWrite;

impl Oracle for FinalizersInOneWrite {
    fn name(&self) -> &'static str {
        "finalizers-in-one-write"
    }

    fn describe(&self) -> &'static str {
        "no EphemeralRunner needs more than one write to get its finalizers"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut grew: BTreeMap<String, (usize, usize, u64, String)> = BTreeMap::new();
        for (ms, c) in run.changes_of("ephemeralrunners") {
            let uid = super::view::uid_of(&c.object).to_string();
            let count =
                c.object.pointer("/metadata/finalizers").and_then(|f| f.as_array()).map_or(0, Vec::len);
            let entry = grew.entry(uid).or_insert((count, 0, ms, key_of(&c.object)));
            if count > entry.0 {
                entry.1 += 1;
                entry.2 = ms;
            }
            entry.0 = count;
        }
        grew.into_values()
            .filter(|(_, writes, _, _)| *writes > 1)
            .map(|(_, writes, ms, key)| Violation {
                oracle: self.name(),
                at_ms: ms,
                objects: vec![format!("ephemeralrunner {key}")],
                message: format!("finalizers added in {writes} writes"),
            })
            .collect()
    }
}
