//! The pauses of a run's controller processes, read from the record: who was stopped, from when to
//! when, and the reconciles it cut into. The pause probes count them; an oracle with a deadline on the
//! controller's promptness does not count time the controller was stopped (nothing can be prompt
//! then).

use arc_sim::record::WorldEvent;
use arc_world::RunRecord;

/// One pause of a controller process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pause<'a> {
    /// The process's actor (`controller`, or a replica's).
    pub who: &'a str,
    /// When it stopped (sim ms).
    pub from_ms: u64,
    /// When it went on (sim ms; the run may end first).
    pub until_ms: u64,
    /// Reconciles in flight when it stopped.
    pub in_flight: i64,
}

/// Every pause of the run, in order.
pub fn pauses(run: &RunRecord) -> impl Iterator<Item = Pause<'_>> + '_ {
    run.events.iter().filter_map(|e| match e.get::<WorldEvent>()? {
        WorldEvent::ControllerPaused { who, for_ms, in_flight } => {
            Some(Pause { who, from_ms: e.at_ms, until_ms: e.at_ms + for_ms, in_flight: *in_flight })
        }
        _ => None,
    })
}

/// The run's stops (pause intervals), read once: what a promptness deadline does not count.
#[derive(Debug, Clone, Default)]
pub struct Stops(Vec<(u64, u64)>);

impl Stops {
    /// The stops of `run`, in order.
    pub fn of(run: &RunRecord) -> Self {
        let mut stops: Vec<(u64, u64)> = pauses(run).map(|p| (p.from_ms, p.until_ms)).collect();
        stops.sort_unstable();
        Stops(stops)
    }

    /// How long, within `from_ms..to_ms`, some controller process was stopped.
    pub fn within(&self, from_ms: u64, to_ms: u64) -> u64 {
        self.0.iter().map(|(start, end)| (*end).min(to_ms).saturating_sub((*start).max(from_ms))).sum()
    }

    /// The sim ms by which `ms` of time in which no controller process was stopped have passed since
    /// `from_ms` (pauses of one process never overlap: the world refuses a second while one lasts).
    pub fn deadline_after(&self, from_ms: u64, ms: u64) -> u64 {
        let mut due = from_ms + ms;
        for (start, end) in self.0.iter().filter(|(_, end)| *end > from_ms) {
            if *start >= due {
                break;
            }
            due += end - (*start).max(from_ms);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use arc_world::SyntheticRun;

    use super::*;

    fn paused(run: SyntheticRun, at_ms: u64, for_ms: u64) -> SyntheticRun {
        run.event(at_ms, WorldEvent::ControllerPaused { who: "controller".into(), for_ms, in_flight: 0 })
    }

    #[test]
    fn a_deadline_moves_by_the_stops_before_it() {
        let stops = Stops::of(&paused(paused(SyntheticRun::new(), 10_000, 5_000), 100_000, 60_000).build());
        assert_eq!(stops.deadline_after(0, 20_000), 25_000, "the first stop falls before it");
        assert_eq!(stops.deadline_after(0, 96_000), 161_000, "so does the second, once the first moved it");
        assert_eq!(stops.deadline_after(20_000, 10_000), 30_000, "none after");
        assert_eq!(stops.deadline_after(12_000, 10_000), 25_000, "one begun before it counts from its start");
        assert_eq!(stops.within(12_000, 130_000), 3_000 + 30_000);
        assert_eq!(Stops::default().deadline_after(5, 10), 15, "no stop, no change");
    }
}
