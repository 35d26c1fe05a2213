//! Log capture for tests whose symptom includes a log line's level (race 1 logs AlreadyExists at info).
//!
//! One process-wide subscriber, installed on first use, hands each event to the sink of the thread that
//! emitted it, if that thread is capturing. A thread-scoped subscriber (`set_default`) would not do:
//! with a single scoped dispatcher tracing computes a new callsite's interest from the registering
//! thread's own default, so a log call first reached by another test's thread (no subscriber there) is
//! cached as "never" for every thread, and the capturing test misses its lines. The global subscriber
//! answers "sometimes" for every callsite and decides per event, on the emitting thread.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Once};

use tracing::field::{Field, Visit};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};

/// One captured log line: its level, message and other fields.
#[derive(Debug, Clone)]
pub(crate) struct LogLine {
    pub level: tracing::Level,
    pub message: String,
    pub fields: BTreeMap<String, String>,
}

type Sink = Arc<Mutex<Vec<LogLine>>>;

thread_local! {
    /// The sink of the test running on this thread, while it captures.
    static THREAD_SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// The lines logged on the current thread since [`CapturedLogs::install`]; capture ends when the
/// returned [`CaptureGuard`] drops. The test's paused runtime runs every task on the test's thread.
#[derive(Clone, Default)]
pub(crate) struct CapturedLogs(Sink);

/// Stops the current thread's capture when dropped.
pub(crate) struct CaptureGuard(());

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        THREAD_SINK.with(|sink| sink.borrow_mut().take());
    }
}

impl CapturedLogs {
    /// Starts capturing the current thread's events.
    pub(crate) fn install() -> (CapturedLogs, CaptureGuard) {
        static GLOBAL: Once = Once::new();
        GLOBAL.call_once(|| {
            let subscriber = tracing_subscriber::registry().with(RouteToThreadSink);
            tracing::subscriber::set_global_default(subscriber).expect("no other global subscriber in tests");
        });
        // A callsite registered while the global subscriber was being set may have cached "never".
        tracing::callsite::rebuild_interest_cache();
        let logs = CapturedLogs::default();
        THREAD_SINK.with(|sink| *sink.borrow_mut() = Some(logs.0.clone()));
        (logs, CaptureGuard(()))
    }

    /// The captured lines at `level` whose message is `message`.
    pub(crate) fn lines(&self, level: tracing::Level, message: &str) -> Vec<LogLine> {
        let lines = self.0.lock().expect("logs");
        lines.iter().filter(|line| line.level == level && line.message == message).cloned().collect()
    }
}

/// The global layer: enabled only on capturing threads, it records each event into that thread's sink.
struct RouteToThreadSink;

fn thread_is_capturing() -> bool {
    THREAD_SINK.with(|sink| sink.borrow().is_some())
}

impl<S: Subscriber> Layer<S> for RouteToThreadSink {
    fn register_callsite(&self, _metadata: &'static Metadata<'static>) -> Interest {
        Interest::sometimes()
    }

    fn enabled(&self, _metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        thread_is_capturing()
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = FieldsOf::default();
        event.record(&mut fields);
        let message = fields.0.remove("message").unwrap_or_default();
        let line = LogLine { level: *event.metadata().level(), message, fields: fields.0 };
        THREAD_SINK.with(|sink| {
            if let Some(sink) = sink.borrow().as_ref() {
                sink.lock().expect("logs").push(line);
            }
        });
    }
}

/// An event's fields as text.
#[derive(Default)]
struct FieldsOf(BTreeMap<String, String>);

impl Visit for FieldsOf {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_string(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

/// Logs one line from a single callsite, so that two threads share it.
fn log_the_probe_line() {
    tracing::info!(probe = true, "the probe line");
}

#[test]
#[allow(clippy::disallowed_methods)] // the other thread is the point: no simulation runs here
fn a_log_call_first_reached_on_a_thread_that_does_not_capture_is_still_captured() {
    let (logs, _guard) = CapturedLogs::install();
    std::thread::spawn(log_the_probe_line).join().expect("the other thread");
    log_the_probe_line();

    let lines = logs.lines(tracing::Level::INFO, "the probe line");
    assert_eq!(lines.len(), 1, "only this thread's line, and not lost to the other's cached interest");
    assert_eq!(lines[0].fields.get("probe").map(String::as_str), Some("true"));
}
