//! The run's trace: an append-only list of `sim_ms actor event details` lines and their FNV-1a hash.
//!
//! Two runs of the same seed on the same code produce byte-identical traces; the hash is how sweeps
//! and the determinism check compare them without keeping every line. Lines carry simulated
//! milliseconds only, never wall time.

use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex};

use crate::clock::SimClock;
use crate::fnv::Fnv1a64;

/// Whether a trace keeps its lines or only their hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceMode {
    /// Keep every line (for `--trace FILE`, snapshots and failure reports).
    #[default]
    Full,
    /// Keep only the running hash and the line count (sweeps).
    HashOnly,
    /// Print each line to stderr as it is recorded and keep only the hash (interactive servers).
    Stderr,
    /// Keep nothing: no line is rendered, hashed or counted, so the hash and the count stay those of an
    /// empty trace (sweeps that compare no traces; a failing seed's replay renders its trace).
    Off,
}

#[derive(Debug, Default)]
struct Inner {
    lines: Vec<String>,
    hash: Fnv1a64,
    count: u64,
}

/// A shared, append-only trace. Clones append to the same trace.
#[derive(Clone)]
pub struct Trace {
    clock: SimClock,
    mode: TraceMode,
    inner: Arc<Mutex<Inner>>,
}

impl fmt::Debug for Trace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Trace").field("mode", &self.mode).field("lines", &self.len()).finish()
    }
}

impl Trace {
    /// A new, empty trace stamped by `clock`.
    pub fn new(clock: SimClock, mode: TraceMode) -> Self {
        Trace { clock, mode, inner: Arc::default() }
    }

    /// Appends `"{sim_ms} {actor} {event} {details}"`.
    pub fn record(&self, actor: &str, event: &str, details: impl fmt::Display) {
        if self.is_off() {
            return;
        }
        let mut line = String::with_capacity(64);
        let _ = write!(line, "{} {actor} {event}", self.clock.elapsed_ms());
        let start = line.len();
        let _ = write!(line, " {details}");
        if line.len() == start + 1 {
            line.truncate(start);
        }
        self.push(line);
    }

    fn push(&self, line: String) {
        let mut inner = self.inner.lock().expect("trace lock");
        inner.hash.write(line.as_bytes());
        inner.hash.write(b"\n");
        inner.count += 1;
        match self.mode {
            TraceMode::Full => inner.lines.push(line),
            TraceMode::Stderr => eprintln!("{line}"),
            TraceMode::HashOnly | TraceMode::Off => {}
        }
    }

    /// Whether this trace keeps nothing ([`TraceMode::Off`]): a recorder need not render its lines.
    pub fn is_off(&self) -> bool {
        self.mode == TraceMode::Off
    }

    /// The FNV-1a hash of every line so far (each followed by a newline).
    pub fn hash(&self) -> u64 {
        self.inner.lock().expect("trace lock").hash.finish()
    }

    /// The number of lines recorded.
    pub fn len(&self) -> u64 {
        self.inner.lock().expect("trace lock").count
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of the lines (empty unless [`TraceMode::Full`]).
    pub fn lines(&self) -> Vec<String> {
        self.inner.lock().expect("trace lock").lines.clone()
    }

    /// The whole trace as text, one line each, newline-terminated.
    pub fn text(&self) -> String {
        let inner = self.inner.lock().expect("trace lock");
        let mut out = String::with_capacity(inner.lines.iter().map(|l| l.len() + 1).sum());
        for line in &inner.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The clock stamping this trace.
    pub fn clock(&self) -> SimClock {
        self.clock
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::fnv::fnv1a64;

    #[tokio::test(start_paused = true)]
    async fn lines_carry_sim_milliseconds_and_hash_the_text() {
        let trace = Trace::new(SimClock::start(), TraceMode::Full);
        trace.record("apiserver", "create", "pods default/a rv=2");
        tokio::time::sleep(Duration::from_millis(1500)).await;
        trace.record("kubelet", "start", "");
        assert_eq!(trace.lines(), vec!["0 apiserver create pods default/a rv=2", "1500 kubelet start"]);
        assert_eq!(trace.hash(), fnv1a64(trace.text().as_bytes()));
    }

    #[tokio::test(start_paused = true)]
    async fn hash_only_mode_hashes_the_same_as_full_mode() {
        let clock = SimClock::start();
        let full = Trace::new(clock, TraceMode::Full);
        let hashed = Trace::new(clock, TraceMode::HashOnly);
        for t in [&full, &hashed] {
            t.record("a", "b", 1);
            t.record("c", "d", "x y");
        }
        assert_eq!(full.hash(), hashed.hash());
        assert!(hashed.lines().is_empty());
        assert_eq!(hashed.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn an_off_trace_keeps_what_an_empty_one_does() {
        let clock = SimClock::start();
        let off = Trace::new(clock, TraceMode::Off);
        off.record("a", "b", 1);
        assert!(off.is_off() && off.is_empty() && off.lines().is_empty());
        assert_eq!(off.hash(), Trace::new(clock, TraceMode::Full).hash());
    }
}
