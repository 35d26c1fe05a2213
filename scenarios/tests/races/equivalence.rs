//! Predicates and lazy copy change how much work the controller does, never what it does (§5.1, §5.3).

use arc_scenarios::scenarios::equivalence::OptimisationEquivalence;
use arc_scenarios::variant::Variant;

use super::suite::{fixed_passes, killed_within_bound};

const SCENARIO: &OptimisationEquivalence = &OptimisationEquivalence;

/// Seeds pinned because they once showed something worth keeping an eye on.
const REGRESSION_SEEDS: &[u64] = &[
    // The ARS←ERS predicate dropped count-only updates the ARS mirrors into its status: 474 vs 580
    // status writes with predicates on and off (the predicate now sees the counts).
    1,
];

#[test]
fn predicates_and_lazy_copy_make_the_same_mutating_calls_as_without_them() {
    fixed_passes(SCENARIO, 1..=4);
}

#[test]
fn regression_seeds_pass() {
    fixed_passes(SCENARIO, REGRESSION_SEEDS.iter().copied());
}

#[test]
fn an_ars_predicate_blind_to_the_counts_it_mirrors_changes_the_status_writes() {
    killed_within_bound(SCENARIO, Variant::BugArsPredicateCounts);
}
