//! The standard workload on legacy runners (no faults, no crashes, tokens expiring hourly as GitHub's
//! do): the natural world of the legacy bugs. The fixed controller passes it; `bug-1125` is killed
//! there within its row's bound, with nothing aimed at the race.

use arc_scenarios::scenarios::legacy_standard::LegacyStandard;

use super::suite::{fast, fixed_passes, kill_rows_met};

const SCENARIO: &LegacyStandard = &LegacyStandard;

/// Seeds the fixed controller must pass in this world (the fast tier its first few).
const FIXED_SEEDS: std::ops::RangeInclusive<u64> = 1..=5;

#[test]
fn the_fixed_controller_passes_the_standard_workload_on_legacy_runners() {
    fixed_passes(SCENARIO, fast(FIXED_SEEDS));
}

/// Every kill row of this scenario within the CI budget (the kill table's rows, found there):
/// - `bug-1125`: without 1125 a pod recreated for a fresh token on a stale idle listing takes down
///   the job GitHub assigned its runner meanwhile
#[test]
fn every_kill_row_of_this_scenario_is_met() {
    kill_rows_met(SCENARIO);
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`): the whole seed range.
mod slow {
    use super::*;

    #[test]
    #[ignore = "slow tier"]
    fn the_fixed_controller_passes_every_seed_of_its_range() {
        fixed_passes(SCENARIO, FIXED_SEEDS);
    }
}
