//! Plans generated from a reference run's points: one perturbation each (an extra job and a rollout
//! take two steps), the seven kinds taken in turn, each kind's points spread evenly over the run,
//! so a budget of N runs reaches N/7 points of each kind from the first to the last. A stale view
//! holds an ADDED or DELETED event (a creation or deletion the controller does not see yet: objects
//! it just created itself, mostly); an unobserved state coalesces a MODIFIED event, the resources
//! taking turns; an intermediate state follows a write. On the GitHub side, a delayed assignment
//! holds the last assignment before a controller's delete of a live runner until that delete (a job
//! reaching the runner the controller is taking away, the window of ARC's assign-during-delete
//! race), or a canceled job's assignment past its cancel (its runner left idle for a scale-down); a
//! held request delays one long poll, RemoveRunner or runner listing, the operations taking turns.
//! The sixth kind is a two-step plan: an extra job arrives shortly before a controller's delete of
//! a live runner in the reference run, and its assignment is held until the controller deletes a
//! runner that may take it (a push as the runner set scales an idle runner down: the
//! assign-during-delete window where the workload had no job left to send). The seventh is a
//! rollout: a runner-spec change just after the controller creates an EphemeralRunner (before the
//! runner's id is written back), with the next RemoveRunner held, so the set removes runners it
//! read as unregistered while one registers and may take a job.

use arc_sim::perturb::Perturbation;
use arc_world::Disruption;

use super::github_points::{AssignmentPoint, CancelPoint, RequestPoint, RunnerDeletePoint};
use super::points::{CONTROLLER, ReadPoint, WritePoint};
use arc_scenarios::scenarios::refresh::runner_refresh;

/// How long a stale view holds the controller's events (about a few reconciles of its requeues).
pub const HOLD_MS: u64 = 3_000;
/// How long an unobserved state waits for the object's next event.
pub const COALESCE_WINDOW_MS: u64 = 2_000;
/// How long a delayed assignment is held past the delete it waits for (in case it comes later than
/// in the reference run).
pub const ASSIGNMENT_SLACK_MS: u64 = 5_000;
/// The longest wait from an assignment to the delete it is held for: a delete later than this after
/// the last assignment has no plan (GitHub does keep a job queued for minutes, not for hours).
pub const MAX_ASSIGNMENT_HOLD_MS: u64 = 300_000;
/// How long a held request is held (the slow GetMessage and RemoveRunner of the race worlds are
/// 1–6 s).
pub const REQUEST_HOLD_MS: u64 = 5_000;

/// How long before a controller's delete of a live runner in the reference run an extra job arrives
/// (within the long poll whose answer led to the delete, mostly).
pub const EXTRA_JOB_LEAD_MS: u64 = 1_000;
/// How long an extra job runs (within the standard workload's 30–180 s).
pub const EXTRA_JOB_MS: u64 = 60_000;

/// How long after a controller's create of an EphemeralRunner a rollout comes: before the runner's
/// id is written back (its JIT config takes 40–600 ms at the fake GitHub, before the commit).
pub const ROLLOUT_LAG_MS: u64 = 10;

/// The kinds of plan, in the order they take turns.
pub const KINDS: usize = 7;

/// A reference run's points of every kind.
#[derive(Debug, Clone, Default)]
pub struct Points {
    /// Watch events delivered to the controller.
    pub reads: Vec<ReadPoint>,
    /// The controller's successful writes.
    pub writes: Vec<WritePoint>,
    /// The service's assignments.
    pub assignments: Vec<AssignmentPoint>,
    /// The controller's deletes of live runners' objects.
    pub deletes: Vec<RunnerDeletePoint>,
    /// The workload's cancels of assigned jobs.
    pub cancels: Vec<CancelPoint>,
    /// Requests of the operations a held request delays.
    pub requests: Vec<RequestPoint>,
}

/// One generated plan and the point it perturbs.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Its perturbations: one, or an extra job and the hold of its assignment.
    pub perturbations: Vec<Perturbation>,
    /// The read point it perturbs (stale view, unobserved state).
    pub read: Option<ReadPoint>,
    /// The write point it perturbs (intermediate state).
    pub write: Option<WritePoint>,
    /// The assignment it holds (delayed assignment).
    pub assignment: Option<AssignmentPoint>,
    /// The request it holds (held request).
    pub request: Option<RequestPoint>,
    /// The delete of a live runner an extra job arrives before (extra job).
    pub delete: Option<RunnerDeletePoint>,
    /// The world's disruptions: the runner-spec change of a rollout.
    pub disruptions: Vec<Disruption>,
    /// The runner create a rollout follows (rollout).
    pub create: Option<WritePoint>,
}

impl Plan {
    fn of(perturbations: Vec<Perturbation>) -> Plan {
        Plan {
            perturbations,
            read: None,
            write: None,
            assignment: None,
            request: None,
            delete: None,
            disruptions: Vec::new(),
            create: None,
        }
    }
}

/// Up to `budget` plans over `points`.
pub fn plans(points: &Points, budget: usize) -> Vec<Plan> {
    let modified: Vec<&ReadPoint> = points.reads.iter().filter(|r| r.nth_modified.is_some()).collect();
    let appeared_or_gone: Vec<&ReadPoint> =
        points.reads.iter().filter(|r| r.nth_modified.is_none()).collect();
    let all_writes: Vec<&WritePoint> = points.writes.iter().collect();
    let holds = holds(points);
    let held: Vec<&(AssignmentPoint, u64)> = holds.iter().collect();
    let requests: Vec<&RequestPoint> = points.requests.iter().collect();
    let deletes: Vec<&RunnerDeletePoint> = points.deletes.iter().collect();
    let runner_creates = runner_creates(points);
    let sets = runner_sets(points);
    let mut kinds: [Box<dyn Iterator<Item = Plan>>; KINDS] = [
        Box::new(spread(&appeared_or_gone, share(budget, 0)).into_iter().map(stale_view)),
        Box::new(spread(&all_writes, share(budget, 1)).into_iter().map(intermediate_state)),
        Box::new(
            taking_turns(&modified, share(budget, 2), |r| r.resource.as_str())
                .into_iter()
                .map(unobserved_state),
        ),
        Box::new(spread(&held, share(budget, 3)).into_iter().map(delayed_assignment)),
        Box::new(taking_turns(&requests, share(budget, 4), |r| r.operation).into_iter().map(held_request)),
        Box::new(spread(&deletes, share(budget, 5)).into_iter().map(|d| extra_job(d, &points.assignments))),
        Box::new(
            spread(&runner_creates, share(budget, 6))
                .into_iter()
                .filter_map(|c| rollout(c, &sets, &points.requests)),
        ),
    ];
    let mut out = Vec::new();
    loop {
        let before = out.len();
        for kind in &mut kinds {
            out.extend(kind.next());
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Kind `k`'s share of `budget` (the first kinds take the remainder).
fn share(budget: usize, k: usize) -> usize {
    budget / KINDS + usize::from(k < budget % KINDS)
}

/// `count` items of `items` spread evenly from the first (all of them when there are fewer).
fn spread<'a, T>(items: &[&'a T], count: usize) -> Vec<&'a T> {
    if count >= items.len() {
        return items.to_vec();
    }
    (0..count).map(|i| items[i * items.len() / count]).collect()
}

/// `count` of `items`: the groups (by `key`) take turns, each one's items spread evenly.
fn taking_turns<'a, T>(items: &[&'a T], count: usize, key: impl Fn(&T) -> &str) -> Vec<&'a T> {
    let mut groups: Vec<&str> = items.iter().map(|i| key(i)).collect();
    groups.sort_unstable();
    groups.dedup();
    let per_group: Vec<Vec<&T>> = groups
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let own: Vec<&T> = items.iter().copied().filter(|item| key(item) == *name).collect();
            let share = count / groups.len() + usize::from(i < count % groups.len());
            spread(&own, share)
        })
        .collect();
    let longest = per_group.iter().map(Vec::len).max().unwrap_or(0);
    let turns = (0..longest).flat_map(|i| per_group.iter().filter_map(move |picks| picks.get(i).copied()));
    turns.take(count).collect()
}

/// The assignments to hold and for how long, in time order, each assignment once: for each delete of
/// a live runner, the last assignment before it, held until the delete; for each cancel of an assigned
/// job, its assignment, held past the cancel (the slack added to each).
fn holds(points: &Points) -> Vec<(AssignmentPoint, u64)> {
    let assignments = &points.assignments;
    let before_deletes = points.deletes.iter().filter_map(|delete| {
        let last = assignments.iter().rev().find(|a| a.at_ms <= delete.at_ms)?;
        Some((last, delete.at_ms))
    });
    let before_cancels = points.cancels.iter().filter_map(|cancel| {
        let its =
            assignments.iter().find(|a| a.request_id == cancel.request_id && a.at_ms <= cancel.at_ms)?;
        Some((its, cancel.at_ms))
    });
    let mut wanted: Vec<(&AssignmentPoint, u64)> = before_deletes.chain(before_cancels).collect();
    wanted.sort_by_key(|(a, until_ms)| (a.at_ms, *until_ms));
    let mut out: Vec<(AssignmentPoint, u64)> = Vec::new();
    for (assignment, until_ms) in wanted {
        let wait = until_ms - assignment.at_ms;
        if wait > MAX_ASSIGNMENT_HOLD_MS || out.iter().any(|(a, _)| a.nth == assignment.nth) {
            continue;
        }
        out.push((assignment.clone(), wait + ASSIGNMENT_SLACK_MS));
    }
    out
}

fn stale_view(read: &ReadPoint) -> Plan {
    let perturbation = Perturbation::StaleView {
        actor: CONTROLLER.into(),
        resource: read.resource.clone(),
        after_events: read.nth,
        hold_ms: HOLD_MS,
    };
    Plan { read: Some(read.clone()), ..Plan::of(vec![perturbation]) }
}

fn intermediate_state(write: &WritePoint) -> Plan {
    let perturbation = Perturbation::IntermediateState { actor: CONTROLLER.into(), after_writes: write.nth };
    Plan { write: Some(write.clone()), ..Plan::of(vec![perturbation]) }
}

fn unobserved_state(read: &ReadPoint) -> Plan {
    let perturbation = Perturbation::UnobservedState {
        actor: CONTROLLER.into(),
        resource: read.resource.clone(),
        nth_modified: read.nth_modified.unwrap_or(1),
        window_ms: COALESCE_WINDOW_MS,
    };
    Plan { read: Some(read.clone()), ..Plan::of(vec![perturbation]) }
}

fn delayed_assignment((assignment, max_hold_ms): &(AssignmentPoint, u64)) -> Plan {
    let perturbation = Perturbation::DelayedAssignment {
        actor: CONTROLLER.into(),
        nth_assignment: assignment.nth,
        max_hold_ms: *max_hold_ms,
    };
    Plan { assignment: Some(assignment.clone()), ..Plan::of(vec![perturbation]) }
}

fn held_request(request: &RequestPoint) -> Plan {
    let perturbation = Perturbation::HeldRequest {
        operation: request.operation.into(),
        nth: request.nth,
        hold_ms: REQUEST_HOLD_MS,
    };
    Plan { request: Some(request.clone()), ..Plan::of(vec![perturbation]) }
}

/// An extra job [`EXTRA_JOB_LEAD_MS`] before `delete`, and the next assignment after its arrival (the
/// reference's `assignments` up to then, plus one: its own, when no other job waits) held until the
/// controller deletes a runner that may take it, [`ASSIGNMENT_SLACK_MS`] past `delete` at most.
fn extra_job(delete: &RunnerDeletePoint, assignments: &[AssignmentPoint]) -> Plan {
    let at_ms = delete.at_ms.saturating_sub(EXTRA_JOB_LEAD_MS);
    let hold = Perturbation::DelayedAssignment {
        actor: CONTROLLER.into(),
        nth_assignment: nth_after(assignments.iter().map(|a| a.at_ms), at_ms),
        max_hold_ms: EXTRA_JOB_LEAD_MS + ASSIGNMENT_SLACK_MS,
    };
    let arrival = Perturbation::ExtraJob { at_ms, duration_ms: EXTRA_JOB_MS };
    Plan { perturbations: vec![arrival, hold], delete: Some(delete.clone()), ..Plan::of(Vec::new()) }
}

/// The 1-based number of the first point after `at_ms` among points at `times` (those at or before
/// it, plus one).
fn nth_after(times: impl Iterator<Item = u64>, at_ms: u64) -> u32 {
    u32::try_from(times.filter(|t| *t <= at_ms).count() + 1).unwrap_or(u32::MAX)
}

/// A rollout [`ROLLOUT_LAG_MS`] after `create`: every runner set of its namespace refreshed (revision
/// 1: a fault-free reference has no refresh of its own), and the next RemoveRunner after it held for
/// [`REQUEST_HOLD_MS`]. `None` when no runner set of that namespace was seen.
fn rollout(create: &WritePoint, sets: &[(&str, &str)], requests: &[RequestPoint]) -> Option<Plan> {
    let at_ms = create.at_ms + ROLLOUT_LAG_MS;
    let namespace = create.object.split('/').next().unwrap_or_default();
    let disruptions: Vec<Disruption> = sets
        .iter()
        .filter(|(ns, _)| *ns == namespace)
        .map(|(ns, name)| runner_refresh(at_ms, ns, name, 1))
        .collect();
    if disruptions.is_empty() {
        return None;
    }
    let removals = requests.iter().filter(|r| r.operation == "remove-runner");
    let hold = Perturbation::HeldRequest {
        operation: "remove-runner".into(),
        nth: nth_after(removals.map(|r| r.at_ms), at_ms),
        hold_ms: REQUEST_HOLD_MS,
    };
    Some(Plan {
        perturbations: vec![hold],
        disruptions,
        create: Some(create.clone()),
        ..Plan::of(Vec::new())
    })
}

/// The controller's creates of EphemeralRunners (the points a rollout follows).
pub fn runner_creates(points: &Points) -> Vec<&WritePoint> {
    points.writes.iter().filter(|w| w.verb == "create" && w.resource == "ephemeralrunners").collect()
}

/// The runner sets (`namespace`, `name`) whose events reached the controller, in name order.
fn runner_sets(points: &Points) -> Vec<(&str, &str)> {
    let mut sets: Vec<(&str, &str)> = points
        .reads
        .iter()
        .filter(|r| r.resource == "ephemeralrunnersets")
        .filter_map(|r| r.object.split_once('/'))
        .collect();
    sets.sort_unstable();
    sets.dedup();
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(nth: u32, modified: Option<u32>) -> ReadPoint {
        let kind = if modified.is_some() { "MODIFIED" } else { "ADDED" };
        ReadPoint { resource: "pods".into(), object: "ns/p".into(), kind, nth, nth_modified: modified }
    }

    fn write(nth: u32, resource: &str, object: &str, at_ms: u64) -> WritePoint {
        WritePoint { nth, verb: "create", resource: resource.into(), object: object.into(), at_ms }
    }

    fn kubernetes(reads: Vec<ReadPoint>, writes: Vec<WritePoint>) -> Points {
        Points { reads, writes, ..Points::default() }
    }

    #[test]
    fn the_kinds_take_turns_and_spread_over_the_run() {
        let reads: Vec<ReadPoint> = (1..=30).map(|n| read(n, (n % 2 == 0).then_some(n / 2))).collect();
        let mut secrets = read(31, Some(1));
        secrets.resource = "secrets".into();
        let with_secrets: Vec<ReadPoint> = reads.iter().cloned().chain([secrets]).collect();
        let coalesced: Vec<String> = plans(&kubernetes(with_secrets, vec![]), 3 * KINDS)
            .into_iter()
            .filter_map(|p| {
                p.read.filter(|_| matches!(p.perturbations[0], Perturbation::UnobservedState { .. }))
            })
            .map(|r| format!("{}#{}", r.resource, r.nth))
            .collect();
        assert_eq!(coalesced, ["pods#2", "secrets#31", "pods#16"], "resources take turns");
        let writes: Vec<WritePoint> = (1..=9).map(|nth| write(nth, "pods", "ns/p", u64::from(nth))).collect();
        let out = plans(&kubernetes(reads.clone(), writes), 10);
        assert_eq!(out.len(), 6, "no GitHub points: no GitHub-side plans");
        assert!(matches!(out[0].perturbations[0], Perturbation::StaleView { after_events: 1, .. }));
        assert!(matches!(out[1].perturbations[0], Perturbation::IntermediateState { after_writes: 1, .. }));
        assert!(matches!(out[2].perturbations[0], Perturbation::UnobservedState { nth_modified: 1, .. }));
        assert!(matches!(out[3].perturbations[0], Perturbation::StaleView { after_events: 15, .. }));
        assert!(out.iter().all(|p| !matches!(&p.perturbations[0], Perturbation::StaleView { after_events, .. } if after_events % 2 == 0)), "stale views hold ADDED events");
        assert_eq!(plans(&kubernetes(reads, vec![]), 5).len(), 2, "no writes: no intermediate-state plan");
    }

    #[test]
    fn an_assignment_is_held_until_the_next_live_runner_delete_and_requests_take_turns() {
        let assignment = |nth, at_ms| AssignmentPoint { nth, at_ms, request_id: nth.into(), runner_id: 1 };
        let delete =
            |at_ms| RunnerDeletePoint { at_ms, resource: "ephemeralrunners".into(), object: "ns/r".into() };
        let request = |operation, nth| RequestPoint { operation, nth, at_ms: u64::from(nth) };
        let points = Points {
            assignments: vec![assignment(1, 1_000), assignment(2, 5_000), assignment(3, 9_000)],
            deletes: vec![
                delete(500),
                delete(6_000),
                delete(7_000),
                delete(9_000 + MAX_ASSIGNMENT_HOLD_MS + 1),
            ],
            requests: vec![request("get-message", 1), request("get-message", 2), request("remove-runner", 1)],
            ..Points::default()
        };
        let out = plans(&points, 2 * KINDS);
        let kinds: Vec<String> =
            out.iter().map(|p| serde_json::to_string(&p.perturbations).unwrap()).collect();
        assert_eq!(
            kinds,
            [
                r#"[{"kind":"delayed-assignment","actor":"controller","nth_assignment":2,"max_hold_ms":6000}]"#,
                r#"[{"kind":"held-request","operation":"get-message","nth":1,"hold_ms":5000}]"#,
                r#"[{"kind":"extra-job","at_ms":0,"duration_ms":60000},{"kind":"delayed-assignment","actor":"controller","nth_assignment":1,"max_hold_ms":6000}]"#,
                r#"[{"kind":"held-request","operation":"remove-runner","nth":1,"hold_ms":5000}]"#,
                r#"[{"kind":"extra-job","at_ms":6000,"duration_ms":60000},{"kind":"delayed-assignment","actor":"controller","nth_assignment":3,"max_hold_ms":6000}]"#,
            ],
            "one hold per assignment (the delete before any assignment and the one too late have none); operations take turns; an extra job before a delete has the next assignment held"
        );
        assert_eq!(out[0].assignment.as_ref().map(|a| a.nth), Some(2));
        assert_eq!(out[1].request.as_ref().map(|r| r.operation), Some("get-message"));
        assert_eq!(out[4].delete.as_ref().map(|d| d.at_ms), Some(7_000));
    }

    #[test]
    fn a_rollout_follows_a_runner_create_in_its_namespace_and_holds_the_next_remove_runner() {
        let set = |nth, name: &str| ReadPoint {
            resource: "ephemeralrunnersets".into(),
            object: format!("arc-runners/{name}"),
            kind: "ADDED",
            nth,
            nth_modified: None,
        };
        let request = |operation, nth, at_ms| RequestPoint { operation, nth, at_ms };
        let points = Points {
            reads: vec![set(1, "set-b"), set(2, "set-a"), set(3, "set-b")],
            writes: vec![
                write(1, "ephemeralrunners", "arc-runners/", 6_840),
                write(2, "pods", "arc-runners/", 7_000),
                write(3, "ephemeralrunners", "elsewhere/", 9_000),
            ],
            requests: vec![
                request("remove-runner", 1, 100),
                request("get-message", 1, 6_000),
                request("remove-runner", 2, 6_850),
                request("remove-runner", 3, 6_851),
            ],
            ..Points::default()
        };
        let rollouts: Vec<Plan> =
            plans(&points, 2 * KINDS).into_iter().filter(|p| p.create.is_some()).collect();
        assert_eq!(rollouts.len(), 1, "no runner set seen in the other namespace: no rollout there");
        let refresh = |name: &str| runner_refresh(6_850, "arc-runners", name, 1);
        assert_eq!(
            rollouts[0].disruptions,
            [refresh("set-a"), refresh("set-b")],
            "every set of the namespace, once"
        );
        assert_eq!(
            rollouts[0].perturbations,
            [Perturbation::HeldRequest {
                operation: "remove-runner".into(),
                nth: 3,
                hold_ms: REQUEST_HOLD_MS
            }],
            "the first RemoveRunner after the change is held"
        );
        assert_eq!(rollouts[0].create.as_ref().map(|c| c.nth), Some(1));
    }
}
