//! Race 3 (§8.3): GitHub assigns a job to a runner as the controller removes it.

use std::ops::RangeInclusive;

use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios::assign_during_delete::AssignDuringDelete;

use arc_scenarios::variant::Variant;

use super::suite::{
    control_stays_quiet, fails_with, fast, fixed_passes, kill_rows_met, probe_goals_met, with_pinned,
};

const SCENARIO: &AssignDuringDelete = &AssignDuringDelete;

/// Seeds of the control world each test run judges.
const CONTROL_SEEDS: u64 = 5;

/// Seeds the fixed controller must pass in this world each test run, with [`REGRESSION_SEEDS`].
const FIXED_SEEDS: RangeInclusive<u64> = 1..=8;

/// Seeds pinned because they once showed something worth keeping an eye on (run with
/// [`FIXED_SEEDS`], once each).
const REGRESSION_SEEDS: &[u64] = &[
    // RemoveRunner lost to an assignment 11 times in one run; each runner was kept and its job ran.
    1,
    // The listener's optimistic-lock Running write met a Conflict and re-read the runner.
    2,
    // A runner deleted while it registered (the test below: the bug leaks its registration).
    STALE_DEREGISTRATION_SEED,
];

/// Every kill row of this scenario within the CI budget (the kill table's rows, found there):
/// - `bug-scale-down-no-remove`: scale down without remove runner deletes busy runners
/// - `bug-3371`: without the patch id gate idle runners are scaled down on non zero patches
/// - `bug-running-overwrites-terminal`: an unguarded running write lands on a deleting runner
#[test]
fn every_kill_row_of_this_scenario_is_met() {
    kill_rows_met(SCENARIO);
}

#[test]
fn remove_runner_first_never_deletes_a_runner_that_got_a_job() {
    let verdicts = fixed_passes(SCENARIO, with_pinned(fast(FIXED_SEEDS), REGRESSION_SEEDS));
    probe_goals_met(AssignDuringDelete.probe_goals(), &verdicts);
}

#[test]
fn the_control_world_without_the_race_stays_quiet() {
    control_stays_quiet(SCENARIO, 1..=CONTROL_SEEDS);
}

/// A runner deleted while it registered was finalized from a snapshot without its id and leaked its
/// registration (no-orphan-registration, 626 s); the fix reads such a runner afresh. Too rare for a
/// kill row with a CI-sized bound, so pinned here. (First found at seed 5,101,010; with the kubelet as
/// a client and the fakes' timing (issue 13) seed 32 was the first of 1-60 that killed it; with the
/// listener acquiring before it acknowledges (`fixes.acquire_before_ack`) it is seed 7; since a runner
/// with no id is no longer asked RemoveRunner(0) (`fixes.remove_runner_by_known_id`), the leak shows
/// on seed 7 as the runner gone with its registration never removed, and no seed of 1–40 ends with the
/// registration orphaned; since the removal mark, `fixes.delete_removed_runner_first`, moved the
/// traces, seed 14; since the clients are limited as ARC's are, seed 23.)
const STALE_DEREGISTRATION_SEED: u64 = 23;

/// The fixed controller passes that seed among [`REGRESSION_SEEDS`].
#[test]
fn a_runner_deleted_while_it_registers_leaks_its_registration_without_the_fresh_read() {
    let (variant, seed) = (Variant::BugStaleDeregistration, STALE_DEREGISTRATION_SEED);
    fails_with(SCENARIO, variant, seed, "registration-removed-before-runner-gone");
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`): the whole seed range.
mod slow {
    use super::*;

    #[test]
    #[ignore = "slow tier"]
    fn the_fixed_controller_passes_every_seed_of_its_range_and_opens_the_race() {
        let verdicts = fixed_passes(SCENARIO, with_pinned(FIXED_SEEDS, REGRESSION_SEEDS));
        probe_goals_met(AssignDuringDelete.probe_goals(), &verdicts);
    }
}
