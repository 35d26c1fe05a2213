//! Each judge says which events it reads, and that is enough: on a record that keeps everything, every
//! oracle, twin oracle and probe gives the same answer as on the same record cut down to its declared
//! needs. Checked on seed 1 of one kill-table row per killing oracle (where that oracle finds its
//! violations; a scenario and variant shared by several rows runs once), and of the fixed controller
//! in the scenarios no row names. A judge that reads an event it did not declare turns this red.

use arc_judging::probes;
use arc_scenarios::kill_table::KILL_TABLE;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::record::Interest;
use arc_sim::{Seed, TraceMode};
use arcsim::runner::{run_one_keeping, run_world};

fn judges_agree_on_their_declared_needs(scenario: &dyn Scenario, variant: Variant, seed: u64) {
    let at = format!("{}/{variant}/seed {seed}", scenario.name());
    let (_, full) =
        run_one_keeping(scenario, variant, Seed(seed), TraceMode::HashOnly, Some(Interest::everything()))
            .expect("the run completes");
    for oracle in scenario.oracles() {
        let cut = full.keeping(&oracle.needs());
        assert_eq!(
            oracle.check(&cut),
            oracle.check(&full),
            "{at}: {} reads an undeclared event",
            oracle.name()
        );
    }
    for probe in probes::all() {
        let cut = full.keeping(&(probe.needs)());
        assert_eq!(
            (probe.count)(&cut),
            (probe.count)(&full),
            "{at}: probe {} reads an undeclared event",
            probe.name
        );
    }
    for twin in scenario.twins(Seed(seed), variant) {
        let other = run_world(twin.plan, TraceMode::HashOnly, Interest::everything()).expect("the twin runs");
        for oracle in &twin.oracles {
            let needs = oracle.needs();
            let cut = oracle.compare(&full.keeping(&needs), &other.keeping(&needs));
            assert_eq!(
                cut,
                oracle.compare(&full, &other),
                "{at}: {} reads an undeclared event",
                oracle.name()
            );
        }
    }
}

/// A world whose controller is stopped (steady-state seed 24,000,054: 159 s, just after it removed two
/// runners) and one whose leader is: the judges that read the pauses declare them.
#[test]
fn judges_declare_the_pauses_they_read() {
    judges_agree_on_their_declared_needs(&scenarios::steady_state::SteadyState, Variant::Fixed, 24_000_054);
    judges_agree_on_their_declared_needs(&scenarios::paused_leader::PausedLeader, Variant::Fixed, 1);
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`).
mod slow {
    use super::*;

    #[test]
    #[ignore = "slow tier: a run keeping everything per killing oracle"]
    fn every_judge_reads_only_what_it_declares() {
        let mut oracles_seen = Vec::new();
        let mut cells_run: Vec<(&str, Variant)> = Vec::new();
        for row in KILL_TABLE {
            if oracles_seen.contains(&row.oracle.name()) {
                continue;
            }
            oracles_seen.push(row.oracle.name());
            // One run of a cell checks every oracle its scenario runs: a cell is not run twice.
            let cell = (row.scenario.name(), row.variant);
            if !cells_run.contains(&cell) {
                cells_run.push(cell);
                judges_agree_on_their_declared_needs(row.scenario, row.variant, 1);
            }
        }
        let named = |s: &dyn Scenario| KILL_TABLE.iter().any(|row| row.scenario.name() == s.name());
        for scenario in scenarios::all().into_iter().filter(|s| !named(*s)) {
            judges_agree_on_their_declared_needs(scenario, Variant::Fixed, 1);
        }
    }
}
