//! The slow-watcher probes (issue 42): a watch the API server closed for falling behind
//! (`slow_watcher_backlog`), and what its client did next — resumed from its last resourceVersion,
//! or, when that was older than the watch cache's window, met 410 Expired and listed again.

use arc_sim::apiserver::{WatchItem, WatchOpened, WatchSent};
use arc_sim::record::Event;
use arc_world::RunRecord;

/// How soon after its closure the client's next watch must come to count as its resumption.
const RESUME_WITHIN_MS: u64 = 60_000;

/// Each slow watcher's closure: (the event, who watched, what).
fn closures(run: &RunRecord) -> impl Iterator<Item = (&Event, &WatchSent)> + '_ {
    run.events.iter().filter_map(|e| {
        let sent = e.get::<WatchSent>()?;
        matches!(sent.item, WatchItem::ClosedSlow { .. }).then_some((e, sent))
    })
}

/// The first watch the same client opened of the same resource after `closed`, within a minute.
fn next_watch<'a>(
    run: &'a RunRecord,
    closed: &Event,
    sent: &WatchSent,
) -> Option<(&'a Event, &'a WatchOpened)> {
    run.events.iter().filter(|e| e.seq > closed.seq && e.at_ms <= closed.at_ms + RESUME_WITHIN_MS).find_map(
        |e| {
            e.get::<WatchOpened>()
                .filter(|w| w.actor == sent.actor && w.resource == sent.resource)
                .map(|w| (e, w))
        },
    )
}

/// Slow watchers closed whose client watched again from a resourceVersion.
pub fn slow_watcher_resumed(run: &RunRecord) -> u32 {
    let resumed = |(e, sent): &(&Event, &WatchSent)| {
        next_watch(run, e, sent).is_some_and(|(_, w)| w.from != "now" && w.from != "0")
    };
    closures(run).filter(resumed).count() as u32
}

/// Slow watchers closed whose client's next watch was answered 410 Expired (its resourceVersion had
/// left the watch cache's window) and who then listed the resource again.
pub fn slow_watcher_relisted(run: &RunRecord) -> u32 {
    let relisted = |(e, sent): &(&Event, &WatchSent)| {
        let Some((opened_at, opened)) = next_watch(run, e, sent) else { return false };
        let expired = run.events.iter().filter(|x| x.seq > opened_at.seq).find_map(|x| {
            let answer = x.get::<WatchSent>().filter(|w| w.id == opened.id)?;
            matches!(&answer.item, WatchItem::Error { code, .. } if code == "410").then_some(x)
        });
        expired.is_some_and(|at| super::network::relisted_after(run, at, sent))
    };
    closures(run).filter(relisted).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracles::fixtures::request;
    use arc_sim::faults::ApiVerb;
    use arc_world::SyntheticRun;

    fn sent(id: u64, item: WatchItem) -> WatchSent {
        WatchSent { id, actor: Some("controller".into()), resource: "pods".into(), item }
    }

    fn opened(id: u64, from: &str) -> WatchOpened {
        let actor = Some("controller".into());
        WatchOpened { id, actor, resource: "pods".into(), target: "*".into(), from: from.into() }
    }

    fn expired() -> WatchItem {
        WatchItem::Error { code: "410".into(), message: "too old resource version".into() }
    }

    #[test]
    fn a_closed_watcher_counts_once_it_watches_again_from_a_version_or_relists_after_410() {
        let closed = || SyntheticRun::new().event(1_000, sent(1, WatchItem::ClosedSlow { backlog: 9 }));
        let resumed = closed().event(1_010, opened(2, "57")).build();
        assert_eq!((slow_watcher_resumed(&resumed), slow_watcher_relisted(&resumed)), (1, 0));
        let relisted = closed()
            .event(1_010, opened(2, "57"))
            .event(1_011, sent(2, expired()))
            .event(1_900, request(1_900, "controller", ApiVerb::List, "pods", "", 200))
            .build();
        assert_eq!((slow_watcher_resumed(&relisted), slow_watcher_relisted(&relisted)), (1, 1));
        let fresh = closed().event(1_010, opened(2, "now")).build();
        assert_eq!(slow_watcher_resumed(&fresh), 0, "a watch from now is not a resumption");
        let late = closed().event(90_000, opened(2, "57")).build();
        assert_eq!(slow_watcher_resumed(&late), 0, "a watch a minute and more later is not its resumption");
    }

    #[test]
    fn a_watch_ended_otherwise_is_no_slow_watcher() {
        let dropped =
            SyntheticRun::new().event(1_000, sent(1, WatchItem::Dropped)).event(1_010, opened(2, "57"));
        assert_eq!(slow_watcher_resumed(&dropped.build()), 0);
    }
}
