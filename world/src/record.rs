//! What a finished run leaves behind for oracles, summaries and benches: the run's record (the typed
//! event stream, as far as the run's interest kept it, and its text form, the trace), and the state
//! at the end (jobs, runners, objects, metrics, counters).

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::sync::Arc;

use arc_controller::runtime::metrics::MetricKey;
use serde_json::Value;

use arc_sim::apiserver::reads::ReadEntry;
use arc_sim::apiserver::{AuditEntry, Change, Committed, RequestCounts};
use arc_sim::clock_skew::ClockSkew;
use arc_sim::github::{GitHubEvent, Job, Runner, Session};
use arc_sim::kubelet::KubeletEvent;
use arc_sim::record::{Event, Interest, Observed, WorldEvent};
use arc_sim::seed::Seed;
use arc_sim::trace::Trace;

use crate::derived::{Derived, shape};
use crate::events_by_type::EventsByType;

/// The clocks a run's configuration names (the rest of it is not read).
#[derive(serde::Deserialize)]
struct ConfiguredClocks {
    #[serde(default)]
    apiserver: OneClock,
    #[serde(default)]
    kubelet: OneClock,
    #[serde(default)]
    controller_clocks: BTreeMap<String, ClockSkew>,
}

/// A fake's configuration, for its clock alone.
#[derive(Default, serde::Deserialize)]
struct OneClock {
    #[serde(default)]
    clock: ClockSkew,
}

/// `event` with its body as a `T`, if it is one.
fn with_body<T: Observed>(event: &Event) -> Option<(&Event, &T)> {
    event.get::<T>().map(|t| (event, t))
}

/// Everything observable about one run.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The seed.
    pub seed: Seed,
    /// Which controller families ran (`scale-set`, `legacy`).
    pub plug: &'static str,
    /// Sim ms when the world was found settled, if it was.
    pub settled_at_ms: Option<u64>,
    /// Sim ms when the run stopped early because it had answered what it was run for
    /// ([`crate::EarlyAnswer`]); its record then ends where that answer was read (see
    /// [`RunRecord::before`]).
    pub answered_at_ms: Option<u64>,
    /// Sim ms when the run stopped.
    pub end_ms: u64,
    /// Sim ms when the last job was submitted (the workload's end).
    pub workload_end_ms: u64,
    /// The trace (lines kept per its mode).
    pub trace: Trace,
    /// The events the run's interest kept, in sequence order.
    pub events: Vec<Event>,
    /// API requests by verb, resource and code.
    pub api_requests: RequestCounts,
    /// Every job at the end.
    pub jobs: Vec<Job>,
    /// Every runner at the end (removed ones included).
    pub runners: Vec<Runner>,
    /// The message sessions open at the end.
    pub sessions: Vec<Session>,
    /// The controller's metrics at the end (reconciles, API calls, copies, predicate drops).
    pub metrics: BTreeMap<MetricKey, i64>,
    /// The listeners' metrics at the end (their API and GitHub calls), kept apart from the controller's.
    pub listener_metrics: BTreeMap<MetricKey, i64>,
    /// Objects at the end, by resource plural.
    pub objects: BTreeMap<String, Vec<Value>>,
    /// Request ids of the jobs the workload submitted, in order.
    pub submitted_jobs: Vec<i64>,
    /// Controller restarts performed.
    pub controller_restarts: u32,
    /// Restarts that cut at least one reconcile short.
    pub restarts_mid_reconcile: u32,
    /// Where each type's events sit in `events`, found the first time a judge asks.
    pub(crate) by_type: EventsByType,
    /// What judges derived from `events`, kept for the judges that ask again ([`RunRecord::derived`]).
    pub(crate) derived: Derived,
}

impl RunRecord {
    /// Sum of a controller metric over label sets matching `filter`.
    pub fn metric(&self, name: &str, filter: &[(&str, &str)]) -> i64 {
        self.metrics
            .iter()
            .filter(|(k, _)| k.name == name && filter.iter().all(|(l, v)| k.label(l) == Some(v)))
            .map(|(_, v)| *v)
            .sum()
    }

    /// The kept events of type `T`, in order.
    pub fn events_of<T: Observed>(&self) -> impl Iterator<Item = &T> + '_ {
        self.typed::<T>().map(|(_, t)| t)
    }

    /// The kept events of type `T` with the events that carry them (time, sequence), in order: by
    /// their positions ([`EventsByType`]), or a scan when the events changed since those were found.
    fn typed<T: Observed>(&self) -> Box<dyn Iterator<Item = (&Event, &T)> + '_> {
        match self.by_type.positions(&self.events, TypeId::of::<T>()) {
            Some(positions) => Box::new(positions.iter().filter_map(move |&i| with_body(&self.events[i]))),
            None => Box::new(self.events.iter().filter_map(with_body)),
        }
    }

    /// What `derive` makes of this record, made by the first judge that asks for a `T` under `key` and
    /// shared with every later one; made again once the events are no longer those it was made from.
    pub fn derived<T: Any + Send + Sync>(&self, key: &str, derive: impl FnOnce(&RunRecord) -> T) -> Arc<T> {
        self.derived.get_or_derive(shape(&self.events), key, || derive(self))
    }

    /// Every mutating API request the run kept, in order (the audit log).
    pub fn audit(&self) -> impl Iterator<Item = &AuditEntry> + '_ {
        self.events_of::<AuditEntry>().filter(|r| r.verb.is_mutating())
    }

    /// Every object version handed to a client that the run kept, in order.
    pub fn reads(&self) -> impl Iterator<Item = &ReadEntry> + '_ {
        self.events_of::<ReadEntry>()
    }

    /// The fake GitHub's state changes, in order.
    pub fn github_events(&self) -> impl Iterator<Item = &GitHubEvent> + '_ {
        self.events_of::<GitHubEvent>()
    }

    /// The kubelet's actions, in order.
    pub fn kubelet_events(&self) -> impl Iterator<Item = &KubeletEvent> + '_ {
        self.events_of::<KubeletEvent>()
    }

    /// The committed changes of `plural` the run kept, in commit order, with their sim ms.
    pub fn changes_of<'a>(&'a self, plural: &'a str) -> impl Iterator<Item = (u64, &'a Arc<Change>)> + 'a {
        self.typed::<Committed>()
            .filter(move |(_, c)| c.resource == plural)
            .map(|(e, c)| (e.at_ms, &c.change))
    }

    /// Every committed change the run kept, across kinds, in commit order, with its sim ms and plural.
    pub fn committed(&self) -> impl Iterator<Item = (u64, &str, &Arc<Change>)> + '_ {
        self.typed::<Committed>().map(|(e, c)| (e.at_ms, c.resource.as_str(), &c.change))
    }

    /// This record with only the events `interest` wants (what a run keeping `interest` would hold).
    pub fn keeping(&self, interest: &Interest) -> RunRecord {
        let events = self
            .events
            .iter()
            .filter(|e| interest.wants(e.body.as_any().type_id(), e.body.resource()))
            .cloned()
            .collect();
        RunRecord { events, by_type: EventsByType::default(), ..self.clone() }
    }

    /// This record with no events, its state at the end kept: a prefix's frame, which
    /// [`RunRecord::set_events`] fills.
    pub fn without_events(&self) -> RunRecord {
        RunRecord { events: Vec::new(), by_type: EventsByType::default(), ..self.clone() }
    }

    /// Replaces the events with `events`.
    pub fn set_events(&mut self, events: &[Event]) {
        self.events.clear();
        self.events.extend_from_slice(events);
        self.by_type = EventsByType::default();
    }

    /// This record as it stood before sim ms `at_ms`: only the events kept before it (events of that
    /// instant may still have been under way), ending there. The fakes' state (jobs, runners, objects)
    /// is left as it is.
    pub fn before(mut self, at_ms: u64) -> RunRecord {
        let cut = self.events.partition_point(|e| e.at_ms < at_ms);
        self.events.truncate(cut);
        self.by_type = EventsByType::default();
        self.end_ms = self.end_ms.min(at_ms);
        self
    }

    /// How far each controller process's clock read from true time, by its actor, as the run's
    /// configuration (its first event, [`WorldEvent::Config`]) said; empty when every one read true
    /// time or the record did not keep the configuration.
    pub fn controller_clocks(&self) -> BTreeMap<String, ClockSkew> {
        self.configured_clocks().map(|c| c.controller_clocks).unwrap_or_default()
    }

    /// Every party whose clock did not read true time (`apiserver`, `node`, and each controller
    /// process by its actor) with how far it read from it; empty as for [`RunRecord::controller_clocks`].
    pub fn skewed_clocks(&self) -> BTreeMap<String, ClockSkew> {
        let Some(clocks) = self.configured_clocks() else { return BTreeMap::new() };
        let fakes =
            [("apiserver".to_string(), clocks.apiserver.clock), ("node".to_string(), clocks.kubelet.clock)];
        fakes.into_iter().chain(clocks.controller_clocks).filter(|(_, skew)| !skew.is_none()).collect()
    }

    fn configured_clocks(&self) -> Option<ConfiguredClocks> {
        self.events_of::<WorldEvent>().find_map(|e| match e {
            WorldEvent::Config(json) => serde_json::from_str::<ConfiguredClocks>(json).ok(),
            _ => None,
        })
    }

    /// Objects of `plural` at the end.
    pub fn objects_of(&self, plural: &str) -> &[Value] {
        self.objects.get(plural).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Where a record made mid-run comes from: the recorder, the fakes and the metrics as they are now.
pub(crate) struct Sources<'a> {
    pub seed: arc_sim::Seed,
    pub plug: &'static str,
    pub recorder: &'a arc_sim::record::Recorder,
    pub apiserver: &'a arc_sim::apiserver::FakeApiServer,
    pub github: &'a arc_sim::github::FakeGitHub,
    pub metrics: &'a arc_controller::runtime::metrics::Metrics,
    pub listener_metrics: &'a arc_controller::runtime::metrics::Metrics,
}

impl Sources<'_> {
    /// The record as it stands at `end_ms`: every kept event and the fakes' state now, no objects (no
    /// end state), no restarts (the caller that counts them sets them).
    pub(crate) fn record(&self, end_ms: u64, workload_end_ms: u64, submitted_jobs: Vec<i64>) -> RunRecord {
        RunRecord {
            seed: self.seed,
            plug: self.plug,
            settled_at_ms: None,
            answered_at_ms: None,
            end_ms,
            workload_end_ms,
            trace: self.recorder.trace().clone(),
            events: self.recorder.events(),
            api_requests: self.apiserver.request_counts(),
            jobs: self.github.jobs(),
            runners: self.github.runners(),
            sessions: self.github.sessions(),
            metrics: self.metrics.snapshot(),
            listener_metrics: self.listener_metrics.snapshot(),
            objects: BTreeMap::new(),
            submitted_jobs,
            controller_restarts: 0,
            restarts_mid_reconcile: 0,
            by_type: EventsByType::default(),
            derived: Derived::default(),
        }
    }
}
