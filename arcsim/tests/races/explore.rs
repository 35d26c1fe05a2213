//! Generated plans (`arcsim explore`): over the standard world's fault-free run of seed 1 (no race
//! settings: every watch lag zero, no fault, no disruption, so bug-4201's window is shut), 56
//! perturbed runs (the seven kinds in turn, eight each) kill race 1's bug (stale views of pods); a
//! finding's capsule replays its failure. The fixed controller's runs of the same plans are a stated
//! result: none fails (`FIXED_FINDINGS`). The GitHub-side kinds serialize, replay and are counted in
//! the coverage, and a delayed assignment kills `bug-1125` in token-refresh-recreation's fault-free
//! run of seed 1 while the fixed controller passes the same plan. In steady-state's fault-free run of
//! seed 1 (the standard workload judged by the swarm's oracles) the two-step plans kill the two
//! scale-down races: an extra job at a scale-down kills `bug-scale-down-no-remove`, a rollout as a
//! runner registers kills `bug-stale-removal-snapshot`, each step alone kills neither, and the fixed
//! controller passes both. The rollout also says which ARC release has that race: 0.13.1 as released
//! fails it, 0.15.0 passes.

use arc_controller::Profile;
use arc_scenarios::scenarios;
use arc_scenarios::scenarios::refresh::{refresh_in_controller_form, runner_refresh};
use arc_scenarios::variant::{Build, Variant};
use arc_scenarios::verdict::Violation;
use arc_sim::net::Network;
use arc_sim::perturb::Perturbation;
use arc_sim::schedule::Schedule;
use arc_sim::{Seed, TraceMode};
use arcsim::capsule::Capsule;
use arcsim::explore::plans::KINDS;
use arcsim::explore::{Exploration, explore, fault_free};

/// Perturbed runs per exploration (eight of each kind).
const BUDGET: usize = 8 * KINDS;

fn explored(variant: Variant) -> Exploration {
    let scenario = scenarios::find("standard").unwrap();
    let settings = (Network::InProcess, Schedule::Fifo, &arc_sim::github::Assumed::defaults());
    explore(scenario, Build::arcsim(variant), Seed(1), settings, BUDGET).expect("explores")
}

/// `scenario`'s fault-free run of `seed` for `variant` with `perturbations`, expecting `oracle`.
fn perturbed(
    scenario: &str,
    variant: Variant,
    seed: u64,
    oracle: &str,
    perturbations: Vec<Perturbation>,
) -> Capsule {
    perturbed_build(scenario, Build::arcsim(variant), seed, oracle, perturbations)
}

/// [`perturbed`] for any build.
fn perturbed_build(
    scenario: &str,
    build: Build,
    seed: u64,
    oracle: &str,
    perturbations: Vec<Perturbation>,
) -> Capsule {
    let found = scenarios::find(scenario).unwrap();
    let run = Capsule::of_run(found, build, Seed(seed), Network::InProcess, oracle);
    let mut capsule = fault_free(&run);
    capsule.plan.faults.perturbations = perturbations;
    // The world `explore` searched: runners' sessions by direct call, as every world had them before
    // the steady-state swarm drew them over HTTP (2026-12-06).
    if let Some(kubelet) = capsule.plan.kubelet.as_mut() {
        kubelet.runner_sessions_over_http = false;
    }
    capsule
}

/// How many of the fixed controller's runs of the same plans fail (a stated result, not a bound).
const FIXED_FINDINGS: usize = 0;

#[test]
fn the_github_side_kinds_serialize_and_replay() {
    let plan = vec![
        Perturbation::DelayedAssignment {
            actor: "controller".into(),
            nth_assignment: 5,
            max_hold_ms: 20_000,
        },
        Perturbation::HeldRequest { operation: "get-message".into(), nth: 4, hold_ms: 5_000 },
    ];
    let capsule = perturbed("standard", Variant::Fixed, 1, "no-job-lost", plan.clone());
    let json = capsule.to_json();
    assert!(
        json.contains(r#""kind": "delayed-assignment""#) && json.contains(r#""kind": "held-request""#),
        "{json}"
    );
    let read = Capsule::parse(&json).expect("reads back");
    assert_eq!(read.plan.faults.perturbations, plan);
    let (first, _) = read.run(TraceMode::HashOnly, None).unwrap();
    let (second, _) = read.run(TraceMode::HashOnly, None).unwrap();
    assert_eq!(first.trace_hash, second.trace_hash, "the same plan gives the same trace");
    let (unperturbed, _) = perturbed("standard", Variant::Fixed, 1, "no-job-lost", vec![])
        .run(TraceMode::HashOnly, None)
        .unwrap();
    assert_ne!(first.trace_hash, unperturbed.trace_hash, "the perturbations acted");
    assert!(
        first.violations.is_empty(),
        "{}: the fixed controller passes: {:?}",
        first.label(),
        first.violations
    );
}

/// The plan `arcsim explore --scenario token-refresh-recreation --variant bug-1125 --seed 1 --budget
/// 10` found (run 9 of 10): the 122nd assignment held until the controller deletes an idle runner's
/// pod to recreate it (its registration token refreshed), at most 40.8 s.
fn held_until_recreation() -> Vec<Perturbation> {
    vec![Perturbation::DelayedAssignment {
        actor: "controller".into(),
        nth_assignment: 122,
        max_hold_ms: 40_806,
    }]
}

#[test]
fn a_delayed_assignment_kills_bug_1125_and_the_fixed_controller_passes_it() {
    let oracle = "no-job-lost-to-controller-kill";
    let bug = perturbed("token-refresh-recreation", Variant::Bug1125, 1, oracle, held_until_recreation());
    let (verdict, _) = bug.run(TraceMode::HashOnly, None).unwrap();
    assert!(bug.fails(&verdict), "{}: bug-1125 loses a job: {:?}", verdict.label(), verdict.violations);
    let (reference, _) = perturbed("token-refresh-recreation", Variant::Bug1125, 1, oracle, vec![])
        .run(TraceMode::HashOnly, None)
        .unwrap();
    assert!(
        reference.violations.is_empty(),
        "{}: its fault-free run passes: {:?}",
        reference.label(),
        reference.violations
    );
    let fixed = perturbed("token-refresh-recreation", Variant::Fixed, 1, oracle, held_until_recreation());
    let (verdict, _) = fixed.run(TraceMode::HashOnly, None).unwrap();
    assert!(
        verdict.violations.is_empty(),
        "{}: the fixed controller passes the plan: {:?}",
        verdict.label(),
        verdict.violations
    );
}

/// The two-step plan `arcsim explore --scenario steady-state --variant bug-scale-down-no-remove
/// --seed 1 --budget 60` found (run 6 of 45, every extra-job plan failing): a job pushed 1 s before
/// the runner set scales its last idle runner down, its assignment held (6 s at most) until the
/// controller deletes a runner that may take it.
fn pushed_at_the_scale_down() -> Vec<Perturbation> {
    vec![
        Perturbation::ExtraJob { at_ms: 707_591, duration_ms: 60_000 },
        Perturbation::DelayedAssignment {
            actor: "controller".into(),
            nth_assignment: 41,
            max_hold_ms: 6_000,
        },
    ]
}

#[test]
fn an_extra_job_at_a_scale_down_kills_bug_scale_down_no_remove_and_the_fixed_controller_passes_it() {
    let (scenario, bug, oracle) = ("steady-state", Variant::BugScaleDownNoRemove, "no-busy-runner-deleted");
    let (verdict, _) = perturbed(scenario, bug, 1, oracle, pushed_at_the_scale_down())
        .run(TraceMode::HashOnly, None)
        .unwrap();
    assert!(
        verdict.violations.iter().any(|v| v.oracle == oracle),
        "{}: {:?}",
        verdict.label(),
        verdict.violations
    );
    let (job_alone, _) = perturbed(scenario, bug, 1, oracle, pushed_at_the_scale_down()[..1].to_vec())
        .run(TraceMode::HashOnly, None)
        .unwrap();
    assert!(
        job_alone.violations.is_empty(),
        "{}: the push alone misses the window: {:?}",
        job_alone.label(),
        job_alone.violations
    );
    let fixed = perturbed(scenario, Variant::Fixed, 1, oracle, pushed_at_the_scale_down());
    let (verdict, _) = fixed.run(TraceMode::HashOnly, None).unwrap();
    assert!(
        verdict.violations.is_empty(),
        "{}: the fixed controller passes the plan: {:?}",
        verdict.label(),
        verdict.violations
    );
}

/// The rollout `arcsim explore --scenario steady-state --variant bug-stale-removal-snapshot --seed 1
/// --budget 70` found (run 21 of 55): the runner spec changes 10 ms after the controller creates an
/// EphemeralRunner, and the RemoveRunner that follows is held 5 s.
/// The refresh takes the form of `build`'s controller, as `explore` gives it.
fn rollout_as_a_runner_registers(build: Build, rollout: bool, hold: bool) -> Capsule {
    let held = Perturbation::HeldRequest { operation: "remove-runner".into(), nth: 1, hold_ms: 5_000 };
    let plan = if hold { vec![held] } else { vec![] };
    let mut capsule = perturbed_build("steady-state", build, 1, "no-busy-runner-deleted", plan);
    if rollout {
        let mut refresh = runner_refresh(58_613, "arc-runners", "arc-runner-set", 1);
        if !build.switches().scaling.actionable_revision {
            refresh_in_controller_form(&mut refresh);
        }
        capsule.plan.disruptions = vec![refresh];
    }
    capsule
}

#[test]
fn a_rollout_as_a_runner_registers_kills_bug_stale_removal_snapshot_and_the_fixed_controller_passes_it() {
    let oracle = "no-busy-runner-deleted";
    let run = |variant, rollout, hold| {
        violations(rollout_as_a_runner_registers(Build::arcsim(variant), rollout, hold))
    };
    let killed = run(Variant::BugStaleRemovalSnapshot, true, true);
    assert!(killed.iter().any(|v| v.oracle == oracle), "{killed:?}");
    let rollout_alone = run(Variant::BugStaleRemovalSnapshot, true, false);
    assert!(
        rollout_alone.is_empty(),
        "the rollout alone removes the runner before it can take a job: {rollout_alone:?}"
    );
    let hold_alone = run(Variant::BugStaleRemovalSnapshot, false, true);
    assert!(hold_alone.is_empty(), "the held RemoveRunner alone: {hold_alone:?}");
    let fixed = run(Variant::Fixed, true, true);
    assert!(fixed.is_empty(), "the fixed controller re-reads the runner and passes: {fixed:?}");
}

fn violations(capsule: Capsule) -> Vec<Violation> {
    capsule.run(TraceMode::HashOnly, None).unwrap().0.violations
}

/// Which ARC release the rollout race affects: ARC 0.13.1 as released (`--profile arc-0.13.1`, its
/// `fixed` build) removes the runner it read as unregistered and deletes it busy; 0.15.0 leaves a
/// runner without a recorded id to a later cleanup pass (#4683) and passes the same plan.
#[test]
fn the_rollout_race_is_in_arc_0_13_1_as_released_and_closed_in_0_15_0() {
    let oracle = "no-busy-runner-deleted";
    let released = |profile| {
        violations(rollout_as_a_runner_registers(Build { profile, variant: Variant::Fixed }, true, true))
    };
    let arc_0_13_1 = released(Profile::Arc0131);
    assert!(arc_0_13_1.iter().any(|v| v.oracle == oracle), "{arc_0_13_1:?}");
    let arc_0_15_0 = released(Profile::Arc0150);
    assert!(arc_0_15_0.is_empty(), "{arc_0_15_0:?}");
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`).
mod slow {
    use super::*;

    #[test]
    #[ignore = "slow tier: a 16-run exploration each"]
    fn explore_kills_bug_4201_without_race_settings() {
        let found = explored(Variant::Bug4201);
        assert!(
            found.reference_failures.is_empty(),
            "the unperturbed run passes: {:?}",
            found.reference_failures
        );
        assert!(found.runs <= BUDGET && found.runs > BUDGET / 2, "{} runs", found.runs);
        assert!(
            found.reads_perturbed > 0 && found.writes_perturbed > 0 && found.reads > found.reads_perturbed
        );
        assert!(
            found.assignments > found.assignments_perturbed && found.assignments_perturbed > 0,
            "delayed assignments counted: {} of {}",
            found.assignments_perturbed,
            found.assignments
        );
        assert_eq!(found.requests_perturbed, BUDGET / KINDS, "one held request per plan of the kind");
        assert!(found.requests > found.requests_perturbed);
        assert_eq!(
            found.runner_deletes_perturbed,
            found.runner_deletes.min(BUDGET / KINDS),
            "an extra job before each delete of a live runner, up to the kind's share"
        );
        assert_eq!(
            found.runner_creates_perturbed,
            found.runner_creates.min(BUDGET / KINDS),
            "a rollout after each runner create, up to the kind's share"
        );
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

    #[test]
    #[ignore = "slow tier: a 16-run exploration each"]
    fn the_fixed_controller_under_the_same_plans() {
        let found = explored(Variant::Fixed);
        let failed: Vec<_> = found.findings.iter().map(|f| (&f.plan.perturbations, &f.oracles)).collect();
        assert_eq!(found.findings.len(), FIXED_FINDINGS, "{failed:?}");
    }
}
