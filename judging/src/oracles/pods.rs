//! Pods of runners: each owned by the runner of its name, created a bounded number of times, and no
//! reconcile error caused by AlreadyExists (race 1, §8.1).

use arc_sim::json_at::At;
use std::collections::BTreeMap;

use arc_sim::apiserver::EventType;
use arc_sim::apiserver::reads::ReadEntry;
use arc_sim::apiserver::{AuditEntry, Change, Committed, WatchItem, WatchSent};
use arc_sim::faults::ApiVerb;
use arc_sim::github::{EventKind, GitHubCall, GitHubEvent};
use arc_sim::record::Interest;
use arc_world::RunRecord;

use super::Oracle;
use crate::probes::history::{Commits, Handed};
use crate::view::{controller_uid, is_controller, key_of, uid_of};
use crate::violation::Violation;

/// Every runner pod is controlled by the live EphemeralRunner (or Runner) of the same name, and no
/// runner pod is created while no runner of its name exists. A runner pod is a pod that names an
/// EphemeralRunner or Runner among its owners, as controller or not, or a pod named like a live runner;
/// one whose owner reference lacks `controller` is as wrong as one controlled by another uid, since
/// `Owns(Pod)` maps only controller references to their owner.
pub struct PodOwnedByItsRunner;

impl Oracle for PodOwnedByItsRunner {
    fn name(&self) -> &'static str {
        "pod-owned-by-its-runner"
    }

    /// Judges a record so far: each pod is judged against the owners live when it appeared.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "a runner pod is created only for a live runner of its name, and controlled by that runner's uid"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners", "runners", "pods"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut owners: BTreeMap<String, String> = BTreeMap::new();
        let mut out = Vec::new();
        for (ms, plural, change) in run.committed() {
            // Most changes are modifications, which need no key.
            let key = || key_of(&change.object);
            match (plural, change.kind) {
                ("ephemeralrunners" | "runners", EventType::Added) => {
                    owners.insert(key(), uid_of(&change.object).to_string());
                }
                ("ephemeralrunners" | "runners", EventType::Deleted) => {
                    owners.remove(&key());
                }
                ("pods", EventType::Added) => {
                    let key = key();
                    if !names_a_runner_owner(&change.object) && !owners.contains_key(&key) {
                        continue;
                    }
                    let Some(problem) = ownership_problem(&change.object, &key, owners.get(&key)) else {
                        continue;
                    };
                    out.push(Violation {
                        oracle: self.name(),
                        at_ms: ms,
                        objects: vec![format!("pod {key}")],
                        message: problem,
                    });
                }
                _ => {}
            }
        }
        out
    }
}

/// What is wrong with runner pod `key`'s ownership, given the uid of the live runner of its name.
fn ownership_problem(pod: &serde_json::Value, key: &str, live: Option<&String>) -> Option<String> {
    let controller = controller_uid(pod);
    let controlled = controller
        .map_or_else(|| "not controlled by any object".to_string(), |uid| format!("controlled by uid {uid}"));
    Some(match live {
        None => format!("created while no runner {key} exists ({controlled})"),
        Some(expected) if controller != Some(expected.as_str()) => {
            format!("{controlled}, but the live runner {key} is uid {expected}")
        }
        Some(_) => return None,
    })
}

/// Whether a pod names an EphemeralRunner or a legacy Runner among its owners, as controller or not.
fn names_a_runner_owner(pod: &serde_json::Value) -> bool {
    let owners = pod.at("/metadata/ownerReferences").and_then(serde_json::Value::as_array);
    owners.into_iter().flatten().any(|r| {
        matches!(r.get("kind").and_then(serde_json::Value::as_str), Some("EphemeralRunner" | "Runner"))
    })
}

/// A runner-pod create the API server answered AlreadyExists is not retried in a hot loop: the
/// controller's next create of that pod comes at least [`ALREADY_EXISTS_REQUEUE_MS`] later (after that
/// 409 or, as the requeue an earlier 409 scheduled, after an earlier one), or after a
/// newer event on that runner or its pod was delivered to it, from the millisecond the refused create
/// was served (see `delivered_between`; #4201 makes AlreadyExists an info log and
/// a 5 s requeue; before it, the reconcile failed and was retried after the rate limiter's few
/// milliseconds), or the 409 was met by the reconcile after one that failed on this runner, at the
/// API server or in a RemoveRunner of its registration (see `requeued_by_a_failure`), or the 409
/// met a pod the controller had not seen for longer than the requeue (its pod watch was down, and
/// the runner watch's resumed backlog wakes the reconcile: network-partition seed 67). Judged from
/// API traffic, never from the controller's own counters.
pub struct NoAlreadyExistsErrors;

/// The requeue after a create answered AlreadyExists (ARC #4201: 5 s).
pub const ALREADY_EXISTS_REQUEUE_MS: u64 = 5_000;

impl Oracle for NoAlreadyExistsErrors {
    fn name(&self) -> &'static str {
        "no-already-exists-reconcile-errors"
    }

    /// Judges a record so far: each refused create is judged on the events up to the next create.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "after a runner-pod create meets AlreadyExists, the next create of it waits 5 s or a newer event"
    }

    fn needs(&self) -> Interest {
        // The runner's own requests (its EphemeralRunner, status and secret) tell a failed reconcile.
        Interest::of_resources::<AuditEntry>(&["pods", "ephemeralrunners", "secrets"])
            .and::<GitHubCall>()
            .and::<GitHubEvent>()
            .and_resources::<WatchSent>(&["pods", "ephemeralrunners"])
            .and_resources::<Committed>(&["pods"])
            .and_resources::<ReadEntry>(&["pods"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let runner_pods = runner_pod_keys(run);
        let mut unseen = UnseenTooLong::of(run);
        let removals = FailedRemovals::of(run);
        let busy = ControllerBusy::of(run);
        let creates: Vec<&AuditEntry> = run
            .audit()
            .filter(|a| a.resource == "pods" && a.verb == ApiVerb::Create && a.actor == "controller")
            .filter(|a| runner_pods.contains(&(a.namespace.as_str(), a.name.as_str())))
            .collect();
        let mut out = Vec::new();
        for (i, refused) in creates.iter().enumerate().filter(|(_, a)| a.code == 409) {
            let key = format!("{}/{}", refused.namespace, refused.name);
            let Some(next) =
                creates[i + 1..].iter().find(|a| a.namespace == refused.namespace && a.name == refused.name)
            else {
                continue;
            };
            let waited = next.ms.saturating_sub(refused.ms) >= ALREADY_EXISTS_REQUEUE_MS;
            let previous_of_pod = creates[..i]
                .iter()
                .rev()
                .find(|a| a.namespace == refused.namespace && a.name == refused.name);
            let failure_window_from = failure_window_start(&creates[..i], refused, previous_of_pod.copied());
            let lost_answer_requeue = requeued_by_a_failure(run, &removals, failure_window_from, refused)
                || requeued_by_a_failure(run, &removals, Some(refused.ms + 1), next);
            let requeue_due = creates[..i].iter().any(|a| earlier_requeue_came_due(a, refused, next, &busy));
            if waited
                || lost_answer_requeue
                || requeue_due
                || unseen.excuses(run, refused)
                || delivered_between(run, &key, in_flight_from(previous_of_pod.copied(), refused), next.ms)
            {
                continue;
            }
            out.push(Violation {
                oracle: self.name(),
                at_ms: next.ms,
                objects: vec![format!("pod {key}")],
                message: format!(
                    "created again {} ms after a create answered AlreadyExists, with no newer event delivered",
                    next.ms - refused.ms
                ),
            });
        }
        out
    }
}

/// Whether a controller request on `refused`'s runner (its EphemeralRunner, status, pod or secret,
/// which share the name) failed into a reconcile error from `from_ms` ([`failure_window_start`]: the
/// pod's previous create, included, whatever other pods' creates came in between) to `refused`: a create or a
/// status patch whose answer was lost after its commit (steady-state seeds 2,000,003 and 2,000,026;
/// `arc-0.15.0` seed 4, whose #4681 order records the identity after the create), a 5xx or a 429.
/// That failure already put a rate-limited requeue in the work queue, and a requeue-after for
/// AlreadyExists cannot take it back (client-go's delaying queue keeps the earliest time), so one more
/// create follows in milliseconds, in ARC as here. A 409 is not such a failure, so only the first 409
/// after a failure is excused and a hot loop of 409s is still judged. A failed RemoveRunner of the
/// runner's registration counts too (watch-lag seed 2,000,210 with `bug-secrets-cached`: a JIT secret
/// the controller could not see, AgentExists, then RemoveRunner answered 400 JobStillRunning, a
/// reconcile error in ARC as here). A failure between the 409 and the next create excuses that create
/// the same way: its requeue comes before the 409's requeue-after (steady-state seed 27,500,319: a 409
/// at 563.231 s, a patch of the runner answered 500 after its commit at 564.688 s, the failure's
/// requeue meeting AlreadyExists again at 568.089 s).
fn requeued_by_a_failure(
    run: &RunRecord,
    removals: &FailedRemovals,
    from_ms: Option<u64>,
    refused: &AuditEntry,
) -> bool {
    let Some(from_ms) = from_ms else { return false };
    let window = from_ms..refused.ms;
    run.audit().any(|a| {
        a.actor == "controller"
            && a.namespace == refused.namespace
            && a.name == refused.name
            && window.contains(&a.ms)
            && (a.committed_then_failed || a.code == 0 || a.code == 429 || a.code >= 500)
    }) || removals.within(&refused.name, window)
}

/// How long after a failure its rate-limited requeue may still come due (the per-item backoff of the
/// first eight failures in a row: 5 ms doubling).
pub const FAILURE_REQUEUE_MS: u64 = 2_000;

/// From when a failure on `refused`'s runner may have put the requeue that made the next create: the
/// pod's previous create (`previous`). When that create was answered 201 it ended no 409 loop, and the
/// failure's requeue may come due after it and after a pass an event woke: then the window opens at
/// the create before it, and at most [`FAILURE_REQUEUE_MS`] before `refused` (steady-state seed
/// 24,000,038: a status patch failed after its commit at 141.773 s, the pass the runner's own update
/// had marked created the pod at 141.777 s, a pass woken by the next update met AlreadyExists at
/// 141.783 s, and the failure's requeue met it again at 141.791 s).
fn failure_window_start(
    earlier: &[&AuditEntry],
    refused: &AuditEntry,
    previous: Option<&AuditEntry>,
) -> Option<u64> {
    let previous = previous?;
    if !(200..300).contains(&previous.code) {
        return Some(previous.ms);
    }
    let same_pod = |a: &&&AuditEntry| a.namespace == refused.namespace && a.name == refused.name;
    let before_previous = earlier.iter().rev().filter(same_pod).nth(1).map_or(0, |a| a.ms);
    Some(before_previous.max(refused.ms.saturating_sub(FAILURE_REQUEUE_MS)).min(previous.ms))
}

/// When a RemoveRunner of a registration got a failure (an error status, a dropped connection or a
/// lost answer), by the runner name it was registered under; read once a run. Only RemoveRunner names
/// its runner in the request the fake records (`/agents/{id}`); GenerateJitConfig carries the name in
/// its body, which the record leaves out.
struct FailedRemovals(BTreeMap<String, Vec<u64>>);

impl FailedRemovals {
    fn of(run: &RunRecord) -> Self {
        let names: BTreeMap<String, &str> = run
            .github_events()
            .filter_map(|e| match &e.kind {
                EventKind::RunnerRegistered { runner_id, name, .. } => {
                    Some((format!("/agents/{runner_id}"), name.as_str()))
                }
                _ => None,
            })
            .collect();
        let mut by_name: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for event in &run.events {
            let Some(call) = event.get::<GitHubCall>() else { continue };
            let failed =
                call.committed_then_failed() || !call.status.is_some_and(|s| (200..300).contains(&s));
            if call.operation != "remove-runner" || !failed {
                continue;
            }
            let agent = call.path.rfind("/agents/").map(|at| &call.path[at..]);
            if let Some(name) = agent.and_then(|agent| names.get(agent)) {
                by_name.entry((*name).to_string()).or_default().push(event.at_ms);
            }
        }
        FailedRemovals(by_name)
    }

    /// Whether a removal of `name`'s registration failed within `window`.
    fn within(&self, name: &str, window: std::ops::Range<u64>) -> bool {
        self.0.get(name).is_some_and(|times| times.iter().any(|at| window.contains(at)))
    }
}

/// The (namespace, name) of every pod that carried ARC's runner label in some version (the pods
/// EphemeralRunners own), borrowed from the record.
fn runner_pod_keys(run: &RunRecord) -> std::collections::BTreeSet<(&str, &str)> {
    // Per pod, its versions until the first that carries the label.
    let is_runners = |c: &Change| c.object.at("/metadata/labels/actions-ephemeral-runner").is_some();
    Commits::of(run, "pods")
        .iter()
        .filter_map(|(_, mut changes)| changes.find(|(_, c)| is_runners(c)))
        .map(|(_, c)| (c.key.namespace.as_str(), c.key.name.as_str()))
        .collect()
}

/// How long after its requeue-after comes due an earlier 409's reconcile may make its create.
pub const REQUEUE_DUE_SLACK_MS: u64 = 1_000;

/// Whether `next` is the reconcile an earlier AlreadyExists (`earlier`, before `refused`) scheduled:
/// every 409 requeues its runner after 5 s, and a later requeue-after does not take back an earlier
/// one (client-go's delaying queue keeps the earliest time), so a reconcile woken by a newer event in
/// between, answered 409 again, is followed by the first one's requeue (watch-lag seed 15: 409s at
/// 287.776 s and 289.416 s, the first one's requeue at 292.783 s). The requeue's reconcile starts
/// within [`REQUEUE_DUE_SLACK_MS`] of coming due, or later while the controller's workers are busy
/// with other runners from then on (steady-state seed 17,000,519: a stalled pod watch, a dozen runners
/// meeting AlreadyExists, each reconcile waiting on GitHub; the requeue due at 442.070 s made its create
/// at 443.764 s behind them).
fn earlier_requeue_came_due(
    earlier: &AuditEntry,
    refused: &AuditEntry,
    next: &AuditEntry,
    busy: &ControllerBusy,
) -> bool {
    let due = earlier.ms + ALREADY_EXISTS_REQUEUE_MS;
    earlier.code == 409
        && earlier.ms < refused.ms
        && earlier.namespace == refused.namespace
        && earlier.name == refused.name
        && ((due..=due + REQUEUE_DUE_SLACK_MS).contains(&next.ms)
            || (next.ms > due && busy.throughout(due, next.ms)))
}

/// When the controller made API requests: the times its workers were at work.
struct ControllerBusy(Vec<u64>);

impl ControllerBusy {
    fn of(run: &RunRecord) -> Self {
        let requests = run.events_of::<AuditEntry>().filter(|a| crate::view::is_controller(&a.actor));
        let mut times: Vec<u64> = requests.filter(|a| a.verb != ApiVerb::Watch).map(|a| a.ms).collect();
        times.sort_unstable();
        ControllerBusy(times)
    }

    /// Whether no gap longer than [`REQUEUE_DUE_SLACK_MS`] separates its requests in `[from, to]`
    /// (from `from` to the first, between them, and from the last to `to`).
    fn throughout(&self, from: u64, to: u64) -> bool {
        let start = self.0.partition_point(|ms| *ms < from);
        let mut last = from;
        for ms in self.0[start..].iter().take_while(|ms| **ms <= to) {
            if ms - last > REQUEUE_DUE_SLACK_MS {
                return false;
            }
            last = *ms;
        }
        to - last <= REQUEUE_DUE_SLACK_MS
    }
}

/// From when an event on the runner may have reached the reconcile that made `refused`: that reconcile
/// began after the pod's previous create (`previous`) was answered, at the latest when `refused` was
/// served, and an event delivered while it ran marks the runner for one more pass. steady-state seed
/// 20,000,425: a create answered 201, the next pass (already running) met AlreadyExists at 412.136 s,
/// and an update of the runner (the runner set's removal mark) delivered at 412.133 s had marked it
/// for the pass whose create came at 412.141 s.
fn in_flight_from(previous: Option<&AuditEntry>, refused: &AuditEntry) -> u64 {
    previous.map_or(refused.served_ms, |p| p.served_ms.min(refused.served_ms))
}

/// Whether a watch event on `key` (the runner or its pod) reached the controller in `[from, to]`.
/// The caller passes as `from` [`in_flight_from`], no later than the millisecond the refused create
/// reached the store, not its answer: an event that came while that create was in flight marks the
/// runner for one more reconcile, which
/// makes the next create (steady-state seed 2,000,193 with `bug-secrets-cached`: an update delivered
/// in the millisecond the create was served, before its 409 went back; the next create 2 ms later).
/// An event of that same millisecond counts, since the record cannot order it before the create's
/// reconcile began.
fn delivered_between(run: &RunRecord, key: &str, from: u64, to: u64) -> bool {
    run.events.iter().any(|e| {
        e.at_ms >= from
            && e.at_ms <= to
            && e.get::<WatchSent>().is_some_and(|w| {
                w.actor.as_deref() == Some("controller")
                    && matches!(&w.item, WatchItem::Change { key: k, .. } if k == key)
            })
    })
}

/// Duplicate runner-pod creates (answered AlreadyExists) stay within a small bound per pod incarnation:
/// with the fix each stale-cache reconcile makes one, and the 5 s requeue is longer than the watch lag.
/// Only EphemeralRunner pods are judged: the listener pod's controller never had #4201's handling, in
/// ARC or here, and retries its creates as reconcile errors. A 409 met while the pod in the way had
/// gone unseen by the controller for longer than the requeue is not counted: its pod watch was down
/// (network-partition seed 35: a 410 after a partition and the informer's 30 s backoff before the
/// relist), not lagging, and each 5 s requeue meets the pod again, as ARC's would.
pub struct BoundedPodCreates;

/// Duplicate creates allowed per pod incarnation.
pub const DUPLICATE_CREATES_PER_POD: usize = 3;

impl Oracle for BoundedPodCreates {
    fn name(&self) -> &'static str {
        "bounded-pod-creates"
    }

    /// Judges a record so far: a pod incarnation over its bound stays over it.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "at most 3 runner-pod creates answered AlreadyExists per pod incarnation"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<AuditEntry>(&["pods"])
            .and_resources::<Committed>(&["pods"])
            .and_resources::<ReadEntry>(&["pods"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let runner_pods = runner_pod_keys(run);
        let mut unseen = UnseenTooLong::of(run);
        // Per pod name: the unexcused 409s since its last create that took effect (its incarnation).
        let mut per_name: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        let mut out = Vec::new();
        let pod_creates = run.audit().filter(|a| a.resource == "pods" && a.verb == ApiVerb::Create);
        for a in pod_creates.filter(|a| runner_pods.contains(&(a.namespace.as_str(), a.name.as_str()))) {
            let duplicates = per_name.entry((a.namespace.as_str(), a.name.as_str())).or_insert(0);
            if a.took_effect() {
                *duplicates = 0;
            } else if a.code == 409 && !unseen.excuses(run, a) {
                *duplicates += 1;
                if *duplicates == DUPLICATE_CREATES_PER_POD + 1 {
                    out.push(Violation {
                        oracle: self.name(),
                        at_ms: a.ms,
                        objects: vec![format!("pod {}/{}", a.namespace, a.name)],
                        message: format!(
                            "more than {DUPLICATE_CREATES_PER_POD} creates answered AlreadyExists for one incarnation of the pod"
                        ),
                    });
                }
            }
        }
        out
    }
}

/// Which 409s met a pod the controller's cache had not held for longer than the requeue: the pod in
/// the way was created more than [`ALREADY_EXISTS_REQUEUE_MS`] before and had not been handed to the
/// controller that tried to create it (by a watch event, a list or a get).
struct UnseenTooLong<'a> {
    commits: Commits<'a>,
    handed: BTreeMap<String, std::sync::Arc<Handed>>,
}

impl<'a> UnseenTooLong<'a> {
    fn of(run: &'a RunRecord) -> Self {
        UnseenTooLong { commits: Commits::of(run, "pods"), handed: BTreeMap::new() }
    }

    fn excuses(&mut self, run: &RunRecord, refused: &AuditEntry) -> bool {
        if !is_controller(&refused.actor) {
            return false;
        }
        let key = format!("{}/{}", refused.namespace, refused.name);
        let Some((created_ms, creation)) = self.commits.creation_before(&key, refused.ms) else {
            return false;
        };
        if refused.ms.saturating_sub(created_ms) <= ALREADY_EXISTS_REQUEUE_MS {
            return false;
        }
        let to_actor = self
            .handed
            .entry(refused.actor.clone())
            .or_insert_with(|| Handed::to(run, &refused.actor, "pods"));
        !to_actor.saw(&key, creation.rv, refused.ms)
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::{EventType, WatchItem, WatchSent};
    use arc_sim::faults::ApiVerb;
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{NS, er, pod, request};

    fn with_pod() -> SyntheticRun {
        SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r", "u1", None, 0, None))
            .committed(2, "pods", EventType::Added, pod("r", "u1"))
    }

    #[test]
    fn a_pod_controlled_by_another_uid_or_created_with_no_runner_is_a_violation() {
        assert!(PodOwnedByItsRunner.check(&with_pod().build()).is_empty());
        let wrong = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r", "u2", None, 0, None))
            .committed(2, "pods", EventType::Added, pod("r", "u1"))
            .build();
        assert!(PodOwnedByItsRunner.check(&wrong)[0].message.contains("but the live runner"));
        let gone = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r", "u1", None, 0, None))
            .committed(2, "ephemeralrunners", EventType::Deleted, er("r", "u1", None, 0, None))
            .committed(3, "pods", EventType::Added, pod("r", "u1"))
            .build();
        assert!(PodOwnedByItsRunner.check(&gone)[0].message.contains("while no runner"));
    }

    #[test]
    fn a_runner_pod_owned_but_not_controlled_by_its_runner_is_a_violation() {
        let mut owned = pod("r", "u1");
        owned["metadata"]["ownerReferences"][0]["controller"] = serde_json::Value::Null;
        let record = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r", "u1", None, 0, None))
            .committed(2, "pods", EventType::Added, owned.clone())
            .build();
        let found = PodOwnedByItsRunner.check(&record);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].message.contains("not controlled by any object, but the live runner"), "{found:?}");
        let mut unowned = owned;
        unowned["metadata"]["ownerReferences"] = serde_json::json!([]);
        let named_like_the_runner = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r", "u1", None, 0, None))
            .committed(2, "pods", EventType::Added, unowned.clone())
            .build();
        assert_eq!(PodOwnedByItsRunner.check(&named_like_the_runner).len(), 1, "named like a live runner");
        let listener = SyntheticRun::new().committed(2, "pods", EventType::Added, unowned).build();
        assert!(PodOwnedByItsRunner.check(&listener).is_empty(), "no runner owner and no runner of its name");
    }

    #[test]
    fn a_create_retried_fast_after_already_exists_with_nothing_new_delivered_is_a_violation() {
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let hot = with_pod().event(10, create(10, 409)).event(25, create(25, 409)).build();
        let found = NoAlreadyExistsErrors.check(&hot);
        assert_eq!(found.len(), 1, "{found:?}");
        let waited = with_pod().event(10, create(10, 409)).event(5_020, create(5_020, 409)).build();
        let first_requeue = with_pod()
            .event(10, create(10, 409))
            .event(2_000, create(2_000, 409))
            .event(5_017, create(5_017, 409))
            .build();
        let found = NoAlreadyExistsErrors.check(&first_requeue);
        assert_eq!(
            found.len(),
            1,
            "the second create was fast; the third is the first 409's requeue: {found:?}"
        );
        assert_eq!(found[0].at_ms, 2_000);
        assert!(NoAlreadyExistsErrors.check(&waited).is_empty(), "a 5 s requeue");
        let delivered = WatchSent {
            id: 3,
            actor: Some("controller".into()),
            resource: "ephemeralrunners".into(),
            item: WatchItem::Change { kind: "MODIFIED", key: format!("{NS}/r"), rv: "9".into() },
        };
        let woken =
            with_pod().event(10, create(10, 409)).event(12, delivered).event(25, create(25, 409)).build();
        assert!(NoAlreadyExistsErrors.check(&woken).is_empty(), "a newer event woke the reconcile");
        let lost = AuditEntry { code: 0, committed_then_failed: true, ..create(5, 0) };
        let after_lost =
            with_pod().event(5, lost.clone()).event(10, create(10, 409)).event(18, create(18, 409)).build();
        assert!(
            NoAlreadyExistsErrors.check(&after_lost).is_empty(),
            "the lost answer's own requeue makes one more create"
        );
        let loop_after_lost = with_pod()
            .event(5, lost)
            .event(10, create(10, 409))
            .event(18, create(18, 409))
            .event(30, create(30, 409))
            .build();
        assert_eq!(NoAlreadyExistsErrors.check(&loop_after_lost).len(), 1, "a hot loop is still judged");
    }

    #[test]
    fn a_requeue_that_came_due_while_the_workers_were_busy_makes_its_create_late_but_excused() {
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let other = |ms| request(ms, "controller", ApiVerb::Patch, "ephemeralrunners", "other", 200);
        let late = || with_pod().event(10, create(10, 409)).event(2_000, create(2_000, 409));
        // The first 409's requeue comes due at 5.010 s; its create comes at 6.700 s.
        let idle = late().event(6_700, create(6_700, 409)).build();
        let found = NoAlreadyExistsErrors.check(&idle);
        assert_eq!(found.iter().filter(|v| v.at_ms == 6_700).count(), 1, "an idle controller: {found:?}");
        let busy = late()
            .event(5_600, other(5_600))
            .event(6_300, other(6_300))
            .event(6_700, create(6_700, 409))
            .build();
        let found = NoAlreadyExistsErrors.check(&busy);
        assert!(found.iter().all(|v| v.at_ms != 6_700), "workers busy from 5.010 s on: {found:?}");
    }

    #[test]
    fn a_lost_answer_excuses_its_retry_even_when_another_pods_create_came_between() {
        // Steady-state seeds 2,000,003 and 2,000,026: the create of the pod before its 409 was not the
        // audit log's previous create, which belonged to another runner's pod.
        let create = |ms, name, code| request(ms, "controller", ApiVerb::Create, "pods", name, code);
        let lost = AuditEntry { code: 0, committed_then_failed: true, ..create(5, "r", 0) };
        let two_pods = || with_pod().committed(3, "pods", EventType::Added, pod("other", "u2"));
        let interleaved = two_pods()
            .event(5, lost.clone())
            .event(7, create(7, "other", 409))
            .event(10, create(10, "r", 409))
            .event(18, create(18, "r", 409))
            .build();
        assert!(
            NoAlreadyExistsErrors.check(&interleaved).is_empty(),
            "{:?}",
            NoAlreadyExistsErrors.check(&interleaved)
        );
        let answered = two_pods()
            .event(5, create(5, "r", 409))
            .event(7, create(7, "other", 409))
            .event(10, create(10, "r", 409))
            .event(18, create(18, "r", 409))
            .build();
        assert_eq!(NoAlreadyExistsErrors.check(&answered).len(), 2, "no lost answer, two fast retries");
    }

    #[test]
    fn a_lost_status_patch_after_the_create_excuses_one_fast_retry_and_no_more() {
        // arc-0.15.0 steady-state seed 4: #4681 records the runner's identity after the pod's create;
        // that patch committed and its answer was lost, so its error requeue followed the 409's reconcile.
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let lost_patch = AuditEntry {
            code: 0,
            committed_then_failed: true,
            status_subresource: true,
            ..request(6, "controller", ApiVerb::Patch, "ephemeralrunners", "r", 0)
        };
        let once = with_pod()
            .event(5, create(5, 201))
            .event(6, lost_patch.clone())
            .event(10, create(10, 409))
            .event(16, create(16, 409))
            .build();
        assert!(NoAlreadyExistsErrors.check(&once).is_empty(), "{:?}", NoAlreadyExistsErrors.check(&once));
        let looping = with_pod()
            .event(5, create(5, 201))
            .event(6, lost_patch)
            .event(10, create(10, 409))
            .event(16, create(16, 409))
            .event(22, create(22, 409))
            .build();
        assert_eq!(
            NoAlreadyExistsErrors.check(&looping).len(),
            1,
            "the loop goes on after the excused retry"
        );
    }

    #[test]
    fn a_failure_before_a_successful_create_excuses_one_fast_retry_after_a_pass_an_event_woke() {
        // Steady-state seed 24,000,038: a status patch failed after its commit, the runner's own update
        // woke the pass that created the pod, the next update woke a pass that met AlreadyExists, and
        // the failure's requeue met it again 8 ms later.
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let lost_patch = AuditEntry {
            code: 0,
            committed_then_failed: true,
            status_subresource: true,
            ..request(4, "controller", ApiVerb::Patch, "ephemeralrunners", "r", 0)
        };
        let failed_first = |extra: Option<u64>| {
            let run = with_pod()
                .event(4, lost_patch.clone())
                .event(5, create(5, 201))
                .event(10, create(10, 409))
                .event(16, create(16, 409));
            match extra {
                Some(ms) => run.event(ms, create(ms, 409)).build(),
                None => run.build(),
            }
        };
        let once = failed_first(None);
        assert!(NoAlreadyExistsErrors.check(&once).is_empty(), "{:?}", NoAlreadyExistsErrors.check(&once));
        assert_eq!(NoAlreadyExistsErrors.check(&failed_first(Some(22))).len(), 1, "and no more");
        let no_failure =
            with_pod().event(5, create(5, 201)).event(10, create(10, 409)).event(16, create(16, 409)).build();
        assert_eq!(NoAlreadyExistsErrors.check(&no_failure).len(), 1, "without the failure, judged");
        let long_before = with_pod()
            .event(4, lost_patch.clone())
            .event(5, create(5, 201))
            .event(3_000, create(3_000, 409))
            .event(3_006, create(3_006, 409))
            .build();
        assert_eq!(NoAlreadyExistsErrors.check(&long_before).len(), 1, "a failure seconds before is spent");
    }

    #[test]
    fn a_failure_after_the_409_excuses_the_create_its_requeue_makes() {
        // Steady-state seed 27,500,319: a 409, then a patch of the runner answered 500 after its commit;
        // the failure's requeue met AlreadyExists again 4.9 s after the 409.
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let lost_patch = AuditEntry {
            code: 500,
            committed_then_failed: true,
            ..request(1_500, "controller", ApiVerb::Patch, "ephemeralrunners", "r", 500)
        };
        let failed_between =
            with_pod().event(5, create(5, 201)).event(10, create(10, 409)).event(1_500, lost_patch.clone());
        let run = failed_between.event(4_868, create(4_868, 409)).build();
        assert!(NoAlreadyExistsErrors.check(&run).is_empty(), "{:?}", NoAlreadyExistsErrors.check(&run));
        let without =
            with_pod().event(5, create(5, 201)).event(10, create(10, 409)).event(4_868, create(4_868, 409));
        assert_eq!(NoAlreadyExistsErrors.check(&without.build()).len(), 1, "without the failure, judged");
        let other_runner = AuditEntry { name: "other".into(), ..lost_patch };
        let elsewhere = with_pod()
            .event(5, create(5, 201))
            .event(10, create(10, 409))
            .event(1_500, other_runner)
            .event(4_868, create(4_868, 409))
            .build();
        assert_eq!(NoAlreadyExistsErrors.check(&elsewhere).len(), 1, "another runner's failure");
    }

    #[test]
    fn a_failed_remove_runner_of_its_registration_excuses_one_fast_retry() {
        // Watch-lag seed 2,000,210 with `bug-secrets-cached`: AgentExists, then RemoveRunner answered
        // 400 JobStillRunning, a reconcile error whose requeue followed the 409's reconcile by 13 ms.
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let registered = |name: &str, id| {
            crate::oracles::fixtures::github(
                1,
                EventKind::RunnerRegistered { runner_id: id, name: name.into(), scale_set_id: Some(1) },
            )
        };
        let removal = |status| GitHubCall {
            method: "DELETE".into(),
            path: "/org/_apis/distributedtask/pools/0/agents/7".into(),
            operation: "remove-runner",
            received_ms: 40,
            served: Some(status),
            status: Some(status),
        };
        let run = |owner: &str, status| {
            with_pod()
                .event(1, registered(owner, 7))
                .event(5, create(5, 201))
                .event(41, removal(status))
                .event(42, create(42, 409))
                .event(55, create(55, 409))
                .build()
        };
        let excused = run("r", 400);
        assert!(
            NoAlreadyExistsErrors.check(&excused).is_empty(),
            "{:?}",
            NoAlreadyExistsErrors.check(&excused)
        );
        assert_eq!(NoAlreadyExistsErrors.check(&run("other", 400)).len(), 1, "another runner's registration");
        assert_eq!(NoAlreadyExistsErrors.check(&run("r", 204)).len(), 1, "a removal that succeeded");
    }

    #[test]
    fn an_event_delivered_while_the_refused_create_was_in_flight_excuses_the_next_create() {
        // Steady-state seed 2,000,193 with `bug-secrets-cached`: the runner's update reached the
        // controller in the millisecond its create was served; the reconcile it asked for made the
        // next create 2 ms later.
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let update = WatchSent {
            id: 3,
            actor: Some("controller".into()),
            resource: "ephemeralrunners".into(),
            item: WatchItem::Change { kind: "MODIFIED", key: format!("{NS}/r"), rv: "9".into() },
        };
        let refused = AuditEntry { served_ms: 9, ..create(10, 409) };
        let run = |delivered_at| {
            with_pod()
                .event(delivered_at, update.clone())
                .event(10, refused.clone())
                .event(12, create(12, 409))
                .build()
        };
        assert!(NoAlreadyExistsErrors.check(&run(10)).is_empty(), "delivered while the create was in flight");
        assert!(NoAlreadyExistsErrors.check(&run(9)).is_empty(), "delivered as the create reached the store");
        assert_eq!(
            NoAlreadyExistsErrors.check(&run(8)).len(),
            1,
            "delivered before the create reached the store"
        );
    }

    #[test]
    fn more_duplicate_creates_than_the_bound_per_pod_is_a_violation() {
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let mut few = with_pod().event(2, create(2, 201));
        for ms in 3..3 + DUPLICATE_CREATES_PER_POD as u64 {
            few = few.event(ms, create(ms, 409));
        }
        assert!(BoundedPodCreates.check(&few.build()).is_empty());
        let mut many = with_pod().event(2, create(2, 201));
        for ms in 3..4 + DUPLICATE_CREATES_PER_POD as u64 {
            many = many.event(ms, create(ms, 409));
        }
        assert_eq!(BoundedPodCreates.check(&many.build()).len(), 1);
    }

    #[test]
    fn requeued_creates_meeting_a_pod_the_controller_has_not_seen_for_over_5s_are_not_counted() {
        // Network-partition seed 35: the pod watch met 410 after a partition and the informer waited
        // out its 30 s backoff before relisting; each 5 s requeue met the unseen pod again.
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let requeues = |run: SyntheticRun| {
            [10, 5_010, 10_010, 15_010, 20_010]
                .into_iter()
                .fold(run, |run, ms| run.event(ms, create(ms, 409)))
        };
        let unseen = requeues(with_pod()).build();
        assert!(BoundedPodCreates.check(&unseen).is_empty(), "only the 409 at 10 ms counts");
        let handed = ReadEntry {
            ms: 3,
            actor: "controller".into(),
            resource: "pods".into(),
            key: format!("{NS}/r"),
            rv: 1_000,
            via: arc_sim::apiserver::reads::ReadVia::Watch,
        };
        let seen = requeues(with_pod().event(3, handed)).build();
        assert_eq!(BoundedPodCreates.check(&seen).len(), 1, "a cache that held the pod has no excuse");
    }

    #[test]
    fn a_fast_retry_after_meeting_a_pod_unseen_for_over_5s_is_not_a_hot_loop() {
        // Network-partition seed 67: the pod watch met 410 after a partition; the runner watch resumed
        // and its two events woke two reconciles 9 ms apart, both meeting the pod created 140 s before.
        let create = |ms, code| request(ms, "controller", ApiVerb::Create, "pods", "r", code);
        let unseen = with_pod().event(10_000, create(10_000, 409)).event(10_009, create(10_009, 409)).build();
        assert!(
            NoAlreadyExistsErrors.check(&unseen).is_empty(),
            "{:?}",
            NoAlreadyExistsErrors.check(&unseen)
        );
        let lagging = with_pod().event(3_000, create(3_000, 409)).event(3_009, create(3_009, 409)).build();
        assert_eq!(NoAlreadyExistsErrors.check(&lagging).len(), 1, "within the requeue it is still judged");
    }
}
