//! A reference run's GitHub-side points: the service's assignments (each job given to a runner,
//! numbered in order: what a delayed assignment holds), the controller's deletes of a live runner's
//! objects (what a held job is released at), the workload's cancels of assigned jobs (what a held job
//! may be canceled at instead), and the controller's and listener's requests to the
//! service of the operations a held request delays (numbered per operation in arrival order). The
//! fake GitHub counts assignments and requests the same way.

use std::collections::BTreeMap;

use arc_sim::github::{EndReason, EventKind, GitHubCall, RemovalReason};
use arc_world::RunRecord;

use super::points::CONTROLLER;

/// The operations a held request delays: the listener's long poll, and the removals and runner
/// listings the controllers' scale-down and pod recreation rest on.
pub const HELD_OPERATIONS: [&str; 4] = ["get-message", "remove-runner", "list-runners", "delete-runner"];

/// One assignment of the service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignmentPoint {
    /// Its number among the service's assignments (from 1).
    pub nth: u32,
    /// Sim ms it was made.
    pub at_ms: u64,
    /// The job.
    pub request_id: i64,
    /// The runner.
    pub runner_id: i64,
}

/// One controller delete of an object named after a runner the service still had (not one that
/// deregistered after its job, was lost or was replaced).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerDeletePoint {
    /// Sim ms the delete was served.
    pub at_ms: u64,
    /// Resource plural.
    pub resource: String,
    /// `namespace/name`.
    pub object: String,
}

/// A job the workload canceled after the service had assigned it (holding that assignment past the
/// cancel leaves the runner made for the job idle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelPoint {
    /// Sim ms the job ended canceled.
    pub at_ms: u64,
    /// The job.
    pub request_id: i64,
}

/// One request to the service of an operation in [`HELD_OPERATIONS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPoint {
    /// The operation.
    pub operation: &'static str,
    /// Its number among the operation's requests (from 1).
    pub nth: u32,
    /// Sim ms it arrived.
    pub at_ms: u64,
}

/// The service's assignments in `record` (which must keep GitHub events).
pub fn assignment_points(record: &RunRecord) -> Vec<AssignmentPoint> {
    let assigned = record.github_events().filter_map(|e| match e.kind {
        EventKind::JobAssigned { request_id, runner_id } => Some((e.at_ms, request_id, runner_id)),
        _ => None,
    });
    assigned
        .zip(1..)
        .map(|((at_ms, request_id, runner_id), nth)| AssignmentPoint { nth, at_ms, request_id, runner_id })
        .collect()
}

/// The controller's deletes of a live runner's objects in `record` (audit entries and GitHub events).
pub fn runner_delete_points(record: &RunRecord) -> Vec<RunnerDeletePoint> {
    let names = runner_lives(record);
    let deletes = record.audit().filter(|a| {
        a.actor == CONTROLLER
            && a.verb == arc_sim::faults::ApiVerb::Delete
            && a.code < 400
            && !a.status_subresource
    });
    deletes
        .filter(|a| names.get(a.name.as_str()).is_some_and(|lives| live_at(lives, a.served_ms)))
        .map(|a| RunnerDeletePoint {
            at_ms: a.served_ms,
            resource: a.resource.clone(),
            object: format!("{}/{}", a.namespace, a.name),
        })
        .collect()
}

/// The cancels in `record` of jobs the service had assigned.
pub fn cancel_points(record: &RunRecord) -> Vec<CancelPoint> {
    let mut assigned = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for e in record.github_events() {
        match e.kind {
            EventKind::JobAssigned { request_id, .. } => {
                assigned.insert(request_id);
            }
            EventKind::JobCompleted { request_id, reason: EndReason::Canceled, .. }
                if assigned.contains(&request_id) =>
            {
                out.push(CancelPoint { at_ms: e.at_ms, request_id });
            }
            _ => {}
        }
    }
    out
}

/// The requests in `record` of the operations in [`HELD_OPERATIONS`], numbered per operation.
pub fn request_points(record: &RunRecord) -> Vec<RequestPoint> {
    let mut calls: Vec<(u64, &'static str)> = record
        .events_of::<GitHubCall>()
        .filter_map(|c| HELD_OPERATIONS.iter().find(|op| **op == c.operation).map(|op| (c.received_ms, *op)))
        .collect();
    calls.sort_by_key(|(at_ms, _)| *at_ms);
    let mut counts = BTreeMap::<&str, u32>::new();
    calls
        .into_iter()
        .map(|(at_ms, operation)| {
            let nth = counts.entry(operation).or_insert(0);
            *nth += 1;
            RequestPoint { operation, nth: *nth, at_ms }
        })
        .collect()
}

/// Per runner name, the spans (registered, ended) of its registrations; a registration that ended by
/// RemoveRunner or has not ended runs to the end of time.
fn runner_lives(record: &RunRecord) -> BTreeMap<&str, Vec<(u64, u64)>> {
    let mut by_id = BTreeMap::<i64, (&str, u64, u64)>::new();
    for e in record.github_events() {
        match &e.kind {
            EventKind::RunnerRegistered { runner_id, name, .. } => {
                by_id.insert(*runner_id, (name.as_str(), e.at_ms, u64::MAX));
            }
            EventKind::RunnerRemoved { runner_id, reason } if *reason != RemovalReason::Removed => {
                if let Some(life) = by_id.get_mut(runner_id) {
                    life.2 = e.at_ms;
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeMap::<&str, Vec<(u64, u64)>>::new();
    for (name, from, to) in by_id.into_values() {
        out.entry(name).or_default().push((from, to));
    }
    out
}

fn live_at(lives: &[(u64, u64)], at_ms: u64) -> bool {
    lives.iter().any(|(from, to)| *from <= at_ms && at_ms < *to)
}
