//! The listener-pause probes (issue 42, item 6): a listener pod's process stopped while jobs were
//! queued at GitHub (they wait for it to go on: nothing else asks for runners), and a stopped
//! listener's long poll that the service answered with a job message, which waited in the connection
//! for the listener to go on.

use arc_sim::github::{EventKind, GitHubEvent};
use arc_sim::record::WorldEvent;
use arc_world::RunRecord;

/// Every listener pause of the run: from when to when (sim ms; the run may end first).
fn listener_pauses(run: &RunRecord) -> Vec<(u64, u64)> {
    let stops = run.events.iter().filter_map(|e| match e.get::<WorldEvent>()? {
        WorldEvent::ListenerPaused { for_ms, .. } => Some((e.at_ms, e.at_ms + for_ms)),
        _ => None,
    });
    stops.collect()
}

/// Listener pauses during which the GitHub event `pick` happened at least once.
fn pauses_with(run: &RunRecord, pick: impl Fn(&EventKind) -> bool) -> u32 {
    let stops = listener_pauses(run);
    if stops.is_empty() {
        return 0;
    }
    let times: Vec<u64> = run
        .events
        .iter()
        .filter_map(|e| e.get::<GitHubEvent>().filter(|g| pick(&g.kind)).map(|_| e.at_ms))
        .collect();
    let hit = |(from, until): &(u64, u64)| times.iter().any(|ms| (*from..=*until).contains(ms));
    stops.iter().filter(|stop| hit(stop)).count() as u32
}

/// Listener pauses during which a job was queued at GitHub.
pub fn listener_paused_as_jobs_queued(run: &RunRecord) -> u32 {
    pauses_with(run, |kind| matches!(kind, EventKind::JobQueued { .. }))
}

/// Listener pauses during which the service sealed a job message for a poll (the stopped listener's
/// own: one listener per scale set).
pub fn listener_answer_waited_while_paused(run: &RunRecord) -> u32 {
    pauses_with(run, |kind| matches!(kind, EventKind::MessageSealed { .. }))
}

#[cfg(test)]
mod tests {
    use arc_world::SyntheticRun;

    use super::*;

    fn github(at_ms: u64, kind: EventKind) -> GitHubEvent {
        GitHubEvent { at_ms, kind, by: None }
    }

    fn paused(for_ms: u64) -> WorldEvent {
        WorldEvent::ListenerPaused { pod: "listener".into(), for_ms }
    }

    #[test]
    fn a_pause_counts_once_when_jobs_came_during_it_and_not_when_they_came_after() {
        let queued = |id| EventKind::JobQueued { request_id: id };
        let run = SyntheticRun::new()
            .event(1_000, paused(10_000))
            .event(2_000, github(2_000, queued(1)))
            .event(3_000, github(3_000, queued(2)))
            .event(20_000, paused(5_000))
            .event(26_000, github(26_000, queued(3)))
            .build();
        assert_eq!(listener_paused_as_jobs_queued(&run), 1);
        assert_eq!(listener_answer_waited_while_paused(&run), 0);
    }

    #[test]
    fn a_message_sealed_while_the_listener_was_stopped_counts() {
        let sealed = EventKind::MessageSealed { scale_set_id: 1, message_id: 7, jobs: 2 };
        let run =
            SyntheticRun::new().event(1_000, paused(10_000)).event(4_000, github(4_000, sealed)).build();
        assert_eq!(listener_answer_waited_while_paused(&run), 1);
        assert_eq!(listener_paused_as_jobs_queued(&run), 0);
    }

    #[test]
    fn a_run_without_listener_pauses_counts_nothing() {
        let run =
            SyntheticRun::new().event(2_000, github(2_000, EventKind::JobQueued { request_id: 1 })).build();
        assert_eq!(listener_paused_as_jobs_queued(&run), 0);
    }
}
