//! `arcsim explore`'s engine (Sieve's search, on arcsim's fakes): a fault-free reference run of the
//! scenario's world for a seed (its faults and disruptions removed, every watch and watch-cache lag
//! zero, so no race window is open by the world's settings), its read and write points listed
//! ([`points`]) with its GitHub-side points ([`github_points`]: assignments, deletes of live runners,
//! requests), plans generated over them ([`plans`]) and each run as a capsule with its perturbations.
//! A run that fails an oracle is reported with its capsule, which `arcsim run --capsule` replays and
//! `arcsim shrink --capsule` shrinks; coverage says how many points were perturbed out of how many.

pub mod github_points;
pub mod plans;
pub mod points;

use std::collections::BTreeSet;

use arc_sim::apiserver::{LagRange, WatchLag};
use arc_sim::github::Assumed;
use arc_sim::net::Network;
use arc_sim::record::Interest;
use arc_sim::schedule::Schedule;
use arc_sim::{Seed, TraceMode};

use self::plans::{Plan, Points};
use crate::capsule::{Capsule, CapsuleError};
use crate::shrink::steps::with_steps;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios::refresh::refresh_in_controller_form;
use arc_scenarios::variant::Build;

/// One perturbed run that failed.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The plan that found it.
    pub plan: Plan,
    /// Which perturbed run it was (from 1, in the order the plans ran).
    pub run: usize,
    /// The oracles that failed, in the order the run reported them.
    pub oracles: Vec<&'static str>,
    /// The run as a capsule expecting the first of them.
    pub capsule: Capsule,
}

/// What an exploration did and found.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// Read points of the reference run.
    pub reads: usize,
    /// Write points of the reference run.
    pub writes: usize,
    /// Read points a run perturbed.
    pub reads_perturbed: usize,
    /// Write points a run perturbed.
    pub writes_perturbed: usize,
    /// Assignments of the reference run (GitHub's write points).
    pub assignments: usize,
    /// Assignments a run held.
    pub assignments_perturbed: usize,
    /// Requests of the held operations in the reference run (GitHub's read points).
    pub requests: usize,
    /// Requests a run held.
    pub requests_perturbed: usize,
    /// The controller's deletes of live runners in the reference run.
    pub runner_deletes: usize,
    /// Deletes an extra job arrived before.
    pub runner_deletes_perturbed: usize,
    /// The controller's creates of EphemeralRunners in the reference run.
    pub runner_creates: usize,
    /// Creates a rollout followed.
    pub runner_creates_perturbed: usize,
    /// Runs made (the reference not counted).
    pub runs: usize,
    /// Oracles the reference run itself failed (a world that fails unperturbed says little).
    pub reference_failures: Vec<&'static str>,
    /// The perturbed runs that failed.
    pub findings: Vec<Finding>,
    /// The fault-free reference run as a capsule (expecting the scenario's first oracle).
    pub reference: Capsule,
}

/// `capsule` without faults, disruptions or watch lags.
pub fn fault_free(capsule: &Capsule) -> Capsule {
    let mut out = with_steps(capsule, &[]);
    let none = WatchLag { default: LagRange::fixed(0), per_resource: Default::default() };
    out.plan.watch_lag = none.clone();
    out.plan.watch_cache_lag = none;
    out
}

/// Explores `build` in `scenario` from `seed`'s fault-free run over `network`, under `schedule` and the
/// `assumed` alternatives about GitHub, with up to `budget` perturbed runs.
pub fn explore(
    scenario: &'static dyn Scenario,
    build: Build,
    seed: Seed,
    (network, schedule, assumed): (Network, Schedule, &Assumed),
    budget: usize,
) -> Result<Exploration, CapsuleError> {
    let oracle = scenario.oracles().first().map_or("", |o| o.name());
    let of_run = Capsule::of_run(scenario, build, seed, network, oracle);
    let run = Capsule { schedule, assumed: assumed.clone(), ..of_run };
    let reference = fault_free(&run);
    let (verdict, record) = reference.run(TraceMode::HashOnly, Some(Interest::everything()))?;
    let points = Points {
        reads: points::read_points(&record),
        writes: points::write_points(&record),
        assignments: github_points::assignment_points(&record),
        deletes: github_points::runner_delete_points(&record),
        cancels: github_points::cancel_points(&record),
        requests: github_points::request_points(&record),
    };
    let generated = plans::plans(&points, budget);
    let findings = run_plans(&reference, build, &generated)?;
    let perturbed_reads: BTreeSet<(String, u32)> =
        generated.iter().filter_map(|p| p.read.as_ref()).map(|r| (r.resource.clone(), r.nth)).collect();
    let perturbed_writes: BTreeSet<u32> =
        generated.iter().filter_map(|p| p.write.as_ref()).map(|w| w.nth).collect();
    let held_assignments: BTreeSet<u32> =
        generated.iter().filter_map(|p| p.assignment.as_ref()).map(|a| a.nth).collect();
    let held_requests: BTreeSet<(&str, u32)> =
        generated.iter().filter_map(|p| p.request.as_ref()).map(|r| (r.operation, r.nth)).collect();
    let met_deletes: BTreeSet<(u64, &str)> =
        generated.iter().filter_map(|p| p.delete.as_ref()).map(|d| (d.at_ms, d.object.as_str())).collect();
    let followed_creates: BTreeSet<u32> =
        generated.iter().filter_map(|p| p.create.as_ref()).map(|c| c.nth).collect();
    let mut reference_failures: Vec<&'static str> = verdict.violations.iter().map(|v| v.oracle).collect();
    reference_failures.dedup();
    Ok(Exploration {
        reads: points.reads.len(),
        writes: points.writes.len(),
        reads_perturbed: perturbed_reads.len(),
        writes_perturbed: perturbed_writes.len(),
        assignments: points.assignments.len(),
        assignments_perturbed: held_assignments.len(),
        requests: points.requests.len(),
        requests_perturbed: held_requests.len(),
        runner_deletes: points.deletes.len(),
        runner_deletes_perturbed: met_deletes.len(),
        runner_creates: plans::runner_creates(&points).len(),
        runner_creates_perturbed: followed_creates.len(),
        runs: generated.len(),
        reference_failures,
        findings,
        reference,
    })
}

/// Runs each of `generated` from `reference` (a rollout's runner-spec change in `build`'s form) and
/// keeps the runs that failed an oracle.
fn run_plans(reference: &Capsule, build: Build, generated: &[Plan]) -> Result<Vec<Finding>, CapsuleError> {
    let revision_step = build.switches().scaling.actionable_revision;
    let mut findings = Vec::new();
    for (run, plan) in generated.iter().enumerate() {
        let mut capsule = reference.clone();
        capsule.plan.faults.perturbations = plan.perturbations.clone();
        capsule.plan.disruptions = plan.disruptions.clone();
        if !revision_step {
            capsule.plan.disruptions.iter_mut().for_each(refresh_in_controller_form);
        }
        let (verdict, _) = capsule.run(TraceMode::HashOnly, None)?;
        let mut oracles: Vec<&'static str> = verdict.violations.iter().map(|v| v.oracle).collect();
        oracles.dedup();
        if let Some(first) = oracles.first() {
            capsule.expected_oracle = first.to_string();
            findings.push(Finding { plan: plan.clone(), run: run + 1, oracles, capsule });
        }
    }
    Ok(findings)
}
