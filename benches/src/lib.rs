//! Shared helpers for arcsim's criterion benches and their exact-count tests: worlds with the
//! optimisations switched on or off, and the figures read from a run's record (reconciles per
//! controller, updates dropped per predicate, deep copies, mutating calls).
//!
//! Counts come from the controller's own metrics registry, so they are exact for a seed; timings come
//! from criterion. Nothing here asserts on wall-clock time.

pub mod edges;

use std::collections::BTreeMap;

use arc_controller::runtime::metrics::{DEEP_COPIES_TOTAL, PREDICATE_DROPPED_TOTAL, RECONCILE_TOTAL};
use arc_judging::oracles::TwinOracle;
use arc_judging::oracles::equivalence::SameCallsAndFinalState;
use arc_scenarios::scenario::WorldPlan;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::apiserver::{LagRange, WatchLag};
use arc_sim::{Seed, TraceMode};
use arc_world::RunRecord;
use arcsim::runner::run_world;

/// The four scale-set controllers, as their metrics name them.
pub const CONTROLLERS: [&str; 4] =
    ["autoscalingrunnerset", "ephemeralrunnerset", "ephemeralrunner", "autoscalinglistener"];

/// Which optimisations a run has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switches {
    /// Update predicates on the owned watches.
    pub predicates: bool,
    /// Lazy copy in the reconcile entry points.
    pub lazy_copy: bool,
}

impl Switches {
    /// Everything on (the shipped configuration).
    pub const ON: Switches = Switches { predicates: true, lazy_copy: true };
}

/// `scenario`'s world for `seed` with `switches`; `quiet` makes requests take no simulated time and
/// watches deliver at once and clients go unlimited, so that switching an optimisation cannot move any
/// event in time.
pub fn plan(scenario: &str, seed: u64, switches: Switches, quiet: bool) -> WorldPlan {
    let found = scenarios::find(scenario).expect("a known scenario");
    let mut plan = found.world(Seed(seed), Variant::Fixed);
    plan.config.switches.optimisations.predicates = switches.predicates;
    plan.config.switches.optimisations.lazy_copy = switches.lazy_copy;
    if quiet {
        plan.config.apiserver.request_latency = LagRange::fixed(0);
        plan.config.apiserver.watch_lag = WatchLag::default();
        plan.config.apiserver.watch_cache_lag = WatchLag::default();
        plan.config.github.latency = arc_sim::github::ServiceLatency::ZERO;
        // The twins' request counts differ by design; a client limit would turn extra reads into later writes.
        plan.config.client_rate_limits = false;
    }
    plan
}

/// Runs a plan (hash-only trace), keeping the API requests the counts and the equivalence oracle read
/// and the watch deliveries and commits [`edges::measure`] reads.
pub fn run(plan: WorldPlan) -> RunRecord {
    let needs = SameCallsAndFinalState.needs().union(&edges::needs());
    run_world(plan, TraceMode::HashOnly, needs).expect("the world runs")
}

/// Which optional fields the reconcilers of `plan`'s controller read.
pub fn reads(plan: &WorldPlan) -> edges::Reads {
    let fixes = &plan.config.switches.fixes;
    edges::Reads {
        runner_job_id: fixes.predicate_includes_job_id,
        runner_set_counts: fixes.ars_predicate_includes_counts,
    }
}

/// Reconciles per controller.
pub fn reconciles(record: &RunRecord) -> BTreeMap<&'static str, i64> {
    CONTROLLERS.iter().map(|c| (*c, record.metric(RECONCILE_TOTAL, &[("controller", c)]))).collect()
}

/// Updates dropped, per predicate name.
pub fn dropped(record: &RunRecord) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    for (key, value) in record.metrics.iter().filter(|(k, _)| k.name == PREDICATE_DROPPED_TOTAL) {
        *out.entry(key.label("predicate").unwrap_or("").to_string()).or_insert(0) += value;
    }
    out
}

/// Deep copies of cached objects, over every kind.
pub fn deep_copies(record: &RunRecord) -> i64 {
    record.metric(DEEP_COPIES_TOTAL, &[])
}

/// Successful mutating calls of the controller and listeners.
pub fn mutating_calls(record: &RunRecord) -> usize {
    record
        .audit()
        .filter(|a| {
            a.verb.is_mutating() && a.code < 300 && matches!(a.actor.as_str(), "controller" | "listener")
        })
        .count()
}

/// The equivalence oracle's verdict on two runs: empty when they made the same mutating calls and
/// ended alike.
pub fn differences(base: &RunRecord, twin: &RunRecord) -> Vec<String> {
    SameCallsAndFinalState
        .compare(base, twin)
        .into_iter()
        .map(|v| format!("{}: {}", v.objects.join(", "), v.message))
        .collect()
}

/// The standard workload scaled: maxRunners and the job rate multiplied by `factor` (1 = 10 runners,
/// about 50 jobs over 10 sim-minutes).
pub fn scaled_standard(seed: u64, factor: u32) -> WorldPlan {
    let mut plan = plan("standard", seed, Switches::ON, false);
    plan.config.workload.arrivals_per_minute *= f64::from(factor);
    plan.config.objects[1]["spec"]["maxRunners"] = (10 * factor).into();
    plan
}
