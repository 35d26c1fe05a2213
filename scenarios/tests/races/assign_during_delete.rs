//! Race 3 (§8.3): GitHub assigns a job to a runner as the controller removes it.

use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios::assign_during_delete::AssignDuringDelete;
use arc_scenarios::variant::Variant;

use super::suite::{control_stays_quiet, fixed_passes, killed_within_bound, probe_goals_met};

const SCENARIO: &AssignDuringDelete = &AssignDuringDelete;

/// Seeds of the control world each test run judges.
const CONTROL_SEEDS: u64 = 5;

/// Seeds pinned because they once showed something worth keeping an eye on.
const REGRESSION_SEEDS: &[u64] = &[
    // RemoveRunner lost to an assignment 11 times in one run; each runner was kept and its job ran.
    1, // The listener's optimistic-lock Running write met a Conflict and re-read the runner.
    2,
];

#[test]
fn remove_runner_first_never_deletes_a_runner_that_got_a_job() {
    let verdicts = fixed_passes(SCENARIO, 1..=8);
    probe_goals_met(AssignDuringDelete.probe_goals(), &verdicts);
}

#[test]
fn scale_down_without_remove_runner_deletes_busy_runners() {
    killed_within_bound(SCENARIO, Variant::BugScaleDownNoRemove);
}

#[test]
fn without_the_patch_id_gate_idle_runners_are_scaled_down_on_non_zero_patches() {
    killed_within_bound(SCENARIO, Variant::Bug3371);
}

#[test]
fn an_unguarded_running_write_lands_on_a_deleting_runner() {
    killed_within_bound(SCENARIO, Variant::BugRunningOverwritesTerminal);
}

#[test]
fn the_control_world_without_the_race_stays_quiet() {
    control_stays_quiet(SCENARIO, 1..=CONTROL_SEEDS);
}

#[test]
fn regression_seeds_pass() {
    fixed_passes(SCENARIO, REGRESSION_SEEDS.iter().copied());
}
