//! Runners removed at GitHub leave their set: an EphemeralRunner whose registration RemoveRunner took
//! away while it was live (a scale-down, a cleanup) is deleted soon after. Until it is, its set counts
//! it against its replicas though no job can ever reach it, and its pod runs on (minutes, while
//! actions/runner retries "registration not found").

use std::collections::BTreeMap;

use arc_sim::apiserver::{Committed, EventType};
use arc_sim::github::{EventKind, GitHubEvent, RemovalReason};
use arc_sim::record::{Interest, WorldEvent};
use arc_world::RunRecord;

use super::Oracle;
use crate::pauses::Stops;
use crate::probes::runner_states::RunnerStates;
use crate::violation::Violation;

/// How long a live EphemeralRunner may outlive the removal of its registration before it leaves its
/// set's count (deleting, gone, or Succeeded). ARC deletes it right after RemoveRunner; when that
/// delete fails, the next pass must (the reconcile's backoff: 5 ms doubling), or the runner's own
/// controller deletes it once its pod exits. Measured for the fixed controller on 300 steady-state
/// seeds from 20,400,000: over a second in 103 seeds, at most 37.6 s (99th percentile 26.8 s); a
/// runner whose process retries a removed registration runs on for at least 396 s. 120 s lies
/// between, three times the longest lag seen (docs/oracles.md).
pub const REMOVED_RUNNER_DELETED_WITHIN_MS: u64 = 120_000;

/// A runner removed at GitHub (RemoveRunner) while its EphemeralRunner was live and held its id leaves
/// its set's count (deleting, gone, or Succeeded) within [`REMOVED_RUNNER_DELETED_WITHIN_MS`] of the
/// controller's running time (a pause of the controller process stops the count), or is
/// registered again under another id, which ends what the removal asked of it.
pub struct RemovedRunnerDeletedPromptly;

impl Oracle for RemovedRunnerDeletedPromptly {
    fn name(&self) -> &'static str {
        "removed-runner-deleted-promptly"
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner whose registration RemoveRunner took away leaves its set's count within 120 s"
    }

    /// Judges a record so far: a runner still live past its bound on a record cut later stays so.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn needs(&self) -> Interest {
        // The controller's pauses (WorldEvent): time it was stopped does not count.
        Interest::of_resources::<Committed>(&["ephemeralrunners"]).and::<GitHubEvent>().and::<WorldEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let histories = histories(run);
        // Each runner id's histories (those that ever held it), in key order.
        let mut holders: BTreeMap<i64, Vec<(&String, &History)>> = BTreeMap::new();
        for (key, history) in &histories {
            let ids: std::collections::BTreeSet<i64> = history.0.iter().map(|(_, id, _)| *id).collect();
            ids.into_iter().for_each(|id| holders.entry(id).or_default().push((key, history)));
        }
        let stops = Stops::of(run);
        let mut out = Vec::new();
        for (removed_ms, id) in removals(run) {
            let candidates = holders.get(&id).map(Vec::as_slice).unwrap_or(&[]);
            let Some(&(key, history)) = candidates.iter().find(|(_, h)| h.held_live(id, removed_ms)) else {
                continue;
            };
            // Time the controller was stopped (a pause) does not count.
            let due_ms = stops.deadline_after(removed_ms, REMOVED_RUNNER_DELETED_WITHIN_MS);
            let left_ms = history.left_after(id, removed_ms);
            if left_ms.is_none_or(|left| left > due_ms) && run.end_ms >= due_ms {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: due_ms,
                    objects: vec![format!("ephemeralrunner {key}"), format!("runner {id}")],
                    message: match left_ms {
                        Some(left) => format!(
                            "runner {id} was removed at GitHub at {removed_ms} ms while its runner was live; \
                             the runner left its set's count only {:.1} s later",
                            (left - removed_ms) as f64 / 1_000.0
                        ),
                        None => format!(
                            "runner {id} was removed at GitHub at {removed_ms} ms while its runner was live; \
                             the runner was still live at the end ({} ms)",
                            run.end_ms
                        ),
                    },
                });
            }
        }
        out
    }
}

/// Every RemoveRunner that removed a registered runner: (sim ms, runner id).
fn removals(run: &RunRecord) -> Vec<(u64, i64)> {
    run.github_events()
        .filter_map(|e| match e.kind {
            EventKind::RunnerRemoved { runner_id, reason: RemovalReason::Removed } => {
                Some((e.at_ms, runner_id))
            }
            _ => None,
        })
        .collect()
}

/// One EphemeralRunner incarnation's committed states: (sim ms, runner id, out of its set's count:
/// deleting, gone or Succeeded; a Failed runner still counts, as ARC's `scaleTotal` has it).
#[derive(Default)]
struct History(Vec<(u64, i64, bool)>);

impl History {
    /// Whether, at `ms`, its latest state held `id` and was live.
    fn held_live(&self, id: i64, ms: u64) -> bool {
        self.0.iter().rev().find(|(at, _, _)| *at <= ms).is_some_and(|(_, held, gone)| *held == id && !gone)
    }

    /// When, after `ms`, it began deleting, went, or came to hold another id; `None` if never.
    fn left_after(&self, id: i64, ms: u64) -> Option<u64> {
        self.0.iter().find(|(at, held, gone)| *at > ms && (*gone || *held != id)).map(|(at, _, _)| *at)
    }
}

/// Each EphemeralRunner's history, by `namespace/name (uid)`: its commits (the runner versions shared
/// with other judges), split by incarnation.
fn histories(run: &RunRecord) -> BTreeMap<String, History> {
    let states = RunnerStates::of(run);
    let mut named: BTreeMap<String, History> = BTreeMap::new();
    // `namespace/name (uid)` written into one buffer, copied only for an incarnation seen first.
    let mut name = String::new();
    for state in states.iter() {
        let gone = state.change.kind == EventType::Deleted || state.deleting || &*state.phase == "Succeeded";
        let key = &state.change.key;
        name.clear();
        name.extend([key.namespace.as_str(), "/", key.name.as_str(), " (", &state.uid, ")"]);
        let entry = (state.ms, state.runner_id, gone);
        match named.get_mut(name.as_str()) {
            Some(history) => history.0.push(entry),
            None => drop(named.insert(name.clone(), History(vec![entry]))),
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{er, github};

    fn removed(at_ms: u64, id: i64) -> GitHubEvent {
        github(at_ms, EventKind::RunnerRemoved { runner_id: id, reason: RemovalReason::Removed })
    }

    fn deleting(at_ms: u64, run: SyntheticRun) -> SyntheticRun {
        let mut object = er("r-1", "u1", Some("Running"), 7, None);
        object["metadata"]["deletionTimestamp"] = serde_json::json!("2026-01-01T00:00:00Z");
        run.committed(at_ms, "ephemeralrunners", EventType::Modified, object)
    }

    fn registered_runner() -> SyntheticRun {
        SyntheticRun::new()
            .committed(100, "ephemeralrunners", EventType::Added, er("r-1", "u1", None, 0, None))
            .committed(
                200,
                "ephemeralrunners",
                EventType::Modified,
                er("r-1", "u1", Some("Running"), 7, None),
            )
    }

    #[test]
    fn a_runner_deleted_soon_after_its_removal_is_clean() {
        let run =
            deleting(1_500, registered_runner().event(1_000, removed(1_000, 7))).ended_at(600_000).build();
        assert_eq!(RemovedRunnerDeletedPromptly.check(&run), Vec::new());
    }

    #[test]
    fn a_runner_left_live_past_the_bound_is_a_violation_at_the_bound() {
        let late = REMOVED_RUNNER_DELETED_WITHIN_MS + 1_001;
        let run =
            deleting(late, registered_runner().event(1_000, removed(1_000, 7))).ended_at(600_000).build();
        let violations = RemovedRunnerDeletedPromptly.check(&run);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].at_ms, 1_000 + REMOVED_RUNNER_DELETED_WITHIN_MS);
        assert_eq!(violations[0].objects, vec!["ephemeralrunner runners/r-1 (u1)", "runner 7"]);
        let never = registered_runner().event(1_000, removed(1_000, 7)).ended_at(600_000).build();
        assert!(RemovedRunnerDeletedPromptly.check(&never)[0].message.contains("still live at the end"));
    }

    #[test]
    fn a_runner_that_succeeded_has_left_the_count_but_a_failed_one_has_not() {
        let finished = |phase: &str| {
            registered_runner()
                .event(1_000, removed(1_000, 7))
                .committed(
                    2_000,
                    "ephemeralrunners",
                    EventType::Modified,
                    er("r-1", "u1", Some(phase), 7, None),
                )
                .ended_at(600_000)
                .build()
        };
        assert_eq!(RemovedRunnerDeletedPromptly.check(&finished("Succeeded")), Vec::new());
        assert_eq!(RemovedRunnerDeletedPromptly.check(&finished("Failed")).len(), 1, "Failed still counts");
    }

    #[test]
    fn a_run_that_ends_before_the_bound_judges_nothing_yet() {
        let run = registered_runner().event(1_000, removed(1_000, 7)).ended_at(60_000).build();
        assert_eq!(RemovedRunnerDeletedPromptly.check(&run), Vec::new());
    }

    #[test]
    fn removals_of_deleting_runners_and_of_ids_no_live_runner_holds_do_not_count() {
        let finalizer = deleting(900, registered_runner()).event(1_000, removed(1_000, 7)).ended_at(600_000);
        assert_eq!(
            RemovedRunnerDeletedPromptly.check(&finalizer.build()),
            Vec::new(),
            "removed by its finalizer"
        );
        let stranger = registered_runner().event(1_000, removed(1_000, 8)).ended_at(600_000).build();
        assert_eq!(RemovedRunnerDeletedPromptly.check(&stranger), Vec::new(), "a runner no runner holds");
        let again = registered_runner()
            .event(1_000, removed(1_000, 7))
            .committed(
                2_000,
                "ephemeralrunners",
                EventType::Modified,
                er("r-1", "u1", Some("Running"), 9, None),
            )
            .ended_at(600_000)
            .build();
        assert_eq!(RemovedRunnerDeletedPromptly.check(&again), Vec::new(), "registered again under id 9");
    }
}
