//! The load probes (issue 42, item 7): requests of the controller's processes (the controller and
//! its listeners) that priority and fairness made wait for a seat, or turned away with its 429.

use arc_sim::apiserver::SeatWait;
use arc_world::RunRecord;

/// Whether `actor` is one of the controller's processes.
fn of_the_controller(actor: Option<&str>) -> bool {
    actor.is_some_and(|a| crate::view::is_controller(a) || a == "listener")
}

fn seat_waits(run: &RunRecord) -> impl Iterator<Item = &SeatWait> {
    run.events.iter().filter_map(|e| e.get::<SeatWait>()).filter(|w| of_the_controller(w.actor.as_deref()))
}

/// Requests of the controller's processes rejected 429 by priority and fairness.
pub fn request_rejected_under_load(run: &RunRecord) -> u32 {
    seat_waits(run).filter(|w| w.rejected.is_some()).count() as u32
}

/// Requests of the controller's processes that waited a second or more for a seat and were served.
pub fn request_queued_for_a_second(run: &RunRecord) -> u32 {
    seat_waits(run).filter(|w| w.rejected.is_none() && w.waited_ms >= 1_000).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use arc_sim::faults::ApiVerb;
    use arc_world::SyntheticRun;

    fn wait(actor: &str, waited_ms: u64, rejected: Option<&'static str>) -> SeatWait {
        let (resource, target) = ("pods".into(), "ns/p".into());
        SeatWait { actor: Some(actor.into()), verb: ApiVerb::Create, resource, target, waited_ms, rejected }
    }

    #[test]
    fn only_the_controllers_rejections_and_long_waits_count() {
        let run = SyntheticRun::new()
            .event(1_000, wait("controller", 0, Some("queue-full")))
            .event(2_000, wait("listener", 15_000, Some("waited-too-long")))
            .event(3_000, wait("kubelet", 0, Some("queue-full")))
            .event(4_000, wait("controller#2", 1_000, None))
            .event(5_000, wait("controller", 999, None))
            .build();
        assert_eq!(request_rejected_under_load(&run), 2);
        assert_eq!(request_queued_for_a_second(&run), 1);
    }
}
