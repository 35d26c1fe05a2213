//! Race 3's windows (ARC-MODEL §8.3): GitHub assigns a job to a runner around the moment the
//! controller removes it. Each probe names one side of that race as the record shows it.

use std::collections::BTreeMap;

use arc_sim::faults::ApiVerb;
use arc_sim::github::{EventKind, RemoveOutcome};
use arc_sim::kubelet::KubeletEventKind;
use arc_sim::world::RunRecord;

use super::history::{Commits, Handed};
use crate::oracles::view::{runner_id, str_at};

/// How long before a busy answer the assignment must have come for the removal to have lost the race
/// to it: the listener's slowest message delivery in the race scenarios (6 s) plus GitHub's widest
/// assignment latency (4 s).
pub const ASSIGNMENT_WINDOW_MS: u64 = 10_000;

/// RemoveRunner answered busy (JobStillRunning) for a runner that GitHub had assigned a job within
/// [`ASSIGNMENT_WINDOW_MS`] before, while the last version of its EphemeralRunner the controller had
/// been handed showed no job: the controller chose an idle runner and lost it to an assignment.
pub fn remove_runner_lost_to_assignment(run: &RunRecord) -> u32 {
    let commits = Commits::of(run, "ephemeralrunners");
    let handed = Handed::to(run, "controller", "ephemeralrunners");
    let key_of_runner: BTreeMap<i64, String> = commits
        .iter()
        .flat_map(|(key, changes)| changes.iter().map(move |(_, c)| (runner_id(&c.object), key.clone())))
        .filter(|(id, _)| *id != 0)
        .collect();
    let assigned: Vec<(u64, i64)> = run
        .github_events()
        .filter_map(|e| match e.kind {
            EventKind::JobAssigned { runner_id, .. } => Some((e.at_ms, runner_id)),
            _ => None,
        })
        .collect();
    let busy = run.github_events().filter_map(|e| match e.kind {
        EventKind::RemoveRunner {
            runner_id,
            outcome: RemoveOutcome::JobStillRunning | RemoveOutcome::Busy,
        } => Some((e.at_ms, runner_id)),
        _ => None,
    });
    let mut hits = 0;
    for (at, runner) in busy {
        let just_assigned =
            assigned.iter().any(|(ms, r)| *r == runner && *ms <= at && at - ms <= ASSIGNMENT_WINDOW_MS);
        let Some(key) = key_of_runner.get(&runner) else { continue };
        let seen_idle = handed
            .last_before(key, at)
            .and_then(|rv| commits.version(key, rv))
            .is_some_and(|er| str_at(er, "/status/jobId").is_none());
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

/// A job assigned to a runner within 1 s (either order) of the controller moving to remove that runner:
/// a RemoveRunner call for it, or a delete of its EphemeralRunner or pod.
pub fn job_assigned_within_1s_of_pod_delete(run: &RunRecord) -> u32 {
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
        .filter(|a| {
            a.verb == ApiVerb::Delete && crate::oracles::view::is_controller(&a.actor) && a.code < 300
        })
        .filter_map(|a| Some((a.ms, *runner_of_pod.get(&format!("{}/{}", a.namespace, a.name))?)))
        .collect();
    removals.extend(run.github_events().filter_map(|e| match e.kind {
        EventKind::RemoveRunner { runner_id, .. } => Some((e.at_ms, runner_id)),
        _ => None,
    }));
    run.github_events()
        .filter_map(|e| match e.kind {
            EventKind::JobAssigned { runner_id, .. } => Some((e.at_ms, runner_id)),
            _ => None,
        })
        .filter(|(at, runner)| removals.iter().any(|(ms, r)| r == runner && ms.abs_diff(*at) <= 1000))
        .count() as u32
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::apiserver::reads::{ReadEntry, ReadVia};
    use arc_sim::world::RunRecord;
    use arc_sim::world::synthetic::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{NS, er, github};

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
