//! Lays a run out for the page: [`build`] turns a run and its verdict into the [`Timeline`] of
//! [`super::page_data`] — lanes, events, arrows, phase bands, marks, and each violation with its
//! window, its subjects and the events its oracle used.

use std::collections::BTreeMap;

use arc_sim::apiserver::Committed;
use arc_world::RunRecord;

use super::bands::{Bands, Segment, band_lane};
use super::body_budget::{BODY_BUDGET_BYTES, fit_bodies};
use super::lanes::{Lane, Lanes, Section};
pub use super::page_data::{Arrows, Band, Events, Mark, Meta, Timeline, ViolationView};
use super::placement::{ArrowSpec, CommitTimes, Kind, LaneRef, place, runner_lane};
use super::probe_times::probe_marks;
use crate::failure_story::evidence_of;
use arc_judging::story::involves::touched;
use arc_judging::story::{Evidence, Subject};
use arc_scenarios::verdict::{Verdict, Violation};

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
