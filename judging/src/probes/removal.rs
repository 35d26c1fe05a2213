//! Race 3's windows (ARC-MODEL §8.3): GitHub assigns a job to a runner around the moment the
//! controller removes it. Each probe names one side of that race as the record shows it.

use arc_sim::json_at::At;
use std::collections::{BTreeMap, BTreeSet};

use arc_sim::apiserver::Committed;
use arc_sim::faults::ApiVerb;
use arc_sim::github::{EventKind, GitHubEvent, RemoveOutcome};
use arc_sim::kubelet::{KubeletEvent, KubeletEventKind};
use arc_world::RunRecord;

use super::history::Handed;
use super::runner_states::RunnerStates;
use super::runner_times::RunnerTimes;
use crate::view::str_at;

/// How long before a busy answer the assignment must have come for the removal to have lost the race
/// to it: the listener's slowest message delivery in the race scenarios (6 s) plus GitHub's widest
/// assignment latency (4 s).
pub const ASSIGNMENT_WINDOW_MS: u64 = 10_000;

/// RemoveRunner answered busy (JobStillRunning) for a runner that GitHub had assigned a job within
/// [`ASSIGNMENT_WINDOW_MS`] before, while the last version of its EphemeralRunner the controller had
/// been handed showed no job: the controller chose an idle runner and lost it to an assignment.
pub fn remove_runner_lost_to_assignment(run: &RunRecord) -> u32 {
    let states = RunnerStates::of(run);
    let handed = Handed::to(run, "controller", "ephemeralrunners");
    // The key of each runner id: of the keys whose versions held it, the last in key order (written
    // into one buffer, copied only when it is later than the one kept).
    let mut key_of_runner: BTreeMap<i64, String> = BTreeMap::new();
    let mut key = String::new();
    for state in states.iter().filter(|s| s.runner_id != 0) {
        key.clear();
        key.extend([state.change.key.namespace.as_str(), "/", state.change.key.name.as_str()]);
        match key_of_runner.get_mut(&state.runner_id) {
            Some(known) if known.as_str() >= key.as_str() => {}
            Some(known) => known.clone_from(&key),
            None => drop(key_of_runner.insert(state.runner_id, key.clone())),
        }
    }
    let assigned = RunnerTimes::of(run.github_events().filter_map(|e| match e.kind {
        EventKind::JobAssigned { runner_id, .. } => Some((e.at_ms, runner_id)),
        _ => None,
    }));
    let busy = run.github_events().filter_map(|e| match e.kind {
        EventKind::RemoveRunner {
            runner_id,
            outcome: RemoveOutcome::JobStillRunning | RemoveOutcome::Busy,
        } => Some((e.at_ms, runner_id)),
        _ => None,
    });
    let mut hits = 0;
    for (at, runner) in busy {
        let just_assigned = assigned.within(runner, at.saturating_sub(ASSIGNMENT_WINDOW_MS), at);
        let Some(key) = key_of_runner.get(&runner) else { continue };
        let seen_idle = handed
            .last_before(key, at)
            .and_then(|rv| states.version(key, rv))
            .is_some_and(|er| er.job_id.is_none());
        hits += u32::from(just_assigned && seen_idle);
    }
    hits
}

/// A RemoveRunner that removed an idle runner while a job acquired by its scale set was still waiting
/// for a runner: the job would have been this runner's, and went to another.
pub fn assignment_lost_to_remove_runner(run: &RunRecord) -> u32 {
    u32::try_from(idle_removals_while_a_job_waited(run).len()).unwrap_or(u32::MAX)
}

/// Each RemoveRunner that removed a runner while a job its scale set acquired still waited for a
/// runner, as (sim ms, runner id, the first such job). The probe above counts them; the #4000 oracle
/// (`oracles::symptoms`) reports them.
pub fn idle_removals_while_a_job_waited(run: &RunRecord) -> Vec<(u64, i64, i64)> {
    let mut waiting: BTreeMap<i64, i64> = BTreeMap::new();
    let scale_set_of: BTreeMap<i64, i64> =
        run.runners.iter().filter_map(|r| Some((r.id, r.scale_set_id?))).collect();
    let mut out = Vec::new();
    for e in run.github_events() {
        match &e.kind {
            EventKind::JobAcquired { request_id, scale_set_id } => {
                waiting.insert(*request_id, *scale_set_id);
            }
            EventKind::JobAssigned { request_id, .. } | EventKind::JobCompleted { request_id, .. } => {
                waiting.remove(request_id);
            }
            EventKind::RemoveRunner { runner_id, outcome: RemoveOutcome::Removed } => {
                let set = scale_set_of.get(runner_id);
                if let Some((job, _)) = waiting.iter().find(|(_, s)| Some(*s) == set) {
                    out.push((e.at_ms, *runner_id, *job));
                }
            }
            _ => {}
        }
    }
    out
}

/// When the controller moved to remove a runner: each RemoveRunner call for it and each successful
/// controller delete of its EphemeralRunner, legacy Runner or pod, by runner id, in time order.
fn removals(run: &RunRecord) -> RunnerTimes {
    let runner_of_pod: BTreeMap<String, i64> = run
        .kubelet_events()
        .filter_map(|e| match e.kind {
            KubeletEventKind::RunnerConnected { runner_id } => Some((e.pod.clone(), runner_id)),
            _ => None,
        })
        .collect();
    let mut removals: Vec<(u64, i64)> = run
        .audit()
        .filter(|a| matches!(a.resource.as_str(), "pods" | "ephemeralrunners" | "runners"))
        .filter(|a| a.verb == ApiVerb::Delete && crate::view::is_controller(&a.actor) && a.took_effect())
        .filter_map(|a| Some((a.served_ms, *runner_of_pod.get(&format!("{}/{}", a.namespace, a.name))?)))
        .collect();
    removals.extend(run.github_events().filter_map(|e| match e.kind {
        EventKind::RemoveRunner { runner_id, .. } => Some((e.at_ms, runner_id)),
        _ => None,
    }));
    RunnerTimes::of(removals.into_iter())
}

/// A job assigned to a runner within 1 s (either order) of the controller moving to remove that runner:
/// a RemoveRunner call for it, or a delete of its EphemeralRunner or pod.
pub fn job_assigned_within_1s_of_pod_delete(run: &RunRecord) -> u32 {
    let removals = removals(run);
    run.github_events()
        .filter_map(|e| match e.kind {
            EventKind::JobAssigned { runner_id, .. } => Some((e.at_ms, runner_id)),
            _ => None,
        })
        .filter(|(at, runner)| removals.within(*runner, at.saturating_sub(1000), at + 1000))
        .count() as u32
}

/// A job GitHub assigned to a runner whose pod already had a deletionTimestamp at that moment (in the
/// record's order): the window between a pod's deletion and its runner's session going away (the
/// kubelet's watch lag, the delay to SIGTERM, the runner's shutdown), in which the job can only be
/// canceled by the runner's shutdown or lost with it.
pub fn job_assigned_after_pod_deletion(run: &RunRecord) -> u32 {
    let mut pod_of_runner: BTreeMap<i64, &str> = BTreeMap::new();
    let mut deleting: BTreeSet<&str> = BTreeSet::new();
    let mut hits = 0;
    for e in &run.events {
        if let Some(c) = e.get::<Committed>().filter(|c| c.resource == "pods") {
            if c.change.object.at("/metadata/deletionTimestamp").is_some() {
                deleting.insert(str_at(&c.change.object, "/metadata/uid").unwrap_or(""));
            }
        } else if let Some(k) = e.get::<KubeletEvent>() {
            if let KubeletEventKind::RunnerConnected { runner_id } = k.kind {
                pod_of_runner.insert(runner_id, k.uid.as_str());
            }
        } else if let Some(EventKind::JobAssigned { runner_id, .. }) = e.get::<GitHubEvent>().map(|g| &g.kind)
        {
            hits += u32::from(pod_of_runner.get(runner_id).is_some_and(|uid| deleting.contains(uid)));
        }
    }
    hits
}

/// A RemoveRunner, or a controller delete of the runner's EphemeralRunner or pod, between a job's
/// assignment to that runner and its JobStarted going out (to the end of the run if it never did):
/// the controller acted on a runner the listener could not yet know was busy.
pub fn job_started_delayed(run: &RunRecord) -> u32 {
    let removals = removals(run);
    let mut assigned: BTreeMap<i64, (u64, i64)> = BTreeMap::new();
    let mut windows: Vec<(u64, u64, i64)> = Vec::new();
    for e in run.github_events() {
        match e.kind {
            EventKind::JobAssigned { request_id, runner_id } => {
                assigned.insert(request_id, (e.at_ms, runner_id));
            }
            EventKind::JobStartedSent { request_id, .. } => {
                if let Some((from, runner)) = assigned.remove(&request_id) {
                    windows.push((from, e.at_ms, runner));
                }
            }
            _ => {}
        }
    }
    windows.extend(assigned.into_values().map(|(from, runner)| (from, run.end_ms, runner)));
    windows.iter().filter(|(from, to, runner)| removals.within(*runner, *from, *to)).count() as u32
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::apiserver::reads::{ReadEntry, ReadVia};
    use arc_world::RunRecord;
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{NS, er, github, pod};

    /// Runner 7's EphemeralRunner `r-1` (idle at rv 1, busy at rv 2) was last read by the controller at
    /// `seen_rv`; GitHub assigned it a job at `assigned_ms`; RemoveRunner answered busy at 20 000 ms.
    fn busy_answer(seen_rv: u64, assigned_ms: u64) -> RunRecord {
        let read = ReadEntry {
            ms: 5_000,
            actor: "controller".into(),
            resource: "ephemeralrunners".into(),
            key: format!("{NS}/r-1"),
            rv: seen_rv,
            via: ReadVia::Watch,
        };
        let assigned = EventKind::JobAssigned { request_id: 1, runner_id: 7 };
        let busy = EventKind::RemoveRunner { runner_id: 7, outcome: RemoveOutcome::JobStillRunning };
        let mut run = SyntheticRun::new()
            .committed(1_000, "ephemeralrunners", EventType::Added, er("r-1", "u1", Some("Pending"), 7, None))
            .committed(
                2_000,
                "ephemeralrunners",
                EventType::Modified,
                er("r-1", "u1", Some("Running"), 7, Some("j")),
            )
            .event(5_000, read);
        run = run.event(assigned_ms, github(assigned_ms, assigned));
        run.event(20_000, github(20_000, busy)).build()
    }

    /// Runner 7 connects in pod `r-1`; the pod is marked for deletion at `deleted_ms` (if at all);
    /// GitHub assigns runner 7 a job at 5 000 ms.
    fn assignment_around_deletion(deleted_ms: Option<u64>) -> RunRecord {
        let connected = KubeletEvent {
            ms: 1_000,
            pod: format!("{NS}/r-1"),
            uid: "pod-r-1".into(),
            kind: KubeletEventKind::RunnerConnected { runner_id: 7 },
        };
        let mut run = SyntheticRun::new()
            .committed(500, "pods", EventType::Added, pod("r-1", "u1"))
            .event(1_000, connected);
        if let Some(ms) = deleted_ms {
            let mut deleting = pod("r-1", "u1");
            deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:04Z".into();
            run = run.committed(ms, "pods", EventType::Modified, deleting);
        }
        let assigned = EventKind::JobAssigned { request_id: 1, runner_id: 7 };
        run.event(5_000, github(5_000, assigned)).build()
    }

    #[test]
    fn an_assignment_counts_only_once_its_runners_pod_is_being_deleted() {
        assert_eq!(job_assigned_after_pod_deletion(&assignment_around_deletion(Some(4_000))), 1);
        assert_eq!(job_assigned_after_pod_deletion(&assignment_around_deletion(None)), 0, "never deleted");
    }

    #[test]
    fn a_busy_answer_counts_when_a_fresh_assignment_beat_a_removal_chosen_on_an_idle_view() {
        assert_eq!(remove_runner_lost_to_assignment(&busy_answer(1, 15_000)), 1);
        assert_eq!(
            remove_runner_lost_to_assignment(&busy_answer(2, 15_000)),
            0,
            "the controller saw the job"
        );
        assert_eq!(remove_runner_lost_to_assignment(&busy_answer(1, 6_000)), 0, "assigned long before");
    }
}
