//! The hand cleanup: an operator runs `kubectl delete ephemeralrunners --all` several times a second
//! or so apart while the runner set re-creates the runners; #4580's short circuit leaves the
//! registrations of runners deleted in their registering pass behind.

use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios::kubectl_delete::KubectlDeleteRunners;

use super::suite::{control_stays_quiet, fast, fixed_passes, kill_rows_met, probe_goals_met};

const SCENARIO: &KubectlDeleteRunners = &KubectlDeleteRunners;

/// Seeds the fixed controller must pass in this world (the fast tier its first few).
const FIXED_SEEDS: std::ops::RangeInclusive<u64> = 1..=8;

/// Seeds of the control world each test run judges.
const CONTROL_SEEDS: u64 = 5;

/// Every kill row of this scenario within the CI budget (the kill table's rows, found there):
/// - `bug-4580-short-circuit`: a runner deleted between its registration and the pass that adds
///   the registration finalizer is not removed at GitHub
/// - `bug-2255-no-remove-on-delete`: a busy runner deleted by hand loses its job with its pod
#[test]
fn every_kill_row_of_this_scenario_is_met() {
    kill_rows_met(SCENARIO);
}

#[test]
fn the_fixed_controller_removes_every_runner_deleted_by_hand_at_github() {
    let verdicts = fixed_passes(SCENARIO, fast(FIXED_SEEDS));
    probe_goals_met(KubectlDeleteRunners.probe_goals(), &verdicts);
}

#[test]
fn the_control_world_without_repeated_deletes_stays_quiet() {
    control_stays_quiet(SCENARIO, 1..=CONTROL_SEEDS);
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`): the whole seed range.
mod slow {
    use super::*;

    #[test]
    #[ignore = "slow tier"]
    fn the_fixed_controller_passes_every_seed_of_its_range_and_opens_the_race() {
        let verdicts = fixed_passes(SCENARIO, FIXED_SEEDS);
        probe_goals_met(KubectlDeleteRunners.probe_goals(), &verdicts);
    }
}
