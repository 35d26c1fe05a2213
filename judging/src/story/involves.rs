//! Which [`Subject`]s an event of the record touches, and how subjects relate (an EphemeralRunner, the
//! pod it owns, the GitHub runner both carry, the jobs that runner was given), so that a violation
//! naming one of them brings in the others.

use arc_sim::json_at::At;
use std::collections::{BTreeMap, BTreeSet};

use arc_sim::apiserver::reads::ReadEntry;
use arc_sim::apiserver::{AuditEntry, Collected, Committed, WatchItem, WatchSent};
use arc_sim::github::{EventKind, GitHubEvent};
use arc_sim::kubelet::{KubeletEvent, KubeletEventKind};
use arc_sim::record::Event;
use arc_world::RunRecord;
use serde_json::Value;

use super::subject::Subject;
use crate::view::runner_id;

/// The subjects `event` is about (none for events about no one object, runner or job).
pub fn touched(event: &Event) -> Vec<Subject> {
    if let Some(a) = event.get::<AuditEntry>() {
        return named(&a.resource, &a.namespace, &a.name);
    }
    if let Some(c) = event.get::<Committed>() {
        return vec![Subject::object(&c.resource, &c.change.key.display())];
    }
    if let Some(w) = event.get::<WatchSent>() {
        return match &w.item {
            WatchItem::Change { key, .. } => vec![Subject::object(&w.resource, key)],
            _ => Vec::new(),
        };
    }
    if let Some(r) = event.get::<ReadEntry>() {
        return vec![Subject::object(&r.resource, &r.key)];
    }
    if let Some(c) = event.get::<Collected>() {
        return vec![Subject::object(&c.resource, &c.key)];
    }
    if let Some(g) = event.get::<GitHubEvent>() {
        return github_subjects(&g.kind);
    }
    if let Some(k) = event.get::<KubeletEvent>() {
        return kubelet_subjects(k);
    }
    Vec::new()
}

fn named(resource: &str, namespace: &str, name: &str) -> Vec<Subject> {
    if name.is_empty() {
        return Vec::new();
    }
    let key = if namespace.is_empty() { name.to_string() } else { format!("{namespace}/{name}") };
    vec![Subject::object(resource, &key)]
}

/// The runner and job a GitHub state change is about.
pub fn github_subjects(kind: &EventKind) -> Vec<Subject> {
    match kind {
        EventKind::RunnerRegistered { runner_id, .. }
        | EventKind::RunnerConnected { runner_id }
        | EventKind::RunnerRefused { runner_id, .. }
        | EventKind::RemoveRunner { runner_id, .. }
        | EventKind::RunnerRemoved { runner_id, .. } => vec![Subject::Runner(*runner_id)],
        EventKind::ProcessExited { runner_id, lost_job } => {
            let mut out = vec![Subject::Runner(*runner_id)];
            out.extend(lost_job.map(Subject::Job));
            out
        }
        EventKind::JobAssigned { request_id, runner_id } => {
            vec![Subject::Runner(*runner_id), Subject::Job(*request_id)]
        }
        EventKind::JobQueued { request_id }
        | EventKind::JobAcquired { request_id, .. }
        | EventKind::JobCompleted { request_id, .. } => vec![Subject::Job(*request_id)],
        _ => Vec::new(),
    }
}

fn kubelet_subjects(event: &KubeletEvent) -> Vec<Subject> {
    let mut out = vec![Subject::object("pods", &event.pod)];
    match &event.kind {
        KubeletEventKind::RunnerConnected { runner_id } => out.push(Subject::Runner(*runner_id)),
        KubeletEventKind::JobStarted { runner_id, request_id } => {
            out.extend([Subject::Runner(*runner_id), Subject::Job(*request_id)]);
        }
        KubeletEventKind::ContainerStopped { runner_id, running_job, .. } => {
            out.extend(runner_id.map(Subject::Runner));
            out.extend(running_job.map(Subject::Job));
        }
        _ => {}
    }
    out
}

/// How subjects of one run relate: owner and owned objects, the runner an object carries, the jobs a
/// runner was given.
#[derive(Debug, Default)]
pub struct Relations {
    links: BTreeMap<Subject, BTreeSet<Subject>>,
}

impl Relations {
    /// The relations the run's record shows.
    pub fn of(run: &RunRecord) -> Relations {
        let mut rel = Relations::default();
        for (_, resource, change) in run.committed() {
            let me = Subject::object(resource, &change.key.display());
            for owner in owners(&change.object) {
                rel.link(&me, &owner);
            }
            let id = runner_id(&change.object);
            // Before it registers an EphemeralRunner carries runner id 0, and a reader holding that
            // version acts on "runner 0" (RemoveRunner(0) in the stale-snapshot race).
            if id != 0 || resource == "ephemeralrunners" {
                rel.link(&me, &Subject::Runner(id));
            }
        }
        for e in run.kubelet_events() {
            if let KubeletEventKind::RunnerConnected { runner_id } = e.kind {
                rel.link(&Subject::object("pods", &e.pod), &Subject::Runner(runner_id));
            }
        }
        for e in run.github_events() {
            if let EventKind::JobAssigned { request_id, runner_id } = e.kind {
                rel.link(&Subject::Runner(runner_id), &Subject::Job(request_id));
            }
        }
        rel
    }

    fn link(&mut self, a: &Subject, b: &Subject) {
        self.links.entry(a.clone()).or_default().insert(b.clone());
        self.links.entry(b.clone()).or_default().insert(a.clone());
    }

    /// `start` and what relates to it, transitively, except that a job and runner 0 (every runner
    /// before it registers) lead nowhere further: a job's other runners, or a runner set's other
    /// runners, are other stories.
    pub fn expand(&self, start: &[Subject]) -> BTreeSet<Subject> {
        let mut seen: BTreeSet<Subject> = start.iter().cloned().collect();
        let mut todo: Vec<Subject> = start.to_vec();
        while let Some(s) = todo.pop() {
            if matches!(s, Subject::Job(_) | Subject::Runner(0)) && !start.contains(&s) {
                continue;
            }
            for next in self.links.get(&s).into_iter().flatten() {
                if is_leaf_owner(next) || seen.contains(next) {
                    continue;
                }
                seen.insert(next.clone());
                todo.push(next.clone());
            }
        }
        seen
    }
}

/// Owners that own many things (a runner set owns every runner): reached, they would bring in the
/// whole world.
fn is_leaf_owner(s: &Subject) -> bool {
    match s {
        Subject::Object { resource, .. } => {
            !matches!(resource.as_str(), "ephemeralrunners" | "pods" | "runners")
        }
        _ => false,
    }
}

/// The objects named by `object`'s ownerReferences, as subjects (plural = lowercase kind + `s`).
fn owners(object: &Value) -> Vec<Subject> {
    let namespace = object.at("/metadata/namespace").and_then(Value::as_str).unwrap_or("");
    let refs = object.at("/metadata/ownerReferences").and_then(Value::as_array);
    refs.into_iter()
        .flatten()
        .filter_map(|r| {
            let kind = r.get("kind")?.as_str()?.to_ascii_lowercase();
            let name = r.get("name")?.as_str()?;
            let key = if namespace.is_empty() { name.to_string() } else { format!("{namespace}/{name}") };
            Some(Subject::object(&super::subject::plural_of(&kind), &key))
        })
        .collect()
}
