//! A reference run's read points (each watch event delivered to the controller, by resource and
//! object, numbered per resource in delivery order, MODIFIED events numbered apart) and write points
//! (each successful create, update, patch or delete the controller sent, numbered in order). The
//! perturbations count the same way, at the time an event is queued and a write answered, so a point's
//! number names the same event or write in a perturbed run until the perturbation acts.

use arc_sim::apiserver::{WatchItem, WatchSent};
use arc_world::RunRecord;

/// The actor the controller's requests carry.
pub const CONTROLLER: &str = "controller";

/// One watch event delivered to the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadPoint {
    /// Resource plural.
    pub resource: String,
    /// `namespace/name`.
    pub object: String,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    /// Its number among the resource's events delivered to the controller (from 1).
    pub nth: u32,
    /// Its number among the resource's MODIFIED events (from 1), when it is one.
    pub nth_modified: Option<u32>,
}

/// One successful write of the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritePoint {
    /// Its number among the controller's successful writes (from 1).
    pub nth: u32,
    /// `create`, `update`, `patch`, `delete`.
    pub verb: &'static str,
    /// Resource plural.
    pub resource: String,
    /// `namespace/name`.
    pub object: String,
    /// Sim ms it was served.
    pub at_ms: u64,
}

/// The controller's read points in `record` (which must keep [`WatchSent`] events).
pub fn read_points(record: &RunRecord) -> Vec<ReadPoint> {
    let mut counts = std::collections::BTreeMap::<&str, (u32, u32)>::new();
    let mut out = Vec::new();
    for sent in record.events_of::<WatchSent>() {
        let WatchItem::Change { kind, key, .. } = &sent.item else { continue };
        if sent.actor.as_deref() != Some(CONTROLLER) {
            continue;
        }
        let (events, modified) = counts.entry(sent.resource.as_str()).or_insert((0, 0));
        *events += 1;
        let nth_modified = (*kind == "MODIFIED").then(|| {
            *modified += 1;
            *modified
        });
        let (resource, object) = (sent.resource.clone(), key.clone());
        out.push(ReadPoint { resource, object, kind, nth: *events, nth_modified });
    }
    out
}

/// The controller's write points in `record` (which must keep audit entries).
pub fn write_points(record: &RunRecord) -> Vec<WritePoint> {
    let writes = record.audit().filter(|a| a.actor == CONTROLLER && a.verb.is_mutating() && a.code < 400);
    writes
        .zip(1..)
        .map(|(a, nth)| WritePoint {
            nth,
            verb: a.verb.as_str(),
            resource: a.resource.clone(),
            object: format!("{}/{}", a.namespace, a.name),
            at_ms: a.served_ms,
        })
        .collect()
}
