//! Control worlds: each race scenario's world without the race's ingredient, in which its probes must
//! stay quiet. A probe that fires as often without the ingredient as with it does not see the race it
//! names. Each control runs the race scenario's oracles and declares ceilings on its probes, measured
//! as its race world's floors are (see [`arc_judging::rates`]).

use arc_sim::Seed;

use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::Oracle;
use arc_judging::probes::ProbeGoal;

/// A race scenario's world with one ingredient taken out.
pub struct Control {
    /// The command-line name (`<race>-control`).
    pub name: &'static str,
    /// What is taken out.
    pub describe: &'static str,
    /// The race scenario.
    pub race: &'static dyn Scenario,
    /// Takes the ingredient out of the race world.
    pub strip: fn(Seed, Variant) -> WorldPlan,
    /// The race's probes, each with its ceiling here.
    pub goals: &'static [ProbeGoal],
}

impl Scenario for Control {
    fn name(&self) -> &'static str {
        self.name
    }

    fn describe(&self) -> &'static str {
        self.describe
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        (self.strip)(seed, variant)
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        self.race.oracles()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        self.goals
    }
}
