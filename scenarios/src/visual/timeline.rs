//! [`Timeline`]: a run laid out for the page — lanes, events (columns, to stay small with tens of
//! thousands), arrows, phase bands, marks, and each violation with its window, its subjects and the
//! events its oracle used. It serialises to the JSON the page embeds.

use std::collections::BTreeMap;

use arc_sim::apiserver::Committed;
use arc_world::RunRecord;
use serde::Serialize;

use super::bands::{Bands, Segment, band_lane};
use super::body_budget::{BODY_BUDGET_BYTES, fit_bodies};
use super::lanes::{Lane, Lanes, Section};
use super::placement::{ArrowSpec, CommitTimes, Kind, LaneRef, place, runner_lane};
use super::probe_times::probe_marks;
use crate::story::involves::touched;
use crate::story::{Evidence, Subject, evidence_of};
use crate::verdict::{Verdict, Violation};

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

/// Lays out `run`, judged as `verdict`.
pub fn build(run: &RunRecord, verdict: &Verdict) -> Timeline {
    let evidence: Vec<Evidence> = verdict.violations.iter().map(|v| evidence_of(run, v)).collect();
    let mut b = Builder::default();
    let commits: CommitTimes =
        run.events.iter().filter_map(|e| e.get::<Committed>().map(|c| (c.change.rv, e.at_ms))).collect();
    for event in &run.events {
        b.add(event, &commits);
    }
    b.bands.close(run.end_ms);
    let band_lanes: Vec<(usize, Vec<Segment>)> = std::mem::take(&mut b.bands.by_lane)
        .into_iter()
        .map(|(name, (seq, segments))| (b.lanes.id(&name, Section::Objects, seq), segments))
        .collect();
    for e in &evidence {
        lift_involved(&mut b.lanes, e);
    }
    let (lanes, remap) = std::mem::take(&mut b.lanes).finish();
    b.remap(&remap);
    let violations: Vec<ViolationView> =
        verdict.violations.iter().zip(&evidence).map(|(v, e)| b.view(v, e, &lanes)).collect();
    let bodies_left_out = fit_bodies(&mut b.events, &violations, BODY_BUDGET_BYTES);
    Timeline {
        meta: Meta { bodies_left_out, ..meta(run, verdict) },
        kinds: Kind::ALL.to_vec(),
        lanes,
        subjects: b.subjects.names,
        events: b.events,
        arrows: b.arrows,
        bands: band_lanes.into_iter().map(|(lane, segments)| Band { lane: remap[lane], segments }).collect(),
        marks: b.marks.into_iter().chain(probes(run)).collect(),
        violations,
    }
}

fn meta(run: &RunRecord, verdict: &Verdict) -> Meta {
    Meta {
        scenario: verdict.scenario.to_string(),
        variant: verdict.variant.to_string(),
        seed: verdict.seed.to_string(),
        verdict: if verdict.passed() { "PASS" } else { "FAIL" },
        end_ms: run.end_ms,
        trace_hash: format!("{:016x}", verdict.trace_hash),
        replay: verdict.replay_line(),
        probes: verdict.probes.clone(),
        bodies_left_out: 0,
    }
}

fn probes(run: &RunRecord) -> impl Iterator<Item = Mark> {
    probe_marks(run).into_iter().map(|m| Mark {
        t: m.at_ms,
        kind: "probe",
        label: format!("probe {} #{}", m.probe, m.nth),
    })
}

/// Moves the lanes of what a violation is about into the Involved section.
fn lift_involved(lanes: &mut Lanes, evidence: &Evidence) {
    for subject in &evidence.subjects {
        let name = match subject {
            Subject::Runner(id) => runner_lane(*id).0,
            Subject::Object { resource, key } => band_lane(resource, key, 0).0,
            Subject::Job(_) => continue,
        };
        lanes.lift(&name, Section::Involved);
    }
}

/// Interned subject names.
#[derive(Debug, Default)]
struct SubjectNames {
    names: Vec<String>,
    index: BTreeMap<Subject, usize>,
}

impl SubjectNames {
    fn id(&mut self, subject: &Subject) -> usize {
        if let Some(i) = self.index.get(subject) {
            return *i;
        }
        self.names.push(subject.label());
        self.index.insert(subject.clone(), self.names.len() - 1);
        self.names.len() - 1
    }
}

#[derive(Default)]
struct Builder {
    lanes: Lanes,
    events: Events,
    arrows: Arrows,
    bands: Bands,
    marks: Vec<Mark>,
    subjects: SubjectNames,
    index_of_seq: BTreeMap<u64, usize>,
}

impl Builder {
    fn lane(&mut self, lane: &LaneRef) -> usize {
        self.lanes.id(&lane.0, lane.1, lane.2)
    }

    fn add(&mut self, event: &arc_sim::record::Event, commits: &CommitTimes) {
        let Some(placed) = place(event, commits) else { return };
        let index = self.events.t.len();
        self.index_of_seq.insert(event.seq, index);
        let lane = self.lane(&placed.lane);
        let subj = touched(event).iter().map(|s| self.subjects.id(s)).collect();
        if let Some(arrow) = &placed.arrow {
            self.arrow(index, arrow);
        }
        if placed.marked {
            let kind = if placed.kind == Kind::Fault { "fault" } else { "world" };
            self.marks.push(Mark { t: event.at_ms, kind, label: placed.label.clone() });
        }
        self.bands.add(event, index);
        let e = &mut self.events;
        e.t.push(event.at_ms);
        e.seq.push(event.seq);
        e.lane.push(lane);
        e.kind.push(placed.kind.index());
        e.label.push(placed.label);
        e.subj.push(subj);
        e.body.push(placed.body.to_string());
    }

    fn arrow(&mut self, index: usize, arrow: &ArrowSpec) {
        let from = self.lane(&arrow.from.0);
        let to = self.lane(&arrow.to.0);
        let a = &mut self.arrows;
        a.event.push(index);
        a.from_lane.push(from);
        a.from_t.push(arrow.from.1);
        a.to_lane.push(to);
        a.to_t.push(arrow.to.1);
    }

    fn remap(&mut self, remap: &[usize]) {
        for lane in
            self.events.lane.iter_mut().chain(&mut self.arrows.from_lane).chain(&mut self.arrows.to_lane)
        {
            *lane = remap[*lane];
        }
    }

    fn view(&mut self, v: &Violation, e: &Evidence, lanes: &[Lane]) -> ViolationView {
        let labels: Vec<String> = e.subjects.iter().map(Subject::label).collect();
        ViolationView {
            oracle: v.oracle,
            at_ms: v.at_ms,
            message: v.message.clone(),
            objects: v.objects.clone(),
            from_ms: e.from_ms,
            to_ms: e.to_ms,
            lanes: lanes
                .iter()
                .enumerate()
                .filter(|(_, l)| labels.contains(&l.name))
                .map(|(i, _)| i)
                .collect(),
            subjects: e.subjects.iter().map(|s| self.subjects.id(s)).collect(),
            cited: e.cited.iter().filter_map(|seq| self.index_of_seq.get(seq).copied()).collect(),
        }
    }
}
