//! Where a probe first fired: the earliest event of a run's record after which the probe counts a
//! hit. Probes only count, so the event is found by counting record prefixes: the shortest prefix of
//! the kept events on which the probe already counts one, by bisection. Bisection assumes a probe's
//! count does not fall as the record grows (probes count windows that opened); for one whose count
//! could fall, the event found is still one after which a prefix of the record counts a hit.
//! A prefix ends (`end_ms`) at its last event; the rest of the end-of-run state (jobs, runners,
//! objects, metrics) stays whole in every prefix, so a probe that counts from it alone fires on the
//! empty prefix and has no first event.

use arc_world::RunRecord;

use crate::probes::Probe;

/// Where a probe first fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstHit {
    /// At the event `index` (into the record's kept events) at sim `at_ms`.
    Event {
        /// Index into `RunRecord::events`.
        index: usize,
        /// Its sim ms.
        at_ms: u64,
    },
    /// Counted from the end-of-run state alone (metrics, final jobs or objects): no event to point at.
    EndState,
}

/// Where `probe` first fired in `run`, or `None` if it never did.
pub fn first_hit(run: &RunRecord, probe: &Probe) -> Option<FirstHit> {
    first_counted(run, probe.count)
}

/// [`first_hit`] for any count over a record.
pub fn first_counted(run: &RunRecord, count: fn(&RunRecord) -> u32) -> Option<FirstHit> {
    if count(run) == 0 {
        return None;
    }
    let mut prefix = run.without_events();
    let mut counts_at = |len: usize| {
        prefix.set_events(&run.events[..len]);
        prefix.end_ms = len.checked_sub(1).map_or(0, |last| run.events[last].at_ms);
        count(&prefix) > 0
    };
    if counts_at(0) {
        return Some(FirstHit::EndState);
    }
    // Invariant: the prefix of `low` events counts nothing, the prefix of `high` counts a hit.
    let (mut low, mut high) = (0, run.events.len());
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if counts_at(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    let index = high - 1;
    Some(FirstHit::Event { index, at_ms: run.events[index].at_ms })
}

/// The index in `trace_lines` of the line event `index` of `run` wrote, if it wrote one: found by
/// position when the record kept every event (each line is one event's), else by text; for an event
/// without a line, the first line at or after its time.
pub fn trace_line_of(run: &RunRecord, index: usize, trace_lines: &[String]) -> Option<usize> {
    let event = run.events.get(index)?;
    let Some(line) = event.body.line() else {
        return trace_lines.iter().position(|l| line_ms(l).is_some_and(|ms| ms >= event.at_ms));
    };
    let text = rendered(event.at_ms, &line.actor, &line.event, &line.details);
    let by_position = run.events[..index].iter().filter(|e| e.body.line().is_some()).count();
    if trace_lines.get(by_position) == Some(&text) {
        return Some(by_position);
    }
    trace_lines.iter().position(|l| *l == text)
}

/// A trace line as [`arc_sim::Trace::record`] writes it.
fn rendered(at_ms: u64, actor: &str, event: &str, details: &str) -> String {
    if details.is_empty() {
        format!("{at_ms} {actor} {event}")
    } else {
        format!("{at_ms} {actor} {event} {details}")
    }
}

/// The sim ms a trace line starts with.
fn line_ms(line: &str) -> Option<u64> {
    line.split(' ').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use arc_sim::faults::ApiVerb;
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::request;

    fn conflicts(run: &RunRecord) -> u32 {
        run.audit().filter(|a| a.code == 409).count() as u32
    }

    fn from_end_state(run: &RunRecord) -> u32 {
        run.jobs.len() as u32
    }

    #[test]
    fn the_first_hit_is_the_first_event_the_probe_counts() {
        let mut synthetic = SyntheticRun::new();
        for ms in 1..=40 {
            let code = if ms >= 23 { 409 } else { 201 };
            synthetic = synthetic.event(ms, request(ms, "controller", ApiVerb::Create, "pods", "p", code));
        }
        let run = synthetic.build();
        assert_eq!(first_counted(&run, conflicts), Some(FirstHit::Event { index: 22, at_ms: 23 }));
        let quiet = SyntheticRun::new().event(1, request(1, "controller", ApiVerb::Create, "pods", "p", 201));
        assert_eq!(first_counted(&quiet.build(), conflicts), None);
    }

    #[test]
    fn a_count_of_the_end_state_has_no_first_event() {
        let run = SyntheticRun::new().jobs(vec![crate::oracles::fixtures::job(
            1,
            arc_sim::github::JobState::Queued,
            None,
        )]);
        assert_eq!(first_counted(&run.build(), from_end_state), Some(FirstHit::EndState));
    }

    #[test]
    fn an_event_is_found_in_the_trace_by_its_line() {
        let run = SyntheticRun::new()
            .event(1, request(1, "controller", ApiVerb::Create, "pods", "p", 201))
            .event(2, request(2, "controller", ApiVerb::Create, "pods", "p", 409))
            .build();
        let lines: Vec<String> = run
            .events
            .iter()
            .map(|e| {
                let l = e.body.line().expect("a request has a line");
                rendered(e.at_ms, &l.actor, &l.event, &l.details)
            })
            .collect();
        assert_eq!(trace_line_of(&run, 1, &lines), Some(1));
        let shifted: Vec<String> = std::iter::once("0 world config {}".to_string()).chain(lines).collect();
        assert_eq!(trace_line_of(&run, 1, &shifted), Some(2), "found by text when positions differ");
    }
}
