//! A scenario: a seeded world configuration (which controller, which objects, which faults, which
//! disruptions) plus the oracles that judge its runs and the coverage probes it exists to hit.
//!
//! A scenario describes its world for a variant of the default (`arcsim`) profile ([`Scenario::world`]);
//! [`Scenario::world_for`] is the world for any [`Build`] (a variant of any profile), by default the
//! same world with the build's switches. A scenario whose world depends on the controller's
//! mechanisms (how a runner-spec change is expressed, say) overrides it.

use arc_controller::Families;
use arc_sim::Seed;
use arc_world::{Settled, WorldConfig};

use crate::variant::{Build, Variant};
use arc_judging::oracles::Oracle;
use arc_judging::probes::ProbeGoal;

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
    pub oracles: Vec<&'static dyn arc_judging::oracles::TwinOracle>,
}

/// A named, seeded world and its judges.
pub trait Scenario: Send + Sync {
    /// The command-line name.
    fn name(&self) -> &'static str;

    /// One line on what the scenario exercises.
    fn describe(&self) -> &'static str;

    /// The world for `seed` with the controller built as `variant` of the `arcsim` profile.
    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan;

    /// The world for `seed` with the controller built as `build`: by default [`Scenario::world`]
    /// with the build's switches.
    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        let mut plan = self.world(seed, build.variant);
        plan.config.switches = build.switches();
        plan
    }

    /// The oracles that judge every run.
    fn oracles(&self) -> Vec<&'static dyn Oracle>;

    /// Twins to run beside each seed (equivalence checks); none by default.
    fn twins(&self, _seed: Seed, _variant: Variant) -> Vec<Twin> {
        Vec::new()
    }

    /// The twins for `build`: by default [`Scenario::twins`], each with the build's switches and the
    /// twin's own changes to them kept.
    fn twins_for(&self, seed: Seed, build: Build) -> Vec<Twin> {
        let base = build.variant.switches(arc_controller::Profile::Arcsim);
        let mut twins = self.twins(seed, build.variant);
        for twin in &mut twins {
            twin.plan.config.switches = rebased(twin.plan.config.switches, base, build.switches());
        }
        twins
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

    /// The network faults this world adds when it runs on the turmoil network (`--network turmoil`);
    /// none by default.
    fn network_faults(&self, _seed: Seed) -> Vec<arc_sim::net::NetFault> {
        Vec::new()
    }
}

/// `onto` with every switch where `changed` differs from `base` set as `changed` has it.
pub fn rebased(
    changed: arc_controller::Switches,
    base: arc_controller::Switches,
    onto: arc_controller::Switches,
) -> arc_controller::Switches {
    let mut out = onto;
    for (now, was) in changed.values().into_iter().zip(base.values()) {
        if now.on != was.on {
            out.set(&format!("{}.{}", now.group, now.name), now.on).expect("a listed switch");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use arc_controller::{Profile, Switches};

    use super::*;

    #[test]
    fn a_twin_keeps_its_own_change_on_top_of_the_build_profile() {
        let base = Switches::default();
        let mut changed = base;
        changed.optimisations.predicates = false;
        let onto = Profile::Arc0150.switches();
        let out = rebased(changed, base, onto);
        assert!(!out.optimisations.predicates);
        assert_eq!(Switches { optimisations: onto.optimisations, ..out }, onto);
        assert_eq!(rebased(base, base, onto), onto);
    }
}
