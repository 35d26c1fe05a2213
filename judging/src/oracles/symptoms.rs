//! Symptoms users reported against ARC releases (docs/field-reports.md): each oracle states what a
//! user sees, not how the controller gets there, so it judges every profile alike. They run only in
//! the field-report worlds (`scenarios::field_reports`), where upstream is expected to show them.

use arc_sim::json_at::At;
use std::collections::BTreeMap;

use arc_sim::apiserver::{Committed, EventType};
use arc_sim::github::{GitHubCall, GitHubEvent};
use arc_sim::kubelet::{KubeletEvent, KubeletEventKind, StopCause};
use arc_sim::record::Interest;
use arc_world::RunRecord;

use super::Oracle;
use crate::view::{key_of, str_at};
use crate::violation::Violation;

/// How long a deleting EphemeralRunner may stay: #4585 proposes forcing its finalizer off after
/// 10 minutes of JobStillRunning answers.
pub const DELETING_RUNNER_LIMIT_MS: u64 = 600_000;

/// #4585: a deleting EphemeralRunner is gone within [`DELETING_RUNNER_LIMIT_MS`] of being marked
/// for deletion (or the run ends first). Upstream requeues RemoveRunner every 30 s while GitHub answers
/// JobStillRunning, which it does until its lost-runner timeout for a runner that died mid-job.
pub struct DeletingRunnerGoneWithin;

impl Oracle for DeletingRunnerGoneWithin {
    fn name(&self) -> &'static str {
        "deleting-runner-gone-within-10-min"
    }

    /// Judges a record so far: a runner still deleting 10 minutes on is late whatever comes after.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner marked for deletion is gone within 10 minutes (#4585)"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut marked: BTreeMap<String, u64> = BTreeMap::new();
        let mut out = Vec::new();
        for (at_ms, change) in run.changes_of("ephemeralrunners") {
            let key = key_of(&change.object);
            let deleting = str_at(&change.object, "/metadata/deletionTimestamp").is_some();
            if change.kind == EventType::Deleted {
                if let Some(since) = marked.remove(&key) {
                    out.extend(self.overdue(&key, since, at_ms));
                }
            } else if deleting {
                marked.entry(key).or_insert(at_ms);
            }
        }
        for (key, since) in marked {
            out.extend(self.overdue(&key, since, run.end_ms));
        }
        out
    }
}

impl DeletingRunnerGoneWithin {
    /// A violation when `key`, marked at `since`, was still there at `until` past the limit.
    fn overdue(&self, key: &str, since: u64, until: u64) -> Option<Violation> {
        (until.saturating_sub(since) > DELETING_RUNNER_LIMIT_MS).then(|| Violation {
            oracle: self.name(),
            at_ms: since + DELETING_RUNNER_LIMIT_MS,
            objects: vec![format!("ephemeralrunner {key}")],
            message: format!(
                "marked for deletion at {since} ms and still there {} s later",
                (until - since) / 1_000
            ),
        })
    }
}

/// How long an EphemeralRunner may outlive the end of its job: #4603's hung runners held their slots
/// for hours; a runner that exits is gone in seconds.
pub const RUNNER_AFTER_JOB_LIMIT_MS: u64 = 600_000;

/// #4603, #4136, #4203: the EphemeralRunner that ran a job is gone within
/// [`RUNNER_AFTER_JOB_LIMIT_MS`] of the job's end at GitHub (or the run ends first). A runner whose
/// process hangs after its job keeps its pod, its Running phase and its slot in the scale set, and
/// ARC's JobCompleted handler writes nothing, so nothing removes it.
pub struct RunnerGoneAfterItsJob;

impl Oracle for RunnerGoneAfterItsJob {
    fn name(&self) -> &'static str {
        "runner-gone-within-10-min-of-its-job"
    }

    /// Judges a record so far: a runner still there 10 minutes after its job is late whatever comes after.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "the EphemeralRunner that ran a job is gone within 10 minutes of the job's end (#4603, #4136, #4203)"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let lifetimes = runner_lifetimes(run);
        run.jobs
            .iter()
            .filter_map(|job| Some((job, job.runner_id?, job.finished_ms?)))
            .filter_map(|(job, runner_id, ended)| {
                let (key, gone) = lifetimes.get(&runner_id)?;
                let until = gone.unwrap_or(run.end_ms);
                (until.saturating_sub(ended) > RUNNER_AFTER_JOB_LIMIT_MS).then(|| Violation {
                    oracle: self.name(),
                    at_ms: ended + RUNNER_AFTER_JOB_LIMIT_MS,
                    objects: vec![format!("ephemeralrunner {key}"), format!("job {}", job.request_id)],
                    message: format!(
                        "runner {runner_id}'s job ended at {ended} ms and its EphemeralRunner was still there {} s later",
                        (until - ended) / 1_000
                    ),
                })
            })
            .collect()
    }
}

/// For each GitHub runner id an EphemeralRunner recorded: its key and when it was deleted (`None`:
/// never in this run).
fn runner_lifetimes(run: &RunRecord) -> BTreeMap<i64, (String, Option<u64>)> {
    let mut by_key: BTreeMap<String, i64> = BTreeMap::new();
    let mut lifetimes = BTreeMap::new();
    for (at_ms, change) in run.changes_of("ephemeralrunners") {
        let key = key_of(&change.object);
        if let Some(id) = change.object.at("/status/runnerId").and_then(serde_json::Value::as_i64) {
            by_key.insert(key.clone(), id);
            lifetimes.entry(id).or_insert((key.clone(), None));
        }
        if change.kind == EventType::Deleted
            && let Some(id) = by_key.get(&key)
        {
            lifetimes.insert(*id, (key, Some(at_ms)));
        }
    }
    lifetimes
}

/// #4000: no idle runner is removed (RemoveRunner answered "removed") while a job its scale set
/// acquired still waits for a runner. The job would have been that runner's; it waits for a new one.
pub struct NoIdleRunnerRemovedWhileAJobWaits;

impl Oracle for NoIdleRunnerRemovedWhileAJobWaits {
    fn name(&self) -> &'static str {
        "no-idle-runner-removed-while-a-job-waits"
    }

    /// Judges a record so far: each removal is judged against the jobs waiting before it.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "no runner is removed as idle while a job its scale set acquired waits for a runner (#4000)"
    }

    fn needs(&self) -> Interest {
        Interest::of::<GitHubEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        crate::probes::removal::idle_removals_while_a_job_waited(run)
            .into_iter()
            .map(|(at_ms, runner_id, job)| Violation {
                oracle: self.name(),
                at_ms,
                objects: vec![format!("runner {runner_id}"), format!("job {job}")],
                message: "an idle runner was removed while an acquired job waited for one".into(),
            })
            .collect()
    }
}

/// How long a job may wait for a runner in the field-report worlds (#4027 reports hours).
pub const JOB_WAIT_LIMIT_MS: u64 = 600_000;

/// #4027: every job starts (or ends, cancelled) within [`JOB_WAIT_LIMIT_MS`] of being queued; a job
/// still waiting at the end of the run counts from the run's end.
pub struct JobStartedWithin;

impl Oracle for JobStartedWithin {
    fn name(&self) -> &'static str {
        "job-started-within-10-min"
    }

    /// Judges a record so far: a job still waiting 10 minutes on is late whatever comes after.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "every job starts or ends within 10 minutes of being queued (#4027)"
    }

    fn needs(&self) -> Interest {
        Interest::none()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        run.jobs
            .iter()
            .filter_map(|job| {
                let until = job.started_ms.or(job.finished_ms).unwrap_or(run.end_ms);
                (until.saturating_sub(job.queued_ms) > JOB_WAIT_LIMIT_MS).then(|| Violation {
                    oracle: self.name(),
                    at_ms: job.queued_ms + JOB_WAIT_LIMIT_MS,
                    objects: vec![format!("job {}", job.request_id)],
                    message: format!(
                        "queued at {} ms, waited {} s for a runner",
                        job.queued_ms,
                        (until - job.queued_ms) / 1_000
                    ),
                })
            })
            .collect()
    }
}

/// How long before a listener's exit a 409 on CreateMessageSession counts as its cause.
const CONFLICT_WINDOW_MS: u64 = 5_000;

/// #4285: no listener process exits because CreateMessageSession answered 409 (a session the
/// crashed listener before it left open, until GitHub expires it): each such exit is a turn of the
/// crash loop users see. A listener container that stops with a non-zero code within 5 s of a 409 on
/// `create-session` is a violation.
pub struct NoListenerExitOnSessionConflict;

impl Oracle for NoListenerExitOnSessionConflict {
    fn name(&self) -> &'static str {
        "no-listener-exit-on-session-conflict"
    }

    /// Judges a record so far: each exit is judged against the 409s before it.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "no listener exits because CreateMessageSession answered 409 (#4285)"
    }

    fn needs(&self) -> Interest {
        Interest::of::<KubeletEvent>().and::<GitHubCall>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let conflicts: Vec<u64> = run
            .events
            .iter()
            .filter_map(|e| e.get::<GitHubCall>().map(|call| (e.at_ms, call)))
            .filter(|(_, call)| call.operation == "create-session" && call.status == Some(409))
            .map(|(at_ms, _)| at_ms)
            .collect();
        run.kubelet_events()
            .filter(|e| is_listener_exit(e))
            .filter(|e| conflicts.iter().any(|c| *c <= e.ms && e.ms - c <= CONFLICT_WINDOW_MS))
            .map(|e| Violation {
                oracle: self.name(),
                at_ms: e.ms,
                objects: vec![format!("pod {}", e.pod)],
                message: "the listener exited after CreateMessageSession answered 409".into(),
            })
            .collect()
    }
}

/// A listener container (not a runner's) that exited by itself with a non-zero code.
fn is_listener_exit(event: &KubeletEvent) -> bool {
    matches!(
        &event.kind,
        KubeletEventKind::ContainerStopped { container, cause: StopCause::Exited, exit_code, .. }
            if container == "listener" && *exit_code != 0
    )
}

#[cfg(test)]
mod tests {
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{NS, ended_job, er, github, runner};
    use arc_sim::github::{EventKind, RemoveOutcome};

    fn deleting(name: &str) -> serde_json::Value {
        let mut object = er(name, "u1", Some("Running"), 7, Some("j"));
        object["metadata"]["deletionTimestamp"] = serde_json::json!("2026-01-01T00:00:00Z");
        object
    }

    fn lifetime(gone_ms: Option<u64>, end_ms: u64) -> RunRecord {
        let mut run = SyntheticRun::new()
            .committed(100, "ephemeralrunners", EventType::Added, er("r-1", "u1", None, 7, None))
            .committed(1_000, "ephemeralrunners", EventType::Modified, deleting("r-1"));
        if let Some(gone) = gone_ms {
            run = run.committed(gone, "ephemeralrunners", EventType::Deleted, deleting("r-1"));
        }
        run.ended_at(end_ms).build()
    }

    #[test]
    fn a_deleting_runner_gone_in_time_or_at_the_end_of_a_short_run_is_clean() {
        assert_eq!(DeletingRunnerGoneWithin.check(&lifetime(Some(31_000), 40_000)), Vec::new());
        assert_eq!(DeletingRunnerGoneWithin.check(&lifetime(None, 200_000)), Vec::new());
    }

    #[test]
    fn a_deleting_runner_that_outstays_the_limit_is_a_violation_gone_or_not() {
        let late = DeletingRunnerGoneWithin.check(&lifetime(Some(1_000 + 1_800_000), 2_000_000));
        assert_eq!(late.len(), 1, "{late:?}");
        assert_eq!(late[0].at_ms, 1_000 + DELETING_RUNNER_LIMIT_MS);
        let never = DeletingRunnerGoneWithin.check(&lifetime(None, 1_000 + DELETING_RUNNER_LIMIT_MS + 1));
        assert_eq!(never.len(), 1, "{never:?}");
    }

    fn removal_run(assigned_first: bool) -> RunRecord {
        let acquired = github(10, EventKind::JobAcquired { request_id: 3, scale_set_id: 1 });
        let assigned = github(20, EventKind::JobAssigned { request_id: 3, runner_id: 8 });
        let removed = github(30, EventKind::RemoveRunner { runner_id: 7, outcome: RemoveOutcome::Removed });
        let events =
            if assigned_first { [acquired, assigned, removed] } else { [acquired, removed, assigned] };
        let mut run = SyntheticRun::new().runners(vec![
            runner(7, "r-7", arc_sim::github::RunnerState::Idle),
            runner(8, "r-8", arc_sim::github::RunnerState::Offline),
        ]);
        for e in events {
            run = run.event(e.at_ms, e);
        }
        run.build()
    }

    #[test]
    fn removing_an_idle_runner_after_the_waiting_job_was_assigned_is_clean() {
        assert_eq!(NoIdleRunnerRemovedWhileAJobWaits.check(&removal_run(true)), Vec::new());
    }

    #[test]
    fn removing_an_idle_runner_while_an_acquired_job_waits_is_a_violation() {
        let found = NoIdleRunnerRemovedWhileAJobWaits.check(&removal_run(false));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].objects, vec!["runner 7".to_string(), "job 3".to_string()]);
    }

    fn listener_exit(ms: u64, exit_code: i32) -> KubeletEvent {
        KubeletEvent {
            ms,
            pod: "arc-systems/arc-runner-set-754b578d-listener".into(),
            uid: "pod-l".into(),
            kind: KubeletEventKind::ContainerStopped {
                container: "listener".into(),
                exit_code,
                cause: StopCause::Exited,
                runner_id: None,
                running_job: None,
            },
        }
    }

    fn create_session(status: u16) -> GitHubCall {
        GitHubCall {
            method: "POST".into(),
            path: "/sessions".into(),
            operation: "create-session",
            received_ms: 0,
            served: Some(status),
            status: Some(status),
        }
    }

    #[test]
    fn a_listener_exit_right_after_a_session_conflict_is_a_violation() {
        let run = SyntheticRun::new()
            .event(1_000, create_session(409))
            .event(1_200, listener_exit(1_200, 1))
            .build();
        let found = NoListenerExitOnSessionConflict.check(&run);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at_ms, 1_200);
    }

    #[test]
    fn a_crash_without_a_conflict_or_a_clean_stop_after_one_is_not() {
        let crash = SyntheticRun::new()
            .event(1_000, create_session(201))
            .event(60_000, create_session(409))
            .event(90_000, listener_exit(90_000, 1))
            .build();
        assert_eq!(NoListenerExitOnSessionConflict.check(&crash), Vec::new());
        let clean = SyntheticRun::new()
            .event(1_000, create_session(409))
            .event(1_100, listener_exit(1_100, 0))
            .build();
        assert_eq!(NoListenerExitOnSessionConflict.check(&clean), Vec::new());
    }

    fn job_run(runner_gone_ms: Option<u64>, end_ms: u64) -> RunRecord {
        let mut job = ended_job(7, arc_sim::github::EndReason::Completed, Some(3));
        job.finished_ms = Some(60_000);
        let mut run = SyntheticRun::new().committed(
            1_000,
            "ephemeralrunners",
            EventType::Added,
            er("r", "u1", Some("Running"), 3, Some("7")),
        );
        if let Some(ms) = runner_gone_ms {
            run = run.committed(ms, "ephemeralrunners", EventType::Deleted, er("r", "u1", None, 3, None));
        }
        run.jobs(vec![job]).ended_at(end_ms).build()
    }

    #[test]
    fn a_runner_gone_soon_after_its_job_or_a_run_that_ends_first_is_clean() {
        assert_eq!(RunnerGoneAfterItsJob.check(&job_run(Some(62_000), 1_000_000)), Vec::new());
        assert_eq!(
            RunnerGoneAfterItsJob.check(&job_run(None, 60_000 + RUNNER_AFTER_JOB_LIMIT_MS)),
            Vec::new()
        );
    }

    #[test]
    fn a_runner_that_outlives_its_job_past_the_limit_is_a_violation_gone_or_not() {
        let late =
            RunnerGoneAfterItsJob.check(&job_run(Some(60_000 + RUNNER_AFTER_JOB_LIMIT_MS + 1), 2_000_000));
        assert_eq!(late.len(), 1, "{late:?}");
        let hung = RunnerGoneAfterItsJob.check(&job_run(None, 3_600_000));
        assert_eq!(hung.len(), 1, "{hung:?}");
        assert_eq!(hung[0].objects, vec![format!("ephemeralrunner {NS}/r"), "job 7".to_string()]);
        assert!(hung[0].message.contains("3540 s later"), "{}", hung[0].message);
    }

    #[test]
    fn a_job_that_waits_past_the_limit_is_a_violation_and_one_started_in_time_is_not() {
        let mut quick = crate::oracles::fixtures::job(1, arc_sim::github::JobState::Queued, None);
        quick.queued_ms = 1_000;
        quick.started_ms = Some(30_000);
        let mut stuck = crate::oracles::fixtures::job(2, arc_sim::github::JobState::Queued, None);
        stuck.queued_ms = 1_000;
        let run =
            SyntheticRun::new().jobs(vec![quick, stuck]).ended_at(1_000 + JOB_WAIT_LIMIT_MS + 1).build();
        let found = JobStartedWithin.check(&run);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].objects, vec!["job 2".to_string()]);
    }
}
