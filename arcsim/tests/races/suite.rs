//! Shared assertions of the race suites.

use std::ops::RangeInclusive;

use arc_judging::probes::ProbeGoal;
use arc_scenarios::kill_table::{CI_SEED_BUDGET, KILL_TABLE, expectations};
use arc_scenarios::scenario::Scenario;
use arc_scenarios::variant::{Build, Variant};
use arc_scenarios::verdict::Verdict;
use arc_sim::{Seed, TraceMode};
use arcsim::runner::run_build_to_answer;

/// Runs one seed until it has answered (a bug variant stops once the oracles it must fail have fired,
/// as in a sweep) and returns its verdict.
pub(super) fn verdict(scenario: &dyn Scenario, variant: Variant, seed: u64) -> Verdict {
    let build = Build::arcsim(variant);
    run_build_to_answer(scenario, build, Seed(seed), TraceMode::HashOnly)
        .unwrap_or_else(|e| panic!("{} / {variant} / seed {seed} could not run: {e}", scenario.name()))
        .0
}

/// A pinned kill: `variant` fails `oracle` on `seed` of `scenario`.
pub(super) fn fails_with(scenario: &dyn Scenario, variant: Variant, seed: u64, oracle: &str) {
    let v = verdict(scenario, variant, seed);
    assert!(
        v.violations.iter().any(|x| x.oracle == oracle),
        "{} should fail {oracle}: {:#?}",
        v.label(),
        v.violations
    );
}

/// How many of a scenario's fixed-controller seeds the fast tier runs (with its pinned regression
/// seeds); the slow tier runs the whole range and judges the probe goals over it.
pub(super) const FAST_SEEDS: u64 = 2;

/// The first [`FAST_SEEDS`] of `range`: what the fast tier runs of it.
pub(super) fn fast(range: RangeInclusive<u64>) -> RangeInclusive<u64> {
    let first = *range.start();
    first..=(*range.end()).min(first + FAST_SEEDS - 1)
}

/// The seeds of `range` followed by the pinned seeds outside it: each pinned seed runs once, beside the
/// range, however the range is narrowed.
pub(super) fn with_pinned(range: RangeInclusive<u64>, pinned: &[u64]) -> Vec<u64> {
    let beyond = pinned.iter().copied().filter(|seed| !range.contains(seed)).collect::<Vec<_>>();
    range.chain(beyond).collect()
}

/// The fixed controller passes every seed in `seeds`.
pub(super) fn fixed_passes(scenario: &dyn Scenario, seeds: impl IntoIterator<Item = u64>) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    for seed in seeds {
        let v = verdict(scenario, Variant::Fixed, seed);
        assert!(v.passed(), "{} failed: {:#?}\nreplay: {}", v.label(), v.violations, v.replay_line());
        verdicts.push(v);
    }
    verdicts
}

/// Every kill row of `variant` in `scenario` is met: its oracle fires within the row's bound (derived
/// from the rate measured on seeds outside this range), on seeds 1 onwards.
pub(super) fn killed_within_bound(scenario: &dyn Scenario, variant: Variant) {
    let rows: Vec<_> = expectations(variant, scenario.name())
        .into_iter()
        .filter(|r| r.within_seeds() <= CI_SEED_BUDGET)
        .collect();
    assert!(
        !rows.is_empty(),
        "the kill table has no row for {variant} in {} within the CI budget",
        scenario.name()
    );
    let mut pending: Vec<(&str, u32)> = rows.iter().map(|r| (r.oracle.name(), r.within_seeds())).collect();
    let last = pending.iter().map(|(_, bound)| *bound).max().unwrap_or(0);
    for seed in 1..=u64::from(last) {
        let v = verdict(scenario, variant, seed);
        pending.retain(|(oracle, _)| !v.violations.iter().any(|x| x.oracle == *oracle));
        if let Some((oracle, bound)) = pending.iter().find(|(_, bound)| u64::from(*bound) <= seed) {
            panic!(
                "{} / {variant} / seeds 1..={seed}: survived its bound of {bound} seeds, {oracle} never fired",
                scenario.name()
            );
        }
        if pending.is_empty() {
            return;
        }
    }
}

/// Every kill row of `scenario` whose bound fits [`CI_SEED_BUDGET`] is met (rows with wider bounds
/// are checked by `scripts/kill-rows.sh`). Rows are found in the table, so a new row is tested here
/// without a test of its own.
pub(super) fn kill_rows_met(scenario: &dyn Scenario) {
    let mut variants: Vec<Variant> = KILL_TABLE
        .iter()
        .filter(|row| row.scenario.name() == scenario.name() && row.within_seeds() <= CI_SEED_BUDGET)
        .map(|row| row.variant)
        .collect();
    variants.dedup();
    assert!(!variants.is_empty(), "no kill row of {} fits the CI budget", scenario.name());
    for variant in variants {
        killed_within_bound(scenario, variant);
    }
}

/// Every probe goal of a scenario is met over `verdicts`: a race world's probes fire in at least their
/// floor of the seeds, a control world's in at most their ceiling.
pub(super) fn probe_goals_met(goals: &[ProbeGoal], verdicts: &[Verdict]) {
    let seeds = u32::try_from(verdicts.len()).expect("a few seeds");
    for goal in goals {
        let hits = verdicts.iter().filter(|v| v.probes.contains_key(goal.probe.name)).count();
        let hits = u32::try_from(hits).expect("a few seeds");
        if let Err(why) = goal.bound.check(hits, seeds) {
            let at = verdicts.first().map_or("no runs", |v| v.scenario);
            panic!("{at} / fixed / {seeds} seeds: probe {} {why}", goal.probe.name);
        }
    }
}

/// `scenario`'s control world passes `seeds` with the fixed controller, and its probes stay under
/// their ceilings there.
pub(super) fn control_stays_quiet(scenario: &dyn Scenario, seeds: impl IntoIterator<Item = u64>) {
    let control = scenario.control().expect("a race scenario has a control world");
    let verdicts = fixed_passes(control, seeds);
    probe_goals_met(control.probe_goals(), &verdicts);
}
