//! The watch-stall probe (issue 42): a watch that went silent (a `stall-watch` fault) while objects of
//! its resource changed, so its client's cache went stale with no error to say so, until the stream's
//! timeout ended it.

use arc_sim::apiserver::{Committed, WatchItem, WatchSent};
use arc_world::RunRecord;

/// Stalled watches of the controller during whose silence a change of their resource committed.
pub fn watch_stalled_over_changes(run: &RunRecord) -> u32 {
    let sent = || run.events.iter().filter_map(|e| e.get::<WatchSent>().map(|w| (e, w)));
    let stalls = sent().filter(|(_, w)| {
        matches!(w.item, WatchItem::Stalled) && w.actor.as_deref().is_some_and(crate::view::is_controller)
    });
    let missed_a_change = |(at, stalled): (&arc_sim::record::Event, &WatchSent)| {
        let ended =
            sent().find(|(e, w)| e.seq > at.seq && w.id == stalled.id).map_or(run.end_ms, |(e, _)| e.at_ms);
        run.events
            .iter()
            .filter(|e| e.seq > at.seq && e.at_ms < ended)
            .any(|e| e.get::<Committed>().is_some_and(|c| c.resource == stalled.resource))
    };
    stalls.filter(|x| missed_a_change(*x)).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracles::fixtures;
    use arc_sim::apiserver::EventType;
    use arc_world::SyntheticRun;

    fn sent(id: u64, item: WatchItem) -> WatchSent {
        WatchSent { id, actor: Some("controller".into()), resource: "pods".into(), item }
    }

    #[test]
    fn a_stall_counts_when_its_resource_changed_before_the_stream_ended() {
        let stalled = || SyntheticRun::new().event(1_000, sent(3, WatchItem::Stalled));
        let pod = || fixtures::pod("p-1", "uid-1");
        let missed = stalled()
            .committed(2_000, "pods", EventType::Modified, pod())
            .event(290_000, sent(3, WatchItem::Timeout));
        assert_eq!(watch_stalled_over_changes(&missed.build()), 1);
        let quiet = stalled().event(290_000, sent(3, WatchItem::Timeout)).committed(
            300_000,
            "pods",
            EventType::Modified,
            pod(),
        );
        assert_eq!(
            watch_stalled_over_changes(&quiet.build()),
            0,
            "a change after the stream ended was not missed"
        );
    }
}
