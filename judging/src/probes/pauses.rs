//! The pause probes (issue 42, item 6): a controller process stopped while reconciles were in flight,
//! a watch of it the API server closed for falling behind while it was stopped, and a leading replica
//! stopped while another took its Lease over.

use arc_sim::apiserver::{WatchItem, WatchSent};
use arc_world::RunRecord;

use crate::pauses::{Pause, pauses};
use crate::view::{holder_actor, str_at};

/// Pauses that began while the process had reconciles in flight.
pub fn controller_paused_mid_reconcile(run: &RunRecord) -> u32 {
    pauses(run).filter(|p| p.in_flight > 0).count() as u32
}

/// Watches of a stopped process that the API server closed for falling behind while it was stopped.
pub fn watch_closed_while_paused(run: &RunRecord) -> u32 {
    let stops: Vec<Pause<'_>> = pauses(run).collect();
    if stops.is_empty() {
        return 0;
    }
    let closed: Vec<(u64, &WatchSent)> = run
        .events
        .iter()
        .filter_map(|e| e.get::<WatchSent>().map(|w| (e.at_ms, w)))
        .filter(|(_, w)| matches!(w.item, WatchItem::ClosedSlow { .. }))
        .collect();
    let during = |p: &Pause<'_>| {
        closed
            .iter()
            .filter(|(ms, w)| w.actor.as_deref() == Some(p.who) && (p.from_ms..=p.until_ms).contains(ms))
            .count()
    };
    stops.iter().map(during).sum::<usize>() as u32
}

/// Pauses of a controller replica during which another replica took its Lease over: the stopped
/// leader goes on as if it still led.
pub fn leader_resumed_after_takeover(run: &RunRecord) -> u32 {
    let stops: Vec<Pause<'_>> = pauses(run).filter(|p| p.who.starts_with("controller#")).collect();
    if stops.is_empty() {
        return 0;
    }
    let holders: Vec<(u64, &str)> = run
        .changes_of("leases")
        .filter_map(|(ms, change)| Some((ms, str_at(&change.object, "/spec/holderIdentity")?)))
        .collect();
    let taken_over = |p: &Pause<'_>| {
        holders
            .iter()
            .any(|(ms, holder)| (p.from_ms..=p.until_ms).contains(ms) && holder_actor(holder) != p.who)
    };
    stops.iter().filter(|p| taken_over(p)).count() as u32
}
