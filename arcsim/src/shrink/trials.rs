//! The shrinker's reruns: each candidate capsule run once (a candidate seen before is answered from
//! memory, free), judged by whether the capsule's expected oracle still fails, within a budget of
//! reruns. A candidate whose world cannot be built (a weakened rule the fakes refuse) counts as
//! passing: it is not kept.

use std::collections::BTreeMap;

use arc_sim::TraceMode;

use super::ddmin::Outcome;
use crate::capsule::Capsule;
use arc_scenarios::verdict::Verdict;

/// What a rerun showed: whether the expected oracle failed, and how long the run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The expected oracle failed.
    pub fails: bool,
    /// Simulated milliseconds the run took.
    pub sim_ms: u64,
    /// Trace lines the run wrote.
    pub trace_lines: u64,
    /// Sim ms of the expected oracle's first violation, when it failed.
    pub failed_at_ms: Option<u64>,
}

impl Seen {
    /// What `capsule`'s run, judged `verdict`, showed.
    pub fn of(capsule: &Capsule, verdict: &Verdict) -> Seen {
        let failures = verdict.violations.iter().filter(|v| v.oracle == capsule.expected_oracle);
        Seen {
            fails: capsule.fails(verdict),
            sim_ms: verdict.sim_ms,
            trace_lines: verdict.trace_lines,
            failed_at_ms: failures.map(|v| v.at_ms).min(),
        }
    }
}

/// Judges one candidate: runs it and says what its run showed.
type Judge = Box<dyn FnMut(&Capsule) -> Seen>;

/// Told each rerun as it starts: the reruns so far (this one included) and the budget.
type Progress = Box<dyn FnMut(u32, u32)>;

/// Reruns so far, against a budget and a lower cap a stage may set.
pub struct Trials {
    budget: u32,
    cap: u32,
    reruns: u32,
    seen: BTreeMap<String, Seen>,
    judge: Judge,
    progress: Option<Progress>,
}

impl Trials {
    /// No reruns yet, at most `budget`; each candidate is run in the simulation.
    pub fn new(budget: u32) -> Trials {
        Trials::judged_by(budget, run)
    }

    /// No reruns yet, at most `budget`; each candidate judged by `judge` instead of a run (the
    /// shrinker's own tests, which check its stages on failures of a known shape).
    pub fn judged_by(budget: u32, judge: impl FnMut(&Capsule) -> Seen + 'static) -> Trials {
        Trials {
            budget,
            cap: budget,
            reruns: 0,
            seen: BTreeMap::new(),
            judge: Box::new(judge),
            progress: None,
        }
    }

    /// These trials, telling `progress` of each rerun as it starts.
    pub fn reporting(mut self, progress: impl FnMut(u32, u32) + 'static) -> Trials {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Reruns spent.
    pub fn reruns(&self) -> u32 {
        self.reruns
    }

    /// The budget.
    pub fn budget(&self) -> u32 {
        self.budget
    }

    /// Lets the next tests spend reruns only until `reruns` are spent in all (at most the budget),
    /// keeping the rest for later stages.
    pub fn cap_at(&mut self, reruns: u32) {
        self.cap = reruns.min(self.budget);
    }

    /// Reruns the current cap still allows.
    pub fn remaining(&self) -> u32 {
        self.cap.saturating_sub(self.reruns)
    }

    /// Remembers what a run of `capsule` made outside the budget showed.
    pub fn remember(&mut self, capsule: &Capsule, seen: Seen) {
        self.seen.insert(capsule.to_json(), seen);
    }

    /// Whether `candidate` still fails its expected oracle.
    pub fn test(&mut self, candidate: &Capsule) -> Outcome {
        match self.seen(candidate) {
            None => Outcome::OutOfBudget,
            Some(seen) if seen.fails => Outcome::Fails,
            Some(_) => Outcome::Passes,
        }
    }

    /// What `candidate`'s run showed, run now unless seen before; `None` when the cap is reached.
    pub fn seen(&mut self, candidate: &Capsule) -> Option<Seen> {
        let key = candidate.to_json();
        if let Some(seen) = self.seen.get(&key) {
            return Some(*seen);
        }
        if self.reruns >= self.cap {
            return None;
        }
        self.reruns += 1;
        if let Some(progress) = &mut self.progress {
            progress(self.reruns, self.budget);
        }
        let seen = (self.judge)(candidate);
        self.seen.insert(key, seen);
        Some(seen)
    }
}

/// What `candidate`'s run showed; a world that cannot be built passes.
fn run(candidate: &Capsule) -> Seen {
    match candidate.run(TraceMode::HashOnly, None) {
        Ok((verdict, _)) => Seen::of(candidate, &verdict),
        Err(_) => Seen { fails: false, sim_ms: 0, trace_lines: 0, failed_at_ms: None },
    }
}
