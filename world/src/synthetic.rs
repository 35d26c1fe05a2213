//! [`SyntheticRun`]: a run record written by hand, for unit tests of oracles and probes. Each judge is
//! shown to fail on a record that breaks its invariant and to pass on one that keeps it, without
//! running a world: the record holds exactly the events the test writes, stamped at the times it
//! gives, in the order it gives them.

use arc_sim::json_at::At;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::RunRecord;
use arc_sim::apiserver::store::StoreKey;
use arc_sim::apiserver::{Change, Committed, EventType};
use arc_sim::clock::SimClock;
use arc_sim::github::{Job, Runner, Session};
use arc_sim::record::{Event, Observed};
use arc_sim::seed::Seed;
use arc_sim::trace::{Trace, TraceMode};

/// A hand-written run record under construction.
#[derive(Debug)]
pub struct SyntheticRun {
    record: RunRecord,
    next_rv: u64,
}

impl Default for SyntheticRun {
    fn default() -> Self {
        Self::new()
    }
}

impl SyntheticRun {
    /// An empty record of seed 1 that ended at 0 ms and never settled.
    pub fn new() -> Self {
        let record = RunRecord {
            seed: Seed(1),
            plug: "synthetic",
            settled_at_ms: None,
            answered_at_ms: None,
            end_ms: 0,
            workload_end_ms: 0,
            trace: Trace::new(SimClock::start(), TraceMode::HashOnly),
            events: Vec::new(),
            api_requests: BTreeMap::new(),
            jobs: Vec::new(),
            runners: Vec::new(),
            sessions: Vec::new(),
            metrics: BTreeMap::new(),
            listener_metrics: BTreeMap::new(),
            objects: BTreeMap::new(),
            submitted_jobs: Vec::new(),
            controller_restarts: 0,
            restarts_mid_reconcile: 0,
            by_type: crate::events_by_type::EventsByType::default(),
            derived: crate::derived::Derived::default(),
        };
        SyntheticRun { record, next_rv: 1 }
    }

    /// Adds `event` at `at_ms` (after every event added before it). The run's end moves to `at_ms` if
    /// that is later.
    #[must_use]
    pub fn event<T: Observed>(mut self, at_ms: u64, event: T) -> Self {
        let seq = self.record.events.len() as u64;
        self.record.events.push(Event { seq, at_ms, body: Arc::new(event) });
        self.record.end_ms = self.record.end_ms.max(at_ms);
        self
    }

    /// Adds a committed change of `object` (its namespace and name taken from its metadata) to
    /// `plural` at `at_ms`, with the next resourceVersion.
    #[must_use]
    pub fn committed(mut self, at_ms: u64, plural: &str, kind: EventType, mut object: Value) -> Self {
        let rv = self.next_rv;
        self.next_rv += 1;
        object["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        let field = |f: &str| object.at(f).and_then(Value::as_str).unwrap_or("").to_string();
        let key =
            StoreKey { resource: 0, namespace: field("/metadata/namespace"), name: field("/metadata/name") };
        let change = Change { rv, kind, key, object: Arc::new(object), old: None, wire: Default::default() };
        self.event(at_ms, Committed { resource: plural.to_string(), change: Arc::new(change) })
    }

    /// Sets the jobs as GitHub holds them at the end.
    #[must_use]
    pub fn jobs(mut self, jobs: Vec<Job>) -> Self {
        self.record.jobs = jobs;
        self
    }

    /// Sets the runners as GitHub holds them at the end.
    #[must_use]
    pub fn runners(mut self, runners: Vec<Runner>) -> Self {
        self.record.runners = runners;
        self
    }

    /// Sets the objects of `plural` left at the end.
    #[must_use]
    pub fn objects(mut self, plural: &str, objects: Vec<Value>) -> Self {
        self.record.objects.insert(plural.to_string(), objects);
        self
    }

    /// Sets the message sessions open at the end.
    #[must_use]
    pub fn sessions(mut self, sessions: Vec<Session>) -> Self {
        self.record.sessions = sessions;
        self
    }

    /// The world settled at `at_ms`.
    #[must_use]
    pub fn settled_at(mut self, at_ms: u64) -> Self {
        self.record.settled_at_ms = Some(at_ms);
        self.record.end_ms = self.record.end_ms.max(at_ms);
        self
    }

    /// The run ended at `at_ms`.
    #[must_use]
    pub fn ended_at(mut self, at_ms: u64) -> Self {
        self.record.end_ms = at_ms;
        self
    }

    /// Gives direct access to the record for anything the builder does not cover.
    #[must_use]
    pub fn with(mut self, change: impl FnOnce(&mut RunRecord)) -> Self {
        change(&mut self.record);
        self
    }

    /// The record.
    pub fn build(self) -> RunRecord {
        self.record
    }
}
