//! `assign-during-delete` (race 3, ARC-MODEL §8.3, scale-set form): runners are scaled down and
//! recreated while short jobs keep arriving, so GitHub assigns jobs to runners at the moment the
//! controller removes them. RemoveRunner first settles each race one way: 204 and the runner can never
//! get a job, or 400 JobStillRunning and the runner is kept. Listener messages are delayed at times,
//! so a JobStarted can reach the listener after its runner finished and is being deleted (§5.2).

use arc_sim::Seed;
use arc_sim::faults::{GitHubFault, GitHubFaultAction};
use arc_world::Disruption;
use rand::Rng;

use super::objects::{RUNNER_NAMESPACE, RUNNER_SET};
use super::refresh::{refreshes_in_controller_form, runner_refresh};

use super::control::Control;
use super::standard::{scale_set_oracles, scale_set_world};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::{Build, Variant};
use arc_judging::oracles::{self, Oracle};
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

/// Race 3.
pub struct AssignDuringDelete;

/// The world of race 3: runner refreshes (see `runner_refreshes`); min 2 idle runners; bursts of short
/// jobs, a third of them canceled soon after queueing (so runners created for them are left idle and
/// scaled down); a 3 s long poll (so the listener's patch-0 "idle at min" state comes often); wide
/// assignment latency; slow listener polls and slow RemoveRunner answers (so a late JobStarted can meet
/// a runner whose deletion is still under way).
pub fn assign_during_delete_world(seed: Seed, variant: Variant) -> WorldPlan {
    let mut plan = race_world(seed, variant, 2);
    plan.config.disruptions = runner_refreshes(seed, 600_000);
    plan
}

/// Race 3's workload and GitHub timing with `min_runners` (of 8), without runner refreshes.
fn race_world(seed: Seed, variant: Variant, min_runners: u32) -> WorldPlan {
    let mut plan = scale_set_world(seed, variant, min_runners, 8);
    let workload = &mut plan.config.workload;
    workload.arrivals_per_minute = 12.0;
    workload.burst_probability = 0.3;
    workload.burst_size_min = 2;
    workload.burst_size_max = 5;
    workload.duration_ms_min = 500;
    workload.duration_ms_max = 30_000;
    workload.cancel_probability = 0.5;
    workload.cancel_delay_ms_min = 2_000;
    workload.cancel_delay_ms_max = 20_000;
    workload.horizon_ms = 600_000;
    let github = &mut plan.config.github;
    github.assignment_latency_ms_min = 0;
    github.assignment_latency_ms_max = 4_000;
    github.long_poll_timeout_ms = 2_000;
    plan.config.faults.github.extend([
        GitHubFault {
            operations: vec!["get-message".into()],
            probability: 0.5,
            window: None,
            action: GitHubFaultAction::Latency { min_ms: 1_000, max_ms: 6_000 },
        },
        GitHubFault {
            operations: vec!["remove-runner".into()],
            probability: 0.5,
            window: None,
            action: GitHubFaultAction::Latency { min_ms: 1_000, max_ms: 5_000 },
        },
    ]);
    plan
}

/// Runner refreshes at seeded times (30–90 s apart) until `until_ms`: each bumps the runner set's
/// `spec.actionableRevision`, as the ARS does when the runner spec changes, so the runner set removes
/// every idle runner (RemoveRunner first) and creates fresh ones while jobs keep arriving. A
/// controller without the revision step gets them in its own form ([`refreshes_in_controller_form`]).
fn runner_refreshes(seed: Seed, until_ms: u64) -> Vec<Disruption> {
    let mut rng = seed.rng(arc_sim::Component::Scenario);
    let mut at_ms = rng.random_range(20_000..60_000);
    let mut out = Vec::new();
    for revision in 1.. {
        if at_ms >= until_ms {
            break;
        }
        out.push(runner_refresh(at_ms, RUNNER_NAMESPACE, RUNNER_SET, revision));
        at_ms += rng.random_range(30_000..90_000);
    }
    out
}

impl Scenario for AssignDuringDelete {
    fn name(&self) -> &'static str {
        "assign-during-delete"
    }

    fn describe(&self) -> &'static str {
        "scale-down and recreation while short jobs arrive: RemoveRunner races job assignment (§8.3)"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        assign_during_delete_world(seed, variant)
    }

    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        let mut plan = assign_during_delete_world(seed, build.variant);
        plan.config.switches = build.switches();
        refreshes_in_controller_form(&mut plan);
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        let mut all = scale_set_oracles();
        all.extend([
            &oracles::deletion::NoBusyRunnerDeleted as &dyn Oracle,
            &oracles::deletion::NoRunningWhileDeleting,
            &oracles::deletion::FinalizersInOneWrite,
        ]);
        all
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const GOALS: &[ProbeGoal] = &[
            ProbeGoal::floor(&probes::REMOVE_RUNNER_LOST_TO_ASSIGNMENT, Rate::measured(100, 100, 2_000_000)),
            ProbeGoal::floor(&probes::IDLE_RUNNER_SCALED_DOWN, Rate::measured(93, 100, 2_000_000)),
            ProbeGoal::floor(&probes::ASSIGNMENT_LOST_TO_REMOVE_RUNNER, Rate::measured(100, 100, 2_000_000)),
            ProbeGoal::floor(
                &probes::JOB_ASSIGNED_WITHIN_1S_OF_POD_DELETE,
                Rate::measured(100, 100, 2_000_000),
            ),
        ];
        GOALS
    }

    fn control(&self) -> Option<&'static dyn Scenario> {
        Some(&CONTROL)
    }
}

/// Race 3 without its ingredient, as far as a scale set allows: nothing asks for a scale-down while
/// jobs arrive (min = max = 8 runners, no refreshes, no cancellations, no bursts, 2 jobs a minute
/// against 8 runners). The runner set still removes the odd runner it over-created while replacing
/// finished ones; that churn is what the ceilings allow for.
pub static CONTROL: Control = Control {
    name: "assign-during-delete-control",
    describe: "race 3's timing with nothing asking for scale-down: 8 runners, 2 jobs/min, no refreshes or cancellations",
    race: &AssignDuringDelete,
    strip: |seed, variant| {
        let mut plan = race_world(seed, variant, 8);
        let workload = &mut plan.config.workload;
        workload.arrivals_per_minute = 2.0;
        workload.burst_probability = 0.0;
        workload.cancel_probability = 0.0;
        plan
    },
    goals: &[
        ProbeGoal::ceiling(&probes::REMOVE_RUNNER_LOST_TO_ASSIGNMENT, Rate::measured(5, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::IDLE_RUNNER_SCALED_DOWN, Rate::measured(50, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::ASSIGNMENT_LOST_TO_REMOVE_RUNNER, Rate::measured(25, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::JOB_ASSIGNED_WITHIN_1S_OF_POD_DELETE, Rate::measured(19, 100, 2_000_000)),
        ProbeGoal::ceiling(&probes::JOB_ASSIGNED_AFTER_POD_DELETION, Rate::measured(0, 100, 2_000_000)),
    ],
};
