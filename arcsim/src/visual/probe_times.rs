//! When the probes fired. A probe counts race windows over a whole record; the time its `j`-th window
//! opened is the end of the shortest prefix of the record on which it counts `j` (found by bisection;
//! a probe that reads the end state, such as the runners' final list, sees it on every prefix).

use arc_world::RunRecord;
use serde::Serialize;

use arc_judging::probes;

/// At most this many marks per probe.
pub const MARKS_PER_PROBE: u32 = 10;

/// One window a probe saw open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeMark {
    /// Sim ms of the event that opened it.
    pub at_ms: u64,
    /// The probe.
    pub probe: &'static str,
    /// Which of its windows (1-based).
    pub nth: u32,
}

/// The first [`MARKS_PER_PROBE`] windows of every probe that fired in `run`, in time order.
pub fn probe_marks(run: &RunRecord) -> Vec<ProbeMark> {
    let mut prefix = run.without_events();
    let mut marks = Vec::new();
    for probe in probes::all() {
        let total = (probe.count)(run);
        let mut low = 0;
        for nth in 1..=total.min(MARKS_PER_PROBE) {
            let len = shortest_prefix(run, &mut prefix, low, |r| (probe.count)(r) >= nth);
            if let Some(event) = len.checked_sub(1).and_then(|i| run.events.get(i)) {
                marks.push(ProbeMark { at_ms: event.at_ms, probe: probe.name, nth });
            }
            low = len;
        }
    }
    marks.sort_by_key(|m| (m.at_ms, m.probe, m.nth));
    marks
}

/// The length of the shortest prefix of `run`'s events (at least `low`) on which `holds` is true.
fn shortest_prefix(
    run: &RunRecord,
    prefix: &mut RunRecord,
    low: usize,
    holds: impl Fn(&RunRecord) -> bool,
) -> usize {
    let (mut lo, mut hi) = (low, run.events.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        prefix.set_events(&run.events[..mid]);
        if holds(prefix) { hi = mid } else { lo = mid + 1 }
    }
    lo
}
