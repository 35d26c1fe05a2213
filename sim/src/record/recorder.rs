//! [`Recorder`]: the run's record, shared by every fake. [`Recorder::emit`] stamps an event with the
//! simulated time and the next sequence number, renders its line into the trace, and keeps the event
//! if the [`Interest`] wants it. Clones share one record.

use std::any::TypeId;
use std::sync::{Arc, Mutex};

use super::interest::Interest;
use super::observed::Observed;
use crate::clock::SimClock;
use crate::trace::{Trace, TraceMode};

/// One kept event: when, in which order, and what.
#[derive(Debug, Clone)]
pub struct Event {
    /// Position in the run's stream (0-based, counting every event emitted, kept or not).
    pub seq: u64,
    /// Simulated milliseconds since the run began.
    pub at_ms: u64,
    /// The event.
    pub body: Arc<dyn Observed>,
}

impl Event {
    /// The event as a `T`, if it is one.
    pub fn get<T: Observed>(&self) -> Option<&T> {
        self.body.as_any().downcast_ref::<T>()
    }
}

#[derive(Debug)]
struct Inner {
    next_seq: u64,
    interest: Interest,
    kept: Vec<Event>,
}

/// The record of one run. Cheap to clone; clones share it.
#[derive(Clone)]
pub struct Recorder {
    clock: SimClock,
    trace: Trace,
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.lock().expect("record lock");
        f.debug_struct("Recorder")
            .field("trace", &self.trace)
            .field("emitted", &inner.next_seq)
            .field("kept", &inner.kept.len())
            .finish()
    }
}

impl Recorder {
    /// A record stamped by `clock` whose text goes to a trace in `mode`; it keeps every event until
    /// told otherwise ([`Recorder::keep_only`]).
    pub fn new(clock: SimClock, mode: TraceMode) -> Self {
        let inner = Inner { next_seq: 0, interest: Interest::everything(), kept: Vec::new() };
        Recorder { clock, trace: Trace::new(clock, mode), inner: Arc::new(Mutex::new(inner)) }
    }

    /// From now on, keep only what `interest` wants.
    pub fn keep_only(&self, interest: Interest) {
        self.inner.lock().expect("record lock").interest = interest;
    }

    /// Whether an event of type `T` about `resource` would be kept: lets a fake skip building an
    /// event that has no line and that nobody reads.
    pub fn wants<T: Observed>(&self, resource: Option<&str>) -> bool {
        self.inner.lock().expect("record lock").interest.wants(TypeId::of::<T>(), resource)
    }

    /// Records `event`: the next sequence number, the current simulated time, its line in the trace
    /// (not rendered when the trace is off), and the event itself if the interest wants it.
    pub fn emit<T: Observed>(&self, event: T) {
        self.record(event, None);
    }

    /// Records `event`, kept if `wanted` (`None`: if the interest wants it).
    fn record<T: Observed>(&self, event: T, wanted: Option<bool>) {
        let at_ms = self.clock.elapsed_ms();
        let mut inner = self.inner.lock().expect("record lock");
        let wanted = wanted.unwrap_or_else(|| inner.interest.wants(TypeId::of::<T>(), event.resource()));
        let seq = inner.next_seq;
        inner.next_seq += 1;
        if !self.trace.is_off()
            && let Some(line) = event.line()
        {
            self.trace.record(&line.actor, &line.event, line.details);
        }
        if wanted {
            inner.kept.push(Event { seq, at_ms, body: Arc::new(event) });
        }
    }

    /// Records the event `build` makes, as [`emit`](Self::emit) does, building it only when its line
    /// is rendered or the record keeps events of type `T` about `resource`: a skipped event still takes
    /// its sequence number, so the numbers of the others do not depend on the trace mode.
    pub fn emit_with<T: Observed>(&self, resource: Option<&str>, build: impl FnOnce() -> T) {
        let wanted = {
            let mut inner = self.inner.lock().expect("record lock");
            let wanted = inner.interest.wants(TypeId::of::<T>(), resource);
            if !wanted && self.trace.is_off() {
                inner.next_seq += 1;
                return;
            }
            wanted
        };
        self.record(build(), Some(wanted));
    }

    /// Every kept event so far, in order.
    pub fn events(&self) -> Vec<Event> {
        self.inner.lock().expect("record lock").kept.clone()
    }

    /// The kept events from position `index` on (as many as were kept so far, less `index`): lets a
    /// stepping tool read what happened since it last looked without copying the whole record.
    pub fn events_from(&self, index: usize) -> Vec<Event> {
        let inner = self.inner.lock().expect("record lock");
        inner.kept.get(index..).map(<[Event]>::to_vec).unwrap_or_default()
    }

    /// How many events have been kept so far.
    pub fn kept(&self) -> usize {
        self.inner.lock().expect("record lock").kept.len()
    }

    /// Every kept event of type `T` so far, in order, with its time.
    pub fn events_of<T: Observed + Clone>(&self) -> Vec<(u64, T)> {
        let inner = self.inner.lock().expect("record lock");
        inner.kept.iter().filter_map(|e| e.get::<T>().map(|t| (e.at_ms, t.clone()))).collect()
    }

    /// How many events have been emitted (kept or not).
    pub fn emitted(&self) -> u64 {
        self.inner.lock().expect("record lock").next_seq
    }

    /// The text form: the trace.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The clock stamping this record.
    pub fn clock(&self) -> SimClock {
        self.clock
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::record::Line;

    #[derive(Debug, Clone, PartialEq)]
    struct Said(&'static str);
    impl Observed for Said {
        fn line(&self) -> Option<Line<'_>> {
            Some(Line::new("test", "said", self.0))
        }
        crate::observed_as_any!();
    }

    #[derive(Debug, Clone)]
    struct Silent;
    impl Observed for Silent {
        fn line(&self) -> Option<Line<'_>> {
            None
        }
        crate::observed_as_any!();
    }

    #[tokio::test(start_paused = true)]
    async fn events_are_numbered_timed_traced_and_kept_per_interest() {
        let record = Recorder::new(SimClock::start(), TraceMode::Full);
        record.emit(Said("a"));
        tokio::time::sleep(Duration::from_millis(5)).await;
        record.emit(Silent);
        record.keep_only(Interest::of::<Said>());
        record.emit(Silent);
        record.emit(Said("b"));
        assert_eq!(record.trace().lines(), vec!["0 test said a", "5 test said b"]);
        let kept = record.events();
        assert_eq!(kept.iter().map(|e| (e.seq, e.at_ms)).collect::<Vec<_>>(), vec![(0, 0), (1, 5), (3, 5)]);
        assert_eq!(record.events_of::<Said>(), vec![(0, Said("a")), (5, Said("b"))]);
        assert_eq!(record.emitted(), 4);
        assert_eq!(record.kept(), 3);
        assert_eq!(record.events_from(2).iter().map(|e| e.seq).collect::<Vec<_>>(), vec![3]);
        assert!(record.events_from(9).is_empty());
        assert!(record.wants::<Said>(None) && !record.wants::<Silent>(None));
    }

    /// An event whose line must never be rendered.
    #[derive(Debug, Clone)]
    struct Unrendered;
    impl Observed for Unrendered {
        fn line(&self) -> Option<Line<'_>> {
            panic!("an off trace renders no line")
        }
        crate::observed_as_any!();
    }

    #[tokio::test(start_paused = true)]
    async fn an_off_trace_renders_no_line_and_still_keeps_events() {
        let record = Recorder::new(SimClock::start(), TraceMode::Off);
        record.emit(Unrendered);
        assert_eq!((record.emitted(), record.kept(), record.trace().len()), (1, 1, 0));
    }
}
