//! Running one (scenario, variant, seed): a fresh current-thread runtime with paused time, the world
//! built and run inside it, the oracles applied, the probes counted. Runs share nothing, so a sweep runs
//! one per thread.

use std::collections::BTreeMap;

use arc_controller::runtime::metrics::{API_CALLS_TOTAL, RECONCILE_ERRORS_TOTAL, RECONCILE_TOTAL};
use arc_sim::net::Network;
use arc_sim::record::{Interest, WorldEvent};
use arc_sim::{Seed, TraceMode};
use arc_world::run_world_on_turmoil;
use arc_world::{EarlyAnswer, RunRecord, World};

use arc_judging::oracles::Oracle;
use arc_judging::probes;
use arc_scenarios::kill_table::Judge;
use arc_scenarios::kill_table::expectations_in;
use arc_scenarios::scenario::{Scenario, Twin, WorldPlan};
use arc_scenarios::variant::{Build, Variant};
use arc_scenarios::verdict::{Verdict, Violation};

/// Why a run could not be carried out (as opposed to a run that found a violation).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The tokio runtime could not be built.
    #[error("cannot build the run's runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The world could not be built or set up.
    #[error("cannot build the world: {0}")]
    World(#[from] arc_world::WorldError),
}

/// Runs one seed of `variant` of the default (`arcsim`) profile and judges it, keeping of the record
/// what its judges need. `trace_mode` decides whether the record keeps trace lines.
pub fn run_one(
    scenario: &dyn Scenario,
    variant: Variant,
    seed: Seed,
    trace_mode: TraceMode,
) -> Result<(Verdict, RunRecord), RunError> {
    run_build(scenario, Build::arcsim(variant), seed, trace_mode)
}

/// Runs one seed of `build` to its end and judges it, keeping of the record what its judges need.
pub fn run_build(
    scenario: &dyn Scenario,
    build: Build,
    seed: Seed,
    trace_mode: TraceMode,
) -> Result<(Verdict, RunRecord), RunError> {
    run_build_keeping(scenario, build, seed, trace_mode, None)
}

/// [`run_build`], stopped as soon as the run has answered what a sweep asks of it: a bug variant's
/// run ends once every oracle of its kill rows in `scenario` has fired, when each of them judges a
/// record so far ([`Oracle::judges_so_far`]); otherwise (the fixed controller, a row judged at the
/// end) it runs to its end. The verdict then holds the violations of every oracle that judges a
/// record so far, found on the record up to the stop; kill counts are those of the whole run.
pub fn run_build_to_answer(
    scenario: &dyn Scenario,
    build: Build,
    seed: Seed,
    trace_mode: TraceMode,
) -> Result<(Verdict, RunRecord), RunError> {
    let answer = must_fail(scenario, build).map(|oracles| {
        EarlyAnswer::when(move |so_far| oracles.iter().all(|oracle| !oracle.check(so_far).is_empty()))
    });
    run_judged(scenario, build, seed, trace_mode, None, answer)
}

/// The oracles `build` must fail in `scenario` (its kill rows'), if every one of them judges a record
/// so far: what lets its run stop early.
pub fn must_fail(scenario: &dyn Scenario, build: Build) -> Option<Vec<&'static dyn Oracle>> {
    let rows = expectations_in(build.profile, build.variant, scenario.name());
    let oracles: Vec<&'static dyn Oracle> = rows
        .iter()
        .map(|row| match row.oracle {
            Judge::Run(oracle) if oracle.judges_so_far() => Some(oracle),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (!oracles.is_empty() && !build.variant.is_fixed()).then_some(oracles)
}

/// [`run_one`], keeping `keep` of the record instead of what the judges say they need (`None`).
pub fn run_one_keeping(
    scenario: &dyn Scenario,
    variant: Variant,
    seed: Seed,
    trace_mode: TraceMode,
    keep: Option<Interest>,
) -> Result<(Verdict, RunRecord), RunError> {
    run_build_keeping(scenario, Build::arcsim(variant), seed, trace_mode, keep)
}

/// [`run_build`], keeping `keep` of the record instead of what the judges say they need (`None`).
pub fn run_build_keeping(
    scenario: &dyn Scenario,
    build: Build,
    seed: Seed,
    trace_mode: TraceMode,
    keep: Option<Interest>,
) -> Result<(Verdict, RunRecord), RunError> {
    run_judged(scenario, build, seed, trace_mode, keep, None)
}

/// Runs one seed of `build` (stopping early if `answer` says so) and judges it.
fn run_judged(
    scenario: &dyn Scenario,
    build: Build,
    seed: Seed,
    trace_mode: TraceMode,
    keep: Option<Interest>,
    answer: Option<EarlyAnswer>,
) -> Result<(Verdict, RunRecord), RunError> {
    #[allow(clippy::disallowed_methods)] // wall clock ok: reported as wall time, never traced
    let started = std::time::Instant::now(); // allow-nondeterminism: wall time, reported only (the verdict's wall_ms)
    let twins = scenario.twins_for(seed, build);
    let keep = keep.unwrap_or_else(|| judges_interest(scenario, &twins));
    let plan = scenario.world_for(seed, build);
    let mut record = run_world_answering(plan, trace_mode, keep.clone(), answer)?;
    // A run that stopped early is judged on its record up to the stop, by the oracles whose verdict
    // a later event cannot retract; end-of-run oracles and twins are not asked.
    let answered_at = record.answered_at_ms;
    if let Some(at) = answered_at {
        record = record.before(at);
    }
    // An oracle judges the builds whose profile promises its property; a bug variant that turns the
    // property's switch off is judged (that is what kills it).
    let promised = build.profile.switches();
    let judges = scenario.oracles().into_iter().filter(|o| o.applies(&promised));
    let judges = judges.filter(|o| answered_at.is_none() || o.judges_so_far());
    let mut violations: Vec<Violation> = judges.flat_map(|o| o.check(&record)).collect();
    let mut twin_hashes = BTreeMap::new();
    for twin in twins.into_iter().filter(|_| answered_at.is_none()) {
        let other = run_world(twin.plan, TraceMode::HashOnly, keep.clone())?;
        twin_hashes.insert(twin.name, other.trace.hash());
        for oracle in &twin.oracles {
            violations.extend(oracle.compare(&record, &other).into_iter().map(|mut v| {
                v.message = format!("{} (against the {} twin)", v.message, twin.name);
                v
            }));
        }
    }
    let verdict = Verdict {
        scenario: scenario.name(),
        profile: build.profile,
        variant: build.variant,
        seed,
        violations,
        probes: probes::fired(&record),
        counters: headline_counters(&record),
        trace_hash: record.trace.hash(),
        twin_hashes,
        trace_lines: record.trace.len(),
        sim_ms: record.end_ms,
        answered_at_ms: answered_at,
        wall_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    };
    Ok((verdict, record))
}

/// What a run of `scenario` must keep of its record: everything its oracles, its twins' oracles and
/// the probes read, and the world's own steps (its configuration among them, which a failure's story
/// reads the parties' clocks from).
pub fn judges_interest(scenario: &dyn Scenario, twins: &[Twin]) -> Interest {
    let oracles = scenario.oracles().into_iter().map(|o| o.needs());
    let twin_oracles = twins.iter().flat_map(|t| t.oracles.iter().map(|o| o.needs()));
    let probes = probes::all().iter().map(|p| (p.needs)());
    let world = Interest::of::<WorldEvent>();
    oracles.chain(twin_oracles).chain(probes).fold(world, |all, needs| all.union(&needs))
}

/// Runs one world on a fresh paused current-thread runtime, keeping what `keep` wants of its record.
pub fn run_world(plan: WorldPlan, trace_mode: TraceMode, keep: Interest) -> Result<RunRecord, RunError> {
    run_world_answering(plan, trace_mode, keep, None)
}

/// [`run_world`], stopped early once `answer` says the record so far has answered it.
pub fn run_world_answering(
    plan: WorldPlan,
    trace_mode: TraceMode,
    keep: Interest,
    answer: Option<EarlyAnswer>,
) -> Result<RunRecord, RunError> {
    if plan.config.network == Network::Turmoil {
        let record =
            run_world_on_turmoil(plan.config, plan.families, trace_mode, keep, plan.settled, answer)?;
        return Ok(record);
    }
    let seed = plan.config.seed;
    let record = arc_world::runtime::run_seeded(seed, async move {
        let world = World::build(plan.config, plan.families, trace_mode, keep)?.answering(answer);
        world.run(plan.settled).await
    })??;
    Ok(record)
}

/// The figures a summary line shows.
pub fn headline_counters(record: &RunRecord) -> BTreeMap<String, i64> {
    let mut c = BTreeMap::new();
    let jobs = &record.jobs;
    let count = |f: &dyn Fn(&arc_sim::github::Job) -> bool| jobs.iter().filter(|j| f(j)).count() as i64;
    use arc_sim::github::{EndReason, JobResult};
    c.insert("jobs_submitted".into(), jobs.len() as i64);
    c.insert("jobs_completed".into(), count(&|j| j.end_reason() == Some(EndReason::Completed)));
    c.insert("jobs_canceled".into(), count(&|j| j.end_reason() == Some(EndReason::Canceled)));
    c.insert("jobs_lost".into(), count(&|j| j.end_reason() == Some(EndReason::RunnerLost)));
    c.insert(
        "jobs_canceled_by_runner_shutdown".into(),
        count(&|j| j.end_reason() == Some(EndReason::RunnerShutdown)),
    );
    c.insert("jobs_failed".into(), count(&|j| j.result() == Some(JobResult::Failed)));
    c.insert("jobs_unfinished".into(), count(&|j| !j.is_completed()));
    c.insert("runners_registered".into(), record.runners.len() as i64);
    let creates = |plural: &str| {
        record
            .audit()
            .filter(|a| a.resource == plural && a.verb == arc_sim::faults::ApiVerb::Create && a.took_effect())
            .count() as i64
    };
    c.insert("ephemeralrunners_created".into(), creates("ephemeralrunners"));
    c.insert("pods_created".into(), creates("pods"));
    for controller in
        ["autoscalingrunnerset", "ephemeralrunnerset", "ephemeralrunner", "autoscalinglistener", "runner"]
    {
        let n = record.metric(RECONCILE_TOTAL, &[("controller", controller)]);
        if n > 0 {
            c.insert(format!("reconciles_{controller}"), n);
        }
    }
    c.insert("reconcile_errors".into(), record.metric(RECONCILE_ERRORS_TOTAL, &[]));
    for (key, n) in record.metrics.iter().filter(|(k, _)| k.name == RECONCILE_ERRORS_TOTAL) {
        let label = |l| key.label(l).unwrap_or("-");
        c.insert(format!("reconcile_errors_{}_{}", label("controller"), label("reason")), *n);
    }
    c.insert("controller_api_calls".into(), record.metric(API_CALLS_TOTAL, &[]));
    c.insert("api_requests".into(), record.api_requests.values().sum::<u64>() as i64);
    c.insert("controller_restarts".into(), i64::from(record.controller_restarts));
    c
}
