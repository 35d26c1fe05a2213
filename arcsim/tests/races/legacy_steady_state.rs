//! The standard workload on legacy runners with production's disruptions at the swarm's counts
//! (controller restarts, runner containers OOM-killed, watch lags): the natural world of the legacy
//! bugs that need a restarting container. The fixed controller passes it; every kill row of it is met
//! within its bound; and a crash after the workload is seen before the world is judged settled.

use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios::legacy_standard::WORKLOAD_MS;
use arc_scenarios::scenarios::legacy_steady_state::LegacySteadyState;
use arc_scenarios::variant::{Build, Variant};
use arc_sim::{Seed, TraceMode};
use arcsim::runner::run_build_keeping;

use super::suite::{fast, fixed_passes, kill_rows_met};

const SCENARIO: &LegacySteadyState = &LegacySteadyState;

/// Seeds the fixed controller must pass in this world (the fast tier its first few).
const FIXED_SEEDS: std::ops::RangeInclusive<u64> = 1..=8;

#[test]
fn the_fixed_controller_passes_the_disrupted_legacy_workload() {
    fixed_passes(SCENARIO, fast(FIXED_SEEDS));
}

/// Every kill row of this scenario within the CI budget (the kill table's rows, found there).
#[test]
fn every_kill_row_of_this_scenario_is_met() {
    kill_rows_met(SCENARIO);
}

/// The world may not call itself settled in the instant a disruption lands: the crash must be given
/// time to show (before the fix a crash of an idle runner after the workload ended the run at once).
#[test]
fn a_disruption_after_the_workload_is_followed_before_the_world_settles() {
    let mut checked = 0;
    for seed in 1..=40 {
        let plan = SCENARIO.world(Seed(seed), Variant::Fixed);
        let Some(last) = plan.config.disruptions.iter().map(|d| d.at_ms()).max() else { continue };
        if last < WORKLOAD_MS {
            continue;
        }
        let build = Build::arcsim(Variant::Fixed);
        let (_, record) = run_build_keeping(SCENARIO, build, Seed(seed), TraceMode::HashOnly, None).unwrap();
        let settled = record.settled_at_ms.expect("the world settles");
        assert!(settled > last, "seed {seed}: settled at {settled} ms, the last disruption at {last} ms");
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} seeds of 40 had a disruption after the workload");
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
