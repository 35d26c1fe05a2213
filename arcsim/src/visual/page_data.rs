//! [`Timeline`]: the data the page embeds — a run's lanes, events (columns, to stay small with tens
//! of thousands), arrows, phase bands, marks, and each violation with its window, its subjects and the
//! events its oracle used. It serialises to the JSON the page reads.

use std::collections::BTreeMap;

use serde::Serialize;

use super::bands::Segment;
use super::lanes::Lane;
use super::placement::Kind;

/// The whole page's data.
#[derive(Debug, Serialize)]
pub struct Timeline {
    /// What run this is.
    pub meta: Meta,
    /// Event kinds, by index.
    pub kinds: Vec<Kind>,
    /// Lanes, top to bottom.
    pub lanes: Vec<Lane>,
    /// Subjects events touch (`pod ns/x`, `runner 3`), by index.
    pub subjects: Vec<String>,
    /// The events, in record order.
    pub events: Events,
    /// Arrows between lanes.
    pub arrows: Arrows,
    /// Phase bands of objects.
    pub bands: Vec<Band>,
    /// Faults, restarts, disruptions and probes, marked across the lanes.
    pub marks: Vec<Mark>,
    /// What the oracles found.
    pub violations: Vec<ViolationView>,
}

/// The run.
#[derive(Debug, Serialize)]
pub struct Meta {
    /// Scenario.
    pub scenario: String,
    /// Variant.
    pub variant: String,
    /// Seed.
    pub seed: String,
    /// `PASS` or `FAIL`.
    pub verdict: &'static str,
    /// Sim ms at the end.
    pub end_ms: u64,
    /// The trace hash.
    pub trace_hash: String,
    /// The command that replays the run.
    pub replay: String,
    /// Probes that fired, with counts.
    pub probes: BTreeMap<&'static str, u32>,
    /// Events whose bodies the page left out (`body_budget`).
    pub bodies_left_out: usize,
}

/// Events as columns: entry `i` of each is event `i`.
#[derive(Debug, Default, Serialize)]
pub struct Events {
    /// Sim ms.
    pub t: Vec<u64>,
    /// Sequence number in the run.
    pub seq: Vec<u64>,
    /// Lane index.
    pub lane: Vec<usize>,
    /// Kind index.
    pub kind: Vec<u8>,
    /// One-line label.
    pub label: Vec<String>,
    /// Subject indexes.
    pub subj: Vec<Vec<usize>>,
    /// What a click shows (JSON text).
    pub body: Vec<String>,
}

/// Arrows as columns.
#[derive(Debug, Default, Serialize)]
pub struct Arrows {
    /// The event that draws it.
    pub event: Vec<usize>,
    /// Start lane.
    pub from_lane: Vec<usize>,
    /// Start sim ms.
    pub from_t: Vec<u64>,
    /// End lane.
    pub to_lane: Vec<usize>,
    /// End sim ms.
    pub to_t: Vec<u64>,
}

/// One object's phase band.
#[derive(Debug, Serialize)]
pub struct Band {
    /// Its lane.
    pub lane: usize,
    /// Its committed versions.
    pub segments: Vec<Segment>,
}

/// Something marked across all lanes.
#[derive(Debug, Serialize)]
pub struct Mark {
    /// Sim ms.
    pub t: u64,
    /// `fault`, `world` or `probe`.
    pub kind: &'static str,
    /// What.
    pub label: String,
}

/// A violation with its evidence, in the page's indexes.
#[derive(Debug, Serialize)]
pub struct ViolationView {
    /// The oracle.
    pub oracle: &'static str,
    /// Sim ms.
    pub at_ms: u64,
    /// What is wrong.
    pub message: String,
    /// The objects as the oracle named them.
    pub objects: Vec<String>,
    /// The window's start.
    pub from_ms: u64,
    /// The window's end.
    pub to_ms: u64,
    /// Its subjects' lanes.
    pub lanes: Vec<usize>,
    /// Its subjects (indexes into `subjects`).
    pub subjects: Vec<usize>,
    /// The events its oracle used (event indexes).
    pub cited: Vec<usize>,
}
