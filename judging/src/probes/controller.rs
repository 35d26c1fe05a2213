//! Windows in the controller's own life, as the world sees it from outside: a crash that cut work
//! short, an update that carried nothing the runner-set reconciler reads, a Running write that lost an
//! optimistic-lock race.

use std::collections::BTreeMap;

use arc_sim::apiserver::{AuditEntry, EventType, WatchItem, WatchSent};
use arc_sim::faults::ApiVerb;
use arc_sim::record::WorldEvent;
use arc_world::RunRecord;
use serde_json::Value;

use super::runner_states::RunnerStates;

/// How close before a crash the controller's last request must be for the crash to count as cutting a
/// reconcile short: a reconcile's requests follow each other within a few simulated milliseconds, and
/// the API latency the scenarios inject stays under a second.
pub const MID_RECONCILE_MS: u64 = 1_000;

/// Controller restarts that came while the controller was talking to the API server: it had sent a
/// request (other than a watch) answered within [`MID_RECONCILE_MS`] before the crash. The world's
/// own count uses the controller's worker gauge; this one needs nothing from the controller.
pub fn restart_mid_reconcile(run: &RunRecord) -> u32 {
    let requests: Vec<u64> = run
        .events_of::<AuditEntry>()
        .filter(|a| crate::view::is_controller(&a.actor) && a.verb != ApiVerb::Watch)
        .map(|a| a.ms)
        .collect();
    let restarts = run
        .events
        .iter()
        .filter(|e| matches!(e.get::<WorldEvent>(), Some(WorldEvent::ControllerRestart { .. })));
    restarts.filter(|e| requests.iter().any(|ms| *ms <= e.at_ms && e.at_ms - ms <= MID_RECONCILE_MS)).count()
        as u32
}

/// The fields of an EphemeralRunner that ARC's runner-set reconciler reads (ARC-MODEL §5.1, ERS ← ER):
/// its metadata's identity (uid), labels, annotations, finalizers, owners and deletion; its spec; its phase,
/// runner id and job id. The fields most updates change come first, and the spec last, so two views
/// that differ are told apart before their specs are compared.
fn runner_set_view(er: &Value) -> [Option<&Value>; 10] {
    let meta = |field| er.get("metadata").and_then(|m| m.get(field));
    let status = |field| er.get("status").and_then(|s| s.get(field));
    [
        status("phase"),
        status("runnerId"),
        status("jobId"),
        meta("deletionTimestamp"),
        meta("finalizers"),
        meta("uid"),
        meta("labels"),
        meta("annotations"),
        meta("ownerReferences"),
        er.get("spec"),
    ]
}

/// EphemeralRunner updates delivered to the controller that changed nothing the runner-set reconciler
/// reads (§5.1's projection): the updates an update predicate may drop.
pub fn unprojected_runner_update(run: &RunRecord) -> u32 {
    let states = RunnerStates::of(run);
    let delivered = run.events_of::<WatchSent>().filter(|w| {
        w.resource == "ephemeralrunners" && w.actor.as_deref().is_some_and(crate::view::is_controller)
    });
    let mut hits = 0;
    // A change delivered to several of the controller's watches is compared once.
    let mut same_at_rv: BTreeMap<u64, bool> = BTreeMap::new();
    for sent in delivered {
        let WatchItem::Change { kind: "MODIFIED", key, rv } = &sent.item else { continue };
        let Some(now) = rv.parse().ok().and_then(|rv| states.version(key, rv)) else { continue };
        let change = &now.change;
        let Some(old) = change.old.as_deref() else { continue };
        let same = *same_at_rv.entry(change.rv).or_insert_with(|| {
            // Versions whose shared fields differ have different views (each field is one of the
            // view's, read): only the rest are compared whole.
            let told_apart = states.before(now).is_some_and(|before| !now.reads_alike(before));
            !told_apart && runner_set_view(old) == runner_set_view(&change.object)
        });
        hits += u32::from(change.kind == EventType::Modified && same);
    }
    hits
}

/// The listener's optimistic-lock Running writes answered Conflict.
pub fn listener_patch_conflict(run: &RunRecord) -> u32 {
    run.audit()
        .filter(|a| {
            a.resource == "ephemeralrunners"
                && a.verb == ApiVerb::Patch
                && a.code == 409
                && a.actor == "listener"
        })
        .count() as u32
}
