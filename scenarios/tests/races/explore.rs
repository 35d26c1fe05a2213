//! Generated plans (`arcsim explore`): over the standard world's fault-free run of seed 1 (no race
//! settings: every watch lag zero, no fault, no disruption, so bug-4201's window is shut), 24
//! perturbed runs kill race 1's bug (3 of the 23 plans, all stale views of pods); a finding's capsule
//! replays its failure. The fixed controller's runs of the same plans are a stated result: none
//! fails (`FIXED_FINDINGS`).

use arc_scenarios::explore::{Exploration, explore};
use arc_scenarios::scenarios;
use arc_scenarios::variant::{Build, Variant};
use arc_sim::net::Network;
use arc_sim::schedule::Schedule;
use arc_sim::{Seed, TraceMode};

/// Perturbed runs per exploration.
const BUDGET: usize = 24;

fn explored(variant: Variant) -> Exploration {
    let scenario = scenarios::find("standard").unwrap();
    explore(scenario, Build::arcsim(variant), Seed(1), (Network::InProcess, Schedule::Fifo), BUDGET)
        .expect("explores")
}

#[test]
fn explore_kills_bug_4201_without_race_settings() {
    let found = explored(Variant::Bug4201);
    assert!(
        found.reference_failures.is_empty(),
        "the unperturbed run passes: {:?}",
        found.reference_failures
    );
    assert!(found.runs <= BUDGET && found.runs > BUDGET / 2, "{} runs", found.runs);
    assert!(found.reads_perturbed > 0 && found.writes_perturbed > 0 && found.reads > found.reads_perturbed);
    let kills: Vec<_> = found
        .findings
        .iter()
        .filter(|f| {
            f.oracles
                .iter()
                .any(|o| *o == "no-already-exists-reconcile-errors" || *o == "bounded-pod-creates")
        })
        .collect();
    assert!(!kills.is_empty(), "no plan killed bug-4201: {:?}", found.findings);
    let capsule = &kills[0].capsule;
    let (verdict, _) = capsule.run(TraceMode::HashOnly, None).unwrap();
    assert!(capsule.fails(&verdict), "the finding's capsule replays its failure");
    let (again, _) = capsule.run(TraceMode::HashOnly, None).unwrap();
    assert_eq!(again.trace_hash, verdict.trace_hash, "a perturbed run is deterministic");
}

/// How many of the fixed controller's runs of the same plans fail (a stated result, not a bound).
const FIXED_FINDINGS: usize = 0;

#[test]
fn the_fixed_controller_under_the_same_plans() {
    let found = explored(Variant::Fixed);
    let failed: Vec<_> = found.findings.iter().map(|f| (&f.plan.perturbation, &f.oracles)).collect();
    assert_eq!(found.findings.len(), FIXED_FINDINGS, "{failed:?}");
}
