//! Deletions of live runners: never while their runner holds a job (race 3, §8.3), and never given a
//! Running phase once deletion has begun (§5.2).

use arc_sim::json_at::At;
use std::collections::BTreeMap;

use arc_sim::apiserver::{AuditEntry, Committed, EventType};
use arc_sim::faults::ApiVerb;
use arc_sim::github::EventKind;
use arc_sim::github::GitHubEvent;
use arc_sim::kubelet::KubeletEvent;
use arc_sim::kubelet::KubeletEventKind;
use arc_sim::record::{Event, Interest};
use arc_world::RunRecord;

use super::Oracle;
use crate::probes::history::Commits;
use crate::story::{Evidence, Subject};
use crate::view::{is_deleting, key_of, runner_id, runner_phase};
use crate::violation::Violation;

/// When the controller deletes an EphemeralRunner whose pod is still running, its runner holds no job
/// at GitHub (RemoveRunner first: removed, or kept on JobStillRunning).
pub struct NoBusyRunnerDeleted;

impl Oracle for NoBusyRunnerDeleted {
    fn name(&self) -> &'static str {
        "no-busy-runner-deleted"
    }

    /// Judges a record so far: a delete is judged on what happened up to it, with the runner's id as of the delete.
    fn judges_so_far(&self) -> bool {
        true
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
        let runners = Commits::of(run, "ephemeralrunners");
        let mut out = Vec::new();
        for a in run.audit().filter(|a| a.resource == "ephemeralrunners" && a.verb == ApiVerb::Delete) {
            if !crate::view::is_controller(&a.actor) || !a.took_effect() || a.status_subresource {
                continue;
            }
            let key = format!("{}/{}", a.namespace, a.name);
            // A delete of a runner whose deletion began before it changes nothing: the delete that
            // began it is the one judged (with a runner that boots, a repeat can land while a new pod
            // runs, whose process cannot hold the job).
            let before = runners.last_strictly_before(&key, a.served_ms);
            if before.is_some_and(|c| c.kind != EventType::Deleted && is_deleting(&c.object)) {
                continue;
            }
            let Some(id) = ids.as_of(&key, a.served_ms) else { continue };
            let pod_live = running.get(&key).is_some_and(|spans| {
                spans.iter().any(|(from, to)| *from <= a.served_ms && a.served_ms < *to)
            });
            if let Some(job) = job_held_at(run, id, a.served_ms).filter(|_| pod_live) {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: a.served_ms,
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

    /// The delete, the commit that gave the runner its id, its pod's container start, the job's
    /// assignment, and the controller's last RemoveRunner call on the runner before the delete (the
    /// answer the delete acted on: the rule is RemoveRunner first).
    fn evidence(&self, run: &RunRecord, violation: &Violation) -> Evidence {
        let named = Subject::parse_all(&violation.objects);
        let evidence = Evidence::around(run, violation, &self.needs());
        let removal = run
            .events
            .iter()
            .rev()
            .find(|e| e.at_ms <= violation.at_ms && evidence.covers(e) && is_removal_call(e))
            .map(|e| e.seq);
        evidence.citing(run, |e| {
            Some(e.seq) == removal || read_by_busy_runner_deleted(e, &named, violation.at_ms)
        })
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
        return a.verb == ApiVerb::Delete
            && a.served_ms == at_ms
            && format!("{}/{}", a.namespace, a.name) == key;
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

/// Whether `event` is a RemoveRunner call the controller made.
fn is_removal_call(event: &Event) -> bool {
    event.get::<GitHubEvent>().is_some_and(|g| {
        matches!(g.kind, EventKind::RemoveRunner { .. })
            && g.by.as_deref().is_some_and(crate::view::is_controller)
    })
}

/// Per EphemeralRunner `namespace/name`, the runner ids it was given, with when: a name can be
/// reused by a later runner, so a delete is judged by the id its name held then.
struct RunnerIds(BTreeMap<String, Vec<(u64, i64)>>);

impl RunnerIds {
    /// The id `key` held at `ms` (the last one committed at or before it), if it had one.
    fn as_of(&self, key: &str, ms: u64) -> Option<i64> {
        let ids = self.0.get(key)?;
        ids.iter().take_while(|(at, _)| *at <= ms).last().map(|(_, id)| *id)
    }
}

/// The ids of every EphemeralRunner that registered.
fn runner_ids_by_name(run: &RunRecord) -> RunnerIds {
    let mut ids: BTreeMap<String, Vec<(u64, i64)>> = BTreeMap::new();
    for (ms, c) in run.changes_of("ephemeralrunners").filter(|(_, c)| runner_id(&c.object) != 0) {
        ids.entry(key_of(&c.object)).or_default().push((ms, runner_id(&c.object)));
    }
    RunnerIds(ids)
}

/// Per pod `namespace/name`: the spans (start, stop) its main container ran.
fn running_pods(run: &RunRecord) -> BTreeMap<String, Vec<(u64, u64)>> {
    let mut spans: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    let mut open: BTreeMap<&str, (&str, usize)> = BTreeMap::new();
    for e in run.kubelet_events() {
        match e.kind {
            KubeletEventKind::ContainerStarted { .. } => {
                let pod = spans.entry(e.pod.clone()).or_default();
                pod.push((e.ms, u64::MAX));
                open.insert(&e.uid, (&e.pod, pod.len() - 1));
            }
            // A process outlives a pod deleted with grace 0 on a lost node, but no pod holds it
            // any more: deleting its runner cannot stop it.
            KubeletEventKind::ContainerStopped { .. } | KubeletEventKind::ForceDeleted { .. } => {
                if let Some((pod, i)) = open.remove(e.uid.as_str()) {
                    spans.get_mut(pod).expect("opened above")[i].1 = e.ms;
                }
            }
            _ => {}
        }
    }
    spans
}

/// The job GitHub had assigned to `runner` at `ms` and a live process of it could still run, if any.
/// A job whose process died holding it (GitHub holds it as lost until the lost-runner timeout) is no
/// live pod's: the runner's later processes are refused while it is held, so deleting the runner
/// cannot lose it.
fn job_held_at(run: &RunRecord, runner: i64, ms: u64) -> Option<i64> {
    let mut held = None;
    for e in run.github_events().take_while(|e| e.at_ms <= ms) {
        match e.kind {
            EventKind::JobAssigned { request_id, runner_id } if runner_id == runner => {
                held = Some(request_id)
            }
            EventKind::JobCompleted { request_id, .. } if held == Some(request_id) => held = None,
            EventKind::RunnerRemoved { runner_id, .. } if runner_id == runner => held = None,
            EventKind::ProcessExited { runner_id, lost_job: Some(job) }
            | EventKind::DeadRunnerNoticed { runner_id, lost_job: Some(job) }
                if runner_id == runner && held == Some(job) =>
            {
                held = None
            }
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

    /// Judges a record so far: each commit is judged against the runner's earlier commits.
    fn judges_so_far(&self) -> bool {
        true
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
            let uid = crate::view::uid_of(&c.object).to_string();
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

    /// Judges a record so far: the second growing write is the violation, whatever comes after.
    fn judges_so_far(&self) -> bool {
        true
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
            let uid = crate::view::uid_of(&c.object).to_string();
            let count = c.object.at("/metadata/finalizers").and_then(|f| f.as_array()).map_or(0, Vec::len);
            let entry = grew.entry(uid).or_insert((count, 0, ms, key_of(&c.object)));
            if count > entry.0 {
                entry.1 += 1;
                // The write that made it two is the violation; later ones add nothing to it.
                if entry.1 <= 2 {
                    entry.2 = ms;
                }
            }
            entry.0 = count;
        }
        grew.into_values()
            .filter(|(_, writes, _, _)| *writes > 1)
            .map(|(_, _, ms, key)| Violation {
                oracle: self.name(),
                at_ms: ms,
                objects: vec![format!("ephemeralrunner {key}")],
                message: "finalizers added in more than one write".into(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::github::{EndReason, JobResult, RemovalReason};
    use arc_sim::kubelet::StopCause;
    use arc_world::SyntheticRun;
    use serde_json::{Value, json};

    use super::*;
    use crate::oracles::fixtures::{NS, er, github, request};

    fn kubelet(ms: u64, kind: KubeletEventKind) -> KubeletEvent {
        KubeletEvent { ms, pod: format!("{NS}/r"), uid: "pod-r".into(), kind }
    }

    /// Runner `r` (id 41) registered at 1 ms, its pod started at 2 ms and GitHub assigned it job 7 at
    /// 3 ms.
    fn busy_runner() -> SyntheticRun {
        let started = KubeletEventKind::ContainerStarted { container: "runner".into(), restart_count: 0 };
        SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r", "u1", Some("Running"), 41, None))
            .event(2, kubelet(2, started))
            .event(3, github(3, EventKind::JobAssigned { request_id: 7, runner_id: 41 }))
    }

    /// `actor` deletes EphemeralRunner `r` at 5 ms, answered `code`.
    fn deleted(run: SyntheticRun, actor: &str, code: u16) -> RunRecord {
        run.event(5, request(5, actor, ApiVerb::Delete, "ephemeralrunners", "r", code)).build()
    }

    #[test]
    fn deleting_a_runner_whose_pod_runs_a_job_is_a_violation() {
        let found = NoBusyRunnerDeleted.check(&deleted(busy_runner(), "controller", 200));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at_ms, 5);
        assert_eq!(
            found[0].objects,
            vec![format!("ephemeralrunner {NS}/r"), "runner 41".into(), "job 7".into()]
        );
    }

    #[test]
    fn a_process_no_pod_holds_is_not_the_runners_pod() {
        let forced = KubeletEventKind::ForceDeleted { node: "arcsim-node-2".into(), by: "operator".into() };
        let orphaned = busy_runner().event(4, kubelet(4, forced));
        assert!(NoBusyRunnerDeleted.check(&deleted(orphaned, "controller", 200)).is_empty());
        let replacement = KubeletEventKind::ContainerStarted { container: "runner".into(), restart_count: 0 };
        let beside = busy_runner().event(4, KubeletEvent { uid: "pod-r2".into(), ..kubelet(4, replacement) });
        let stopped_old = KubeletEventKind::ContainerStopped {
            container: "runner".into(),
            exit_code: 0,
            cause: StopCause::Exited,
            runner_id: None,
            running_job: None,
        };
        let beside = beside.event(4, kubelet(4, stopped_old));
        assert_eq!(
            NoBusyRunnerDeleted.check(&deleted(beside, "controller", 200)).len(),
            1,
            "the old pod's stop does not end the replacement's span"
        );
    }

    /// Steady-state seed 27,100,777: the runner's process died holding its job (GitHub holds it as
    /// lost), and a later pod's process, refused while the job is held, was booting when the runner
    /// was deleted: no live process could run the job.
    #[test]
    fn a_job_whose_process_died_holding_it_is_no_live_pods() {
        let died = EventKind::ProcessExited { runner_id: 41, lost_job: Some(7) };
        let started = KubeletEventKind::ContainerStarted { container: "runner".into(), restart_count: 0 };
        let rebooting = busy_runner()
            .event(4, github(4, died))
            .event(4, KubeletEvent { uid: "pod-r2".into(), ..kubelet(4, started) });
        assert!(NoBusyRunnerDeleted.check(&deleted(rebooting, "controller", 200)).is_empty());
        let noticed = EventKind::DeadRunnerNoticed { runner_id: 41, lost_job: Some(7) };
        let late = busy_runner().event(4, github(4, noticed));
        assert!(NoBusyRunnerDeleted.check(&deleted(late, "controller", 200)).is_empty());
        let other = EventKind::ProcessExited { runner_id: 42, lost_job: Some(7) };
        let elsewhere = busy_runner().event(4, github(4, other));
        assert_eq!(NoBusyRunnerDeleted.check(&deleted(elsewhere, "controller", 200)).len(), 1);
    }

    #[test]
    fn deleting_a_runner_whose_job_ended_or_whose_pod_stopped_is_clean() {
        let completed = EventKind::JobCompleted {
            request_id: 7,
            result: JobResult::Succeeded,
            reason: EndReason::Completed,
        };
        let job_done = busy_runner().event(4, github(4, completed));
        assert!(NoBusyRunnerDeleted.check(&deleted(job_done, "controller", 200)).is_empty());
        let removed = EventKind::RunnerRemoved { runner_id: 41, reason: RemovalReason::Removed };
        let runner_gone = busy_runner().event(4, github(4, removed));
        assert!(NoBusyRunnerDeleted.check(&deleted(runner_gone, "controller", 200)).is_empty());
        let stopped = KubeletEventKind::ContainerStopped {
            container: "runner".into(),
            exit_code: 0,
            cause: StopCause::Exited,
            runner_id: Some(41),
            running_job: None,
        };
        let pod_done = busy_runner().event(4, kubelet(4, stopped));
        assert!(NoBusyRunnerDeleted.check(&deleted(pod_done, "controller", 200)).is_empty());
    }

    #[test]
    fn only_the_controllers_successful_deletes_are_judged() {
        assert!(NoBusyRunnerDeleted.check(&deleted(busy_runner(), "user", 200)).is_empty());
        assert!(NoBusyRunnerDeleted.check(&deleted(busy_runner(), "controller", 404)).is_empty());
    }

    #[test]
    fn a_repeat_delete_of_a_runner_already_deleting_is_not_judged_again() {
        let began = deleting(er("r", "u1", Some("Running"), 41, None));
        let repeat = busy_runner().committed(4, "ephemeralrunners", EventType::Modified, began.clone());
        assert!(NoBusyRunnerDeleted.check(&deleted(repeat, "controller", 200)).is_empty());
        let same_instant = busy_runner().committed(5, "ephemeralrunners", EventType::Modified, began);
        assert_eq!(
            NoBusyRunnerDeleted.check(&deleted(same_instant, "controller", 200)).len(),
            1,
            "the delete that began it"
        );
    }

    /// EphemeralRunner `r` with its deletion begun.
    fn deleting(mut runner: Value) -> Value {
        runner["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        runner
    }

    #[test]
    fn moving_a_runner_being_deleted_to_running_is_a_violation() {
        let pending = er("r", "u1", Some("Pending"), 41, None);
        let running = er("r", "u1", Some("Running"), 41, None);
        let broken = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, pending.clone())
            .committed(2, "ephemeralrunners", EventType::Modified, deleting(pending))
            .committed(3, "ephemeralrunners", EventType::Modified, deleting(running.clone()))
            .build();
        let found = NoRunningWhileDeleting.check(&broken);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].at_ms, found[0].objects.clone()), (3, vec![format!("ephemeralrunner {NS}/r")]));
        let before_deletion = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r", "u1", Some("Pending"), 41, None))
            .committed(2, "ephemeralrunners", EventType::Modified, running.clone())
            .committed(3, "ephemeralrunners", EventType::Modified, deleting(running))
            .build();
        assert!(NoRunningWhileDeleting.check(&before_deletion).is_empty(), "Running before deletion began");
    }

    #[test]
    fn a_runner_deleted_while_running_that_stays_running_is_clean() {
        let running = er("r", "u1", Some("Running"), 41, None);
        let stays = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, running.clone())
            .committed(2, "ephemeralrunners", EventType::Modified, deleting(running.clone()))
            .committed(3, "ephemeralrunners", EventType::Modified, deleting(running))
            .build();
        assert!(NoRunningWhileDeleting.check(&stays).is_empty());
    }

    /// EphemeralRunner `r` (uid `uid`) holding `finalizers`.
    fn with_finalizers(uid: &str, finalizers: &[&str]) -> Value {
        let mut runner = er("r", uid, None, 0, None);
        runner["metadata"]["finalizers"] = json!(finalizers);
        runner
    }

    const BOTH: [&str; 2] = [
        "ephemeralrunner.actions.github.com/finalizer",
        "ephemeralrunner.actions.github.com/runner-registration-finalizer",
    ];

    #[test]
    fn finalizers_added_in_two_writes_are_a_violation() {
        let broken = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, with_finalizers("u1", &[]))
            .committed(2, "ephemeralrunners", EventType::Modified, with_finalizers("u1", &BOTH[..1]))
            .committed(3, "ephemeralrunners", EventType::Modified, with_finalizers("u1", &BOTH))
            .build();
        let found = FinalizersInOneWrite.check(&broken);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].at_ms, found[0].message.as_str()),
            (3, "finalizers added in more than one write")
        );
    }

    #[test]
    fn finalizers_at_creation_or_in_one_later_write_are_clean() {
        let at_creation = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, with_finalizers("u1", &BOTH))
            .committed(2, "ephemeralrunners", EventType::Modified, with_finalizers("u1", &[]))
            .build();
        assert!(FinalizersInOneWrite.check(&at_creation).is_empty(), "removal is not a write that adds");
        let one_write = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, with_finalizers("u1", &[]))
            .committed(2, "ephemeralrunners", EventType::Modified, with_finalizers("u1", &BOTH))
            .build();
        assert!(FinalizersInOneWrite.check(&one_write).is_empty());
        let two_runners = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, with_finalizers("u1", &[]))
            .committed(2, "ephemeralrunners", EventType::Modified, with_finalizers("u1", &BOTH))
            .committed(3, "ephemeralrunners", EventType::Added, with_finalizers("u2", &[]))
            .committed(4, "ephemeralrunners", EventType::Modified, with_finalizers("u2", &BOTH))
            .build();
        assert!(FinalizersInOneWrite.check(&two_runners).is_empty(), "a recreated runner is a new uid");
    }
}
