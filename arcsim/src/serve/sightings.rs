//! [`Sightings`]: the violations a served world has shown so far. After each step `arcsim serve`
//! judges the record so far ([`SteppedWorld::record_so_far`]) with the scenario's oracles that can
//! judge a run before its end ([`Oracle::judges_so_far`]: what they find on a cut, the whole run
//! finds too) and reports what is new; the end-of-run oracles speak when the run ends.

use arc_controller::Profile;
use arc_world::{RunRecord, SteppedWorld};

use arc_judging::oracles::Oracle;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::verdict::Violation;

/// The so-far oracles of a scenario and the violations they have reported.
pub struct Sightings {
    judges: Vec<&'static dyn Oracle>,
    seen: Vec<Violation>,
}

impl Sightings {
    /// The oracles of `scenario` that judge a record so far and apply to arcsim's controller (the
    /// build `serve` runs).
    pub fn of(scenario: &dyn Scenario) -> Sightings {
        let promised = Profile::Arcsim.switches();
        let judges =
            scenario.oracles().into_iter().filter(|o| o.judges_so_far() && o.applies(&promised)).collect();
        Sightings { judges, seen: Vec::new() }
    }

    /// The violations `world`'s record so far shows that were not reported before, in time order,
    /// with that record (for their stories).
    pub fn look(&mut self, world: &SteppedWorld) -> (Vec<Violation>, RunRecord) {
        let record = world.record_so_far();
        let mut found: Vec<Violation> = self.judges.iter().flat_map(|o| o.check(&record)).collect();
        found.sort_by(|a, b| (a.at_ms, a.oracle).cmp(&(b.at_ms, b.oracle)));
        found.retain(|v| !self.seen.contains(v));
        self.seen.extend(found.iter().cloned());
        (found, record)
    }

    /// Whether `world`'s record so far shows a violation (reported or not), without reporting it.
    pub fn shows_any(&self, world: &SteppedWorld) -> bool {
        let record = world.record_so_far();
        self.judges.iter().any(|o| !o.check(&record).is_empty())
    }

    /// Every violation reported so far, in the order they were.
    pub fn seen(&self) -> &[Violation] {
        &self.seen
    }

    /// Forgets what was reported (the world was started again).
    pub fn clear(&mut self) {
        self.seen.clear();
    }
}
