//! Phase bands: for each EphemeralRunner, pod and legacy Runner, its phase over time as the API
//! server committed it (one segment per committed version, hatched once deletion has begun, ending at
//! its deletion).

use std::collections::BTreeMap;

use arc_sim::apiserver::{Committed, EventType};
use arc_sim::record::Event;
use serde::Serialize;

use super::lanes::Section;
use super::placement::LaneRef;
use arc_judging::story::subject::singular_of;
use arc_judging::view::{is_deleting, str_at};

/// The kinds that get a band.
pub const BANDED: [&str; 3] = ["ephemeralrunners", "pods", "runners"];

/// One committed version of an object, drawn from its commit to the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Sim ms of the commit.
    pub from: u64,
    /// Sim ms of the next commit (or the end of the run).
    pub to: u64,
    /// Its phase (`Pending` when none is set).
    pub phase: String,
    /// Whether deletion had begun.
    pub deleting: bool,
    /// The index of the commit among the timeline's events (its body is the object).
    pub event: usize,
}

/// The band lane of an object.
pub fn band_lane(resource: &str, key: &str, first_seq: u64) -> LaneRef {
    (format!("{} {key}", singular_of(resource)), Section::Objects, first_seq)
}

/// Builds bands from commits, keyed by lane name.
#[derive(Debug, Default)]
pub struct Bands {
    /// Lane name → (first commit's seq, segments).
    pub by_lane: BTreeMap<String, (u64, Vec<Segment>)>,
}

impl Bands {
    /// Adds `event` (the timeline's event number `index`) if it is a commit of a banded kind.
    pub fn add(&mut self, event: &Event, index: usize) {
        let Some(c) = event.get::<Committed>() else { return };
        if !BANDED.contains(&c.resource.as_str()) {
            return;
        }
        let (name, _, _) = band_lane(&c.resource, &c.change.key.display(), event.seq);
        let (_, segments) = self.by_lane.entry(name).or_insert((event.seq, Vec::new()));
        if let Some(last) = segments.last_mut().filter(|s| s.to == u64::MAX) {
            last.to = event.at_ms;
        }
        if c.change.kind == EventType::Deleted {
            return;
        }
        let object = &c.change.object;
        segments.push(Segment {
            from: event.at_ms,
            to: u64::MAX,
            phase: str_at(object, "/status/phase").unwrap_or("Pending").to_string(),
            deleting: is_deleting(object),
            event: index,
        });
    }

    /// Closes segments still open at the end of the run.
    pub fn close(&mut self, end_ms: u64) {
        for (_, segments) in self.by_lane.values_mut() {
            for s in segments.iter_mut().filter(|s| s.to == u64::MAX) {
                s.to = end_ms;
            }
        }
    }
}
