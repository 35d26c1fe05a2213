//! Shared assertions of the race suites.

use arc_scenarios::kill_table::expectation;
use arc_scenarios::probes::ProbeGoal;
use arc_scenarios::runner::run_one;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::variant::Variant;
use arc_scenarios::verdict::Verdict;
use arc_sim::{Seed, TraceMode};

/// Runs one seed and returns its verdict.
pub fn verdict(scenario: &dyn Scenario, variant: Variant, seed: u64) -> Verdict {
    run_one(scenario, variant, Seed(seed), TraceMode::HashOnly).expect("the run completes").0
}

/// The fixed controller passes every seed in `seeds`.
pub fn fixed_passes(scenario: &dyn Scenario, seeds: impl IntoIterator<Item = u64>) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    for seed in seeds {
        let v = verdict(scenario, Variant::Fixed, seed);
        assert!(
            v.passed(),
            "{} seed {seed} failed: {:#?}\nreplay: {}",
            scenario.name(),
            v.violations,
            v.replay_line()
        );
        verdicts.push(v);
    }
    verdicts
}

/// `variant` is killed in `scenario` within the kill table's bound, by the oracle it names.
pub fn killed_within_bound(scenario: &dyn Scenario, variant: Variant) {
    let expect =
        expectation(variant, scenario.name()).expect("the kill table has a row for this variant here");
    for seed in 1..=u64::from(expect.within_seeds) {
        let v = verdict(scenario, variant, seed);
        if v.violations.iter().any(|x| x.oracle == expect.oracle.name()) {
            return;
        }
    }
    let (bound, oracle) = (expect.within_seeds, expect.oracle.name());
    panic!("{variant} survived {bound} seeds of {}: {oracle} never fired", scenario.name());
}

/// Every probe goal of `scenario` is met over `verdicts` (the share of seeds in which it fired).
pub fn probe_goals_met(goals: &[ProbeGoal], verdicts: &[Verdict]) {
    for goal in goals {
        let hits = verdicts.iter().filter(|v| v.probes.contains_key(goal.probe.name)).count();
        let share = hits as f64 / verdicts.len() as f64;
        assert!(
            share >= goal.min_share,
            "probe {} fired in {hits}/{} seeds ({share:.2}), under its minimum {}",
            goal.probe.name,
            verdicts.len(),
            goal.min_share
        );
    }
}
