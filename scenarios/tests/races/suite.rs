//! Shared assertions of the race suites.

use arc_scenarios::kill_table::expectation;
use arc_scenarios::probes::ProbeGoal;
use arc_scenarios::runner::run_one;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_scenarios::verdict::Verdict;
use arc_sim::{Seed, TraceMode};

/// Runs one seed and returns its verdict.
pub fn verdict(scenario: &str, variant: Variant, seed: u64) -> Verdict {
    let scenario = scenarios::find(scenario).expect("a known scenario");
    run_one(scenario, variant, Seed(seed), TraceMode::HashOnly).expect("the run completes").0
}

/// The fixed controller passes every seed in `seeds`.
pub fn fixed_passes(scenario: &str, seeds: impl IntoIterator<Item = u64>) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    for seed in seeds {
        let v = verdict(scenario, Variant::Fixed, seed);
        assert!(
            v.passed(),
            "{scenario} seed {seed} failed: {:#?}\nreplay: {}",
            v.violations,
            v.replay_line()
        );
        verdicts.push(v);
    }
    verdicts
}

/// `variant` is killed in `scenario` within the kill table's bound, by the oracle it names.
pub fn killed_within_bound(scenario: &str, variant: Variant) {
    let expect = expectation(variant, scenario).expect("the kill table has a row for this variant here");
    for seed in 1..=u64::from(expect.within_seeds) {
        let v = verdict(scenario, variant, seed);
        if v.violations.iter().any(|x| x.oracle == expect.oracle) {
            return;
        }
    }
    panic!("{variant} survived {} seeds of {scenario}: {} never fired", expect.within_seeds, expect.oracle);
}

/// Every probe goal of `scenario` is met over `verdicts` (the share of seeds in which it fired).
pub fn probe_goals_met(goals: &[ProbeGoal], verdicts: &[Verdict]) {
    for goal in goals {
        let hits = verdicts.iter().filter(|v| v.probes.contains_key(goal.probe)).count();
        let share = hits as f64 / verdicts.len() as f64;
        assert!(
            share >= goal.min_share,
            "probe {} fired in {hits}/{} seeds ({share:.2}), under its minimum {}",
            goal.probe,
            verdicts.len(),
            goal.min_share
        );
    }
}
