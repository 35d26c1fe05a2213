//! A scenario: a seeded world configuration (which controller, which objects, which faults, which
//! disruptions) plus the oracles that judge its runs and the coverage probes it exists to hit.

use arc_controller::Families;
use arc_sim::Seed;
use arc_sim::world::{Settled, WorldConfig};

use crate::oracles::Oracle;
use crate::probes::ProbeGoal;
use crate::variant::Variant;

/// What [`Scenario::world`] returns: the configuration, the controller, and the settle condition.
pub struct WorldPlan {
    /// The world's data.
    pub config: WorldConfig,
    /// The controller under test: which families run, with which settings.
    pub families: Families,
    /// When the world counts as settled.
    pub settled: Settled,
}

/// A second run of the same seed with one thing changed (an optimisation switched off), judged
/// against the first by comparing the two records.
pub struct Twin {
    /// What the twin changes, for violations (`predicates-off`).
    pub name: &'static str,
    /// The twin's world.
    pub plan: WorldPlan,
    /// The comparisons.
    pub oracles: Vec<&'static dyn crate::oracles::TwinOracle>,
}

/// A named, seeded world and its judges.
pub trait Scenario: Send + Sync {
    /// The command-line name.
    fn name(&self) -> &'static str;

    /// One line on what the scenario exercises.
    fn describe(&self) -> &'static str;

    /// The world for `seed` with the controller built as `variant`.
    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan;

    /// The oracles that judge every run.
    fn oracles(&self) -> Vec<&'static dyn Oracle>;

    /// Twins to run beside each seed (equivalence checks); none by default.
    fn twins(&self, _seed: Seed, _variant: Variant) -> Vec<Twin> {
        Vec::new()
    }

    /// The coverage probes this scenario exists to hit (or, for a control world, to stay quiet on),
    /// with their bounds.
    fn probe_goals(&self) -> &'static [ProbeGoal] {
        &[]
    }

    /// This race scenario's control world: the same world without the race's ingredient.
    fn control(&self) -> Option<&'static dyn Scenario> {
        None
    }
}
