//! `kubectl-delete-runners`: an operator clears a scale set's runners by hand, the way people do when
//! runners look stuck: `kubectl delete ephemeralrunners --all -n arc-runners`, run again a second or
//! so later because the first did not seem to take (or a cleanup script looping), while the runner
//! set re-creates what was deleted and jobs keep arriving. The repeated command reaches runners the
//! runner set created moments before, some in the pass that registers them at GitHub: the window of
//! #4580's finalizer short circuit, in which a runner created without finalizers has only the main
//! one and its deletion skips RemoveRunner.
//!
//! The world deletes as a user does, through the API, knowing nothing of the controller.

use arc_sim::Seed;
use arc_world::Disruption;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::control::Control;
use super::objects::RUNNER_NAMESPACE;
use super::standard::{scale_set_oracles, scale_set_world};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::Oracle;
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

/// The hand-cleanup world.
pub struct KubectlDeleteRunners;

/// Idle runners kept, so every cleanup finds runners to delete and the runner set re-creates them.
const MIN_RUNNERS: u32 = 3;

/// Cleanup sessions start in this span of the 10-minute workload (sim ms).
const SESSIONS_FROM_MS: u64 = 30_000;
const SESSIONS_UNTIL_MS: u64 = 540_000;

/// The world: the standard workload on a runner set of 3 to 10 runners, and 3 to 5 cleanup sessions
/// at seeded times, each 2 to 4 `delete --all` commands 0.3 to 2 s apart.
pub fn kubectl_delete_world(seed: Seed, variant: Variant) -> WorldPlan {
    cleanup_world(seed, variant, 2..=4)
}

fn cleanup_world(seed: Seed, variant: Variant, commands: std::ops::RangeInclusive<u32>) -> WorldPlan {
    let mut plan = scale_set_world(seed, variant, MIN_RUNNERS, 10);
    let mut rng = seed.named_rng("scenario/kubectl-delete-runners");
    plan.config.disruptions = cleanup_sessions(&mut rng, commands);
    plan
}

/// 3 to 5 sessions at seeded times; each `commands` deletes 0.3 to 2 s apart.
fn cleanup_sessions(rng: &mut ChaCha8Rng, commands: std::ops::RangeInclusive<u32>) -> Vec<Disruption> {
    let sessions = rng.random_range(3..=5);
    let mut out = Vec::new();
    for _ in 0..sessions {
        let mut at_ms = rng.random_range(SESSIONS_FROM_MS..SESSIONS_UNTIL_MS);
        for _ in 0..rng.random_range(commands.clone()) {
            out.push(Disruption::DeleteAll {
                at_ms,
                plural: "ephemeralrunners".into(),
                namespace: RUNNER_NAMESPACE.into(),
            });
            at_ms += rng.random_range(300..2_000);
        }
    }
    out
}

impl Scenario for KubectlDeleteRunners {
    fn name(&self) -> &'static str {
        "kubectl-delete-runners"
    }

    fn describe(&self) -> &'static str {
        "an operator runs `kubectl delete ephemeralrunners --all` 2-4 times a second or so apart while the runner set re-creates them"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        kubectl_delete_world(seed, variant)
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        scale_set_oracles()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const GOALS: &[ProbeGoal] = &[ProbeGoal::floor(
            &probes::RUNNER_DELETED_WHILE_REGISTERING,
            Rate::measured(61, 100, 2_000_000),
        )];
        GOALS
    }

    fn control(&self) -> Option<&'static dyn Scenario> {
        Some(&CONTROL)
    }
}

/// The same cleanups without the repetition: one `delete --all` per session, so the command meets
/// only runners that were there before it, not ones the runner set re-created moments before.
pub static CONTROL: Control = Control {
    name: "kubectl-delete-runners-control",
    describe: "the same hand cleanups, one `delete --all` each: nothing re-created is deleted at once",
    race: &KubectlDeleteRunners,
    strip: |seed, variant| cleanup_world(seed, variant, 1..=1),
    goals: &[ProbeGoal::ceiling(
        &probes::RUNNER_DELETED_WHILE_REGISTERING,
        Rate::measured(4, 100, 2_000_000),
    )],
};
