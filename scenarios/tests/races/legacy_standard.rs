//! The standard workload on legacy runners (no faults, no crashes, tokens expiring hourly as GitHub's
//! do): the natural world of the legacy bugs. The fixed controller passes it; `bug-1125` is killed
//! there within its row's bound, with nothing aimed at the race.

use arc_scenarios::scenarios::legacy_standard::LegacyStandard;

use super::suite::{fixed_passes, kill_rows_met};

const SCENARIO: &LegacyStandard = &LegacyStandard;

#[test]
fn the_fixed_controller_passes_the_standard_workload_on_legacy_runners() {
    fixed_passes(SCENARIO, 1..=5);
}

/// Every kill row of this scenario within the CI budget (the kill table's rows, found there):
/// - `bug-1125`: without 1125 a pod recreated for a fresh token on a stale idle listing takes down
///   the job GitHub assigned its runner meanwhile
#[test]
fn every_kill_row_of_this_scenario_is_met() {
    kill_rows_met(SCENARIO);
}
