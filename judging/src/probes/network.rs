//! The network probes (issue 17), from the network's own events ([`NetEvent`]) and the API and
//! GitHub traffic around them: a cut watch resumed from its last resourceVersion, a 410 Expired
//! answered by a relist, the controller's host crashed within 1 s of its last request, a listener's
//! long poll or host cut under it and a new message session created after, and the controller's
//! requests held by a half-open partition (connections kept, segments held) until it healed.

use arc_sim::apiserver::{AuditEntry, WatchItem, WatchOpened, WatchSent};
use arc_sim::faults::ApiVerb;
use arc_sim::github::GitHubCall;
use arc_sim::net::{HOST_APISERVER, HOST_CONTROLLER, HOST_LISTENERS, NetCommand, NetEvent};
use arc_sim::record::Event;
use arc_world::RunRecord;

/// How close before a crash the controller's last request must be for the crash to cut a reconcile.
const MID_RECONCILE_MS: u64 = 1_000;
/// How soon after a 410 the watcher's relist must come.
const RELIST_WITHIN_MS: u64 = 60_000;

fn net_events(run: &RunRecord) -> impl Iterator<Item = (&Event, &NetEvent)> + '_ {
    run.events.iter().filter_map(|e| e.get::<NetEvent>().map(|n| (e, n)))
}

/// How soon after a hold is released a controller request still counts as one it held.
const RELEASED_WITHIN_MS: u64 = 100;

/// Holds of the link between the controller's host and the API server's (a half-open partition: the
/// connections stay open, their segments wait) whose release delivered a controller request that had
/// waited through it: one served within 100 ms of the release.
pub fn controller_requests_held(run: &RunRecord) -> u32 {
    let controller_link = |a: &str, b: &str| {
        let mut hosts = [a, b];
        hosts.sort_unstable();
        hosts == [HOST_APISERVER, HOST_CONTROLLER]
    };
    let releases: Vec<u64> = net_events(run)
        .filter_map(|(e, n)| match n {
            NetEvent::Applied(NetCommand::Release { a, b }) if controller_link(a, b) => Some(e.at_ms),
            _ => None,
        })
        .collect();
    if releases.is_empty() {
        return 0;
    }
    let served: Vec<u64> =
        run.events_of::<AuditEntry>().filter(|a| a.actor == "controller").map(|a| a.served_ms).collect();
    releases
        .iter()
        .filter(|at| served.iter().any(|ms| (**at..=*at + RELEASED_WITHIN_MS).contains(ms)))
        .count() as u32
}

/// Cut watches whose watcher's next watch of the resource started from a resourceVersion.
pub fn watch_resumed_from_rv(run: &RunRecord) -> u32 {
    let cuts = net_events(run).filter_map(|(e, n)| match n {
        NetEvent::WatchCut { actor, resource } => Some((e.seq, actor, resource)),
        _ => None,
    });
    let resumed = |(seq, actor, resource): (u64, &String, &String)| {
        let next = run.events.iter().filter(|e| e.seq > seq).find_map(|e| {
            e.get::<WatchOpened>()
                .filter(|w| w.actor.as_deref() == Some(actor.as_str()) && w.resource == *resource)
        });
        next.is_some_and(|w| w.from != "now" && w.from != "0")
    };
    cuts.filter(|cut| resumed(*cut)).count() as u32
}

/// 410 Expired watch answers followed, within a minute, by a list of the resource by the same actor.
pub fn relist_after_410(run: &RunRecord) -> u32 {
    let expired = run.events.iter().filter_map(|e| {
        let sent = e.get::<WatchSent>()?;
        matches!(&sent.item, WatchItem::Error { code, .. } if code == "410").then_some((e, sent))
    });
    expired.filter(|(at, sent)| relisted_after(run, at, sent)).count() as u32
}

/// Whether the client of watch stream `sent` listed its resource within a minute after `at`.
pub fn relisted_after(run: &RunRecord, at: &Event, sent: &WatchSent) -> bool {
    run.events.iter().filter(|e| e.seq > at.seq).filter_map(|e| e.get::<AuditEntry>()).any(|a| {
        a.verb == ApiVerb::List
            && Some(a.actor.as_str()) == sent.actor.as_deref()
            && a.resource == sent.resource
            && a.ms <= at.at_ms + RELIST_WITHIN_MS
    })
}

/// Crashes of the controller's host within 1 s of one of its API requests.
pub fn controller_bounced_mid_reconcile(run: &RunRecord) -> u32 {
    let requests: Vec<u64> = run
        .events_of::<AuditEntry>()
        .filter(|a| crate::view::is_controller(&a.actor) && a.verb != ApiVerb::Watch)
        .map(|a| a.ms)
        .collect();
    net_events(run)
        .filter(
            |(_, n)| matches!(n, NetEvent::Applied(NetCommand::Crash { host }) if host == HOST_CONTROLLER),
        )
        .filter(|(e, _)| requests.iter().any(|ms| *ms <= e.at_ms && e.at_ms - ms <= MID_RECONCILE_MS))
        .count() as u32
}

/// Long polls dropped and listener-host crashes after which a message session was created.
pub fn listener_session_lost(run: &RunRecord) -> u32 {
    let cuts = net_events(run).filter(|(_, n)| match n {
        NetEvent::LongPollDropped => true,
        NetEvent::Applied(NetCommand::Crash { host }) => host == HOST_LISTENERS,
        _ => false,
    });
    let session_after = |at: &Event| {
        run.events
            .iter()
            .filter(|e| e.seq > at.seq)
            .filter_map(|e| e.get::<GitHubCall>())
            .any(|c| c.operation == "create-session" && c.status.is_some_and(|s| (200..300).contains(&s)))
    };
    cuts.filter(|(e, _)| session_after(e)).count() as u32
}

#[cfg(test)]
mod tests {
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::request;

    fn command(at_ms: u64, hold: bool, run: SyntheticRun) -> SyntheticRun {
        let (a, b) = (HOST_APISERVER.to_string(), HOST_CONTROLLER.to_string());
        let command = if hold { NetCommand::Hold { a, b } } else { NetCommand::Release { a, b } };
        run.event(at_ms, NetEvent::Applied(command))
    }

    #[test]
    fn a_hold_counts_when_its_release_delivers_a_controller_request() {
        let held = |served_ms, actor| {
            let run = command(1_000, true, SyntheticRun::new());
            command(10_000, false, run)
                .event(served_ms, request(served_ms, actor, ApiVerb::Get, "pods", "p", 200))
        };
        assert_eq!(controller_requests_held(&held(10_040, "controller").build()), 1);
        assert_eq!(controller_requests_held(&held(10_400, "controller").build()), 0, "long after");
        assert_eq!(controller_requests_held(&held(10_040, "kubelet").build()), 0, "not the controller's");
    }
}
