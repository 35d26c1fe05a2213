//! `steady-state`: the standard workload under a swarm of faults the seed picks (VOPR's swarm
//! testing): watch lag and watch-cache lag per resource, API server errors, throttling, conflicts,
//! latency, writes that commit and then fail (500, 504 or a dropped connection), dropped and expired
//! watches, GitHub errors and latency, GitHub calls that commit and then fail (a 5xx or a dropped
//! connection after the change), a slower or faster GitHub, pod evictions, controller and listener
//! restarts; in half the worlds a clock per party (`super::clocks`), and in half (drawn apart) removed
//! runners that retry "Registration … was not found" for minutes (`super::removed_registrations`), and
//! in 40% an API server under its other tenants' load (`super::load`), and a kubelet that stalls for
//! seconds in about half (`super::kubelet_stalls`). Every fault stops at the heal time (the safety phase); the world must then converge
//! within the liveness phase: runners back at the minimum, every job ended, nothing left deleting.

use arc_sim::Seed;
use arc_sim::apiserver::{ApiServerConfig, LagRange, WatchCacheWindow};
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb, FaultPlan, GitHubFault, GitHubFaultAction, Window};
use arc_sim::github::GitHubConfig;
use arc_sim::net::{HOST_APISERVER, HOST_CONTROLLER, NetFault};
use arc_world::Disruption;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::clocks::draw_party_clocks;
use super::container_failures::draw_container_failures;
use super::kubelet_stalls::draw_kubelet_stalls;
use super::load::draw_load;
use super::node_capacity::draw_node_capacity;
use super::node_loss::draw_node_loss;
use super::objects::{CONTROLLER_NAMESPACE, RUNNER_NAMESPACE, RUNNER_SET};
use super::pauses::{draw_listener_pauses, draw_pauses};
use super::removed_registrations::draw_removed_runner_poll;
use super::runner_sessions::draw_runner_sessions;
use super::sidecars::{draw_regular_sidecars, draw_sidecars};
use super::slow_starts::draw_slow_starts;
use super::standard::scale_set_world;
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::{self, Oracle};
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

/// The swarm.
pub struct SteadyState;

/// Faults stop here (the end of the workload): the safety phase ends, the liveness phase begins.
pub const HEAL_MS: u64 = 600_000;
/// The world must have settled this long after the heal.
pub const LIVENESS_MS: u64 = 1_800_000;

fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    rng.random_bool(p)
}

fn api_faults(rng: &mut ChaCha8Rng) -> Vec<ApiFault> {
    let window = Some(Window { start_ms: 0, end_ms: HEAL_MS });
    let rule = |verbs: Vec<ApiVerb>, probability: f64, action| ApiFault {
        verbs,
        resources: vec![],
        probability,
        window,
        action,
    };
    let mut out = Vec::new();
    if chance(rng, 0.5) {
        out.push(rule(vec![], rng.random_range(0.01..0.08), ApiFaultAction::Error { code: 500 }));
    }
    if chance(rng, 0.4) {
        out.push(rule(
            vec![],
            rng.random_range(0.01..0.05),
            ApiFaultAction::Throttle { retry_after_seconds: rng.random_range(1..3) },
        ));
    }
    if chance(rng, 0.5) {
        out.push(rule(
            vec![ApiVerb::Patch, ApiVerb::Update],
            rng.random_range(0.02..0.1),
            ApiFaultAction::Conflict,
        ));
    }
    if chance(rng, 0.5) {
        let max_ms = rng.random_range(50..800);
        out.push(rule(vec![], rng.random_range(0.05..0.3), ApiFaultAction::Latency { min_ms: 5, max_ms }));
    }
    if chance(rng, 0.4) {
        let action = ApiFaultAction::DropWatch { min_ms: 1_000, max_ms: rng.random_range(2_000..60_000) };
        out.push(rule(vec![ApiVerb::Watch], rng.random_range(0.05..0.3), action));
    }
    if chance(rng, 0.3) {
        out.push(rule(vec![ApiVerb::Watch], rng.random_range(0.02..0.1), ApiFaultAction::ExpireWatch));
    }
    out
}

/// Writes that commit and then fail. Drawn after everything else, so adding them left every other
/// draw of a seed as it was.
fn after_commit_faults(rng: &mut ChaCha8Rng) -> Vec<ApiFault> {
    if !chance(rng, 0.6) {
        return Vec::new();
    }
    let action = match rng.random_range(0..3) {
        0 => ApiFaultAction::CommitThenError { code: 504 },
        1 => ApiFaultAction::CommitThenError { code: 500 },
        _ => ApiFaultAction::CommitThenDrop,
    };
    let window = Some(Window { start_ms: 0, end_ms: HEAL_MS });
    vec![ApiFault {
        verbs: vec![],
        resources: vec![],
        probability: rng.random_range(0.01..0.06),
        window,
        action,
    }]
}

fn github_faults(rng: &mut ChaCha8Rng) -> Vec<GitHubFault> {
    let window = Some(Window { start_ms: 0, end_ms: HEAL_MS });
    let rule = |probability, action| GitHubFault { operations: vec![], probability, window, action };
    let mut out = Vec::new();
    if chance(rng, 0.5) {
        let code = [500, 502, 503][rng.random_range(0..3)];
        out.push(rule(rng.random_range(0.01..0.08), GitHubFaultAction::Error { code }));
    }
    if chance(rng, 0.3) {
        out.push(rule(rng.random_range(0.01..0.05), GitHubFaultAction::Throttle { retry_after_seconds: 1 }));
    }
    if chance(rng, 0.5) {
        let max_ms = rng.random_range(100..3_000);
        out.push(rule(rng.random_range(0.05..0.3), GitHubFaultAction::Latency { min_ms: 10, max_ms }));
    }
    out
}

/// Commit-then-fail faults: on every mutating call now and then, and on JIT registration, RemoveRunner
/// and session creation more often (the retries ARC must survive: AgentExists, a second RemoveRunner,
/// its own session in the way).
fn commit_then_fail_faults(rng: &mut ChaCha8Rng) -> Vec<GitHubFault> {
    let window = Some(Window { start_ms: 0, end_ms: HEAL_MS });
    let pick_action = |rng: &mut ChaCha8Rng| match rng.random_range(0..3) {
        0 => GitHubFaultAction::CommitThenDrop,
        n => GitHubFaultAction::CommitThenError { code: [500, 504][n - 1] },
    };
    let mut out = Vec::new();
    if chance(rng, 0.6) {
        let targeted = ["generate-jit-config", "remove-runner", "create-session"];
        let operations = targeted.iter().filter(|_| rng.random_bool(0.7)).map(|o| (*o).to_string()).collect();
        let action = pick_action(rng);
        out.push(GitHubFault { operations, probability: rng.random_range(0.05..0.25), window, action });
    }
    if chance(rng, 0.6) {
        let action = pick_action(rng);
        out.push(GitHubFault {
            operations: vec![],
            probability: rng.random_range(0.01..0.06),
            window,
            action,
        });
    }
    out
}

/// GitHub's pace for this seed: the base latency, JobStarted and pickup delays of the defaults scaled
/// to 50%, 100%, 200% or 400%.
fn github_pace(rng: &mut ChaCha8Rng, github: &mut GitHubConfig) {
    let percent = [50, 100, 200, 400][rng.random_range(0..4)];
    let defaults = GitHubConfig::default();
    github.latency = defaults.latency.scaled(percent);
    github.job_started_delay = defaults.job_started_delay.scaled(percent);
    github.runner_pickup_delay = defaults.runner_pickup_delay.scaled(percent);
}

/// Watch buffers that fill and a watch cache that forgets (issue 42): in 70% of the worlds a watcher
/// more than 3–30 events behind is closed (the cacher's buffers hold about 10 and 10); in half the
/// watch cache keeps a window of 5–75 s and at least 10–100 changes (kube-apiserver's: 75 s and 100; a shorter window stands in for a busy
/// cluster, whose other objects' churn evicts sooner). Drawn from a stream of their own, so the rest
/// of the swarm is as it was.
fn watch_buffers(rng: &mut ChaCha8Rng, apiserver: &mut ApiServerConfig) {
    if chance(rng, 0.7) {
        apiserver.slow_watcher_backlog = Some(rng.random_range(3..=30));
    }
    if chance(rng, 0.5) {
        let fresh_ms = rng.random_range(5_000..=75_000);
        apiserver.watch_cache_window =
            Some(WatchCacheWindow { fresh_ms, lower_bound: rng.random_range(10..=100) });
    }
}

/// Watches that go silent (issue 42): in 30% of the worlds, 1–5% of watches stall 1–60 s after they
/// open and stay silent until their timeout (kube's `timeoutSeconds`, 290 s), as a watch whose server
/// side or connection hangs does; drawn after [`watch_buffers`] from its stream.
fn watch_stalls(rng: &mut ChaCha8Rng) -> Vec<ApiFault> {
    if !chance(rng, 0.3) {
        return Vec::new();
    }
    vec![ApiFault {
        verbs: vec![ApiVerb::Watch],
        resources: vec![],
        probability: rng.random_range(0.01..0.05),
        window: Some(Window { start_ms: 0, end_ms: HEAL_MS }),
        action: ApiFaultAction::StallWatch { min_ms: 1_000, max_ms: 60_000 },
    }]
}

fn disruptions(rng: &mut ChaCha8Rng) -> Vec<Disruption> {
    let mut out = Vec::new();
    for _ in 0..rng.random_range(0..3) {
        out.push(Disruption::RestartController { at_ms: rng.random_range(30_000..HEAL_MS) });
    }
    for _ in 0..rng.random_range(0..3) {
        let (namespace, prefix) = (CONTROLLER_NAMESPACE.to_string(), format!("{RUNNER_SET}-"));
        out.push(Disruption::CrashPod {
            at_ms: rng.random_range(30_000..HEAL_MS),
            namespace,
            prefix,
            exit_code: 1,
        });
    }
    for _ in 0..rng.random_range(0..4) {
        let reason = ["Evicted", "OutOfmemory"][rng.random_range(0..2)].to_string();
        let (namespace, prefix) = (RUNNER_NAMESPACE.to_string(), format!("{RUNNER_SET}-runner-"));
        out.push(Disruption::EvictPod {
            at_ms: rng.random_range(30_000..HEAL_MS),
            namespace,
            prefix,
            reason,
        });
    }
    out
}

/// The swarm's network faults under `--network turmoil`, all healed by [`HEAL_MS`]: the controller
/// partitioned from the API server (one way a third of the time, half-open, its segments held, a
/// third), its watches cut, a long poll dropped, the
/// controller's host crashed and bounced — each drawn or not.
fn swarm_network_faults(rng: &mut ChaCha8Rng) -> Vec<NetFault> {
    let mut out = Vec::new();
    let window = |rng: &mut ChaCha8Rng, min_ms: u64, max_ms: u64| {
        let start_ms = rng.random_range(0..HEAL_MS - max_ms);
        Window { start_ms, end_ms: start_ms + rng.random_range(min_ms..max_ms) }
    };
    if chance(rng, 0.5) {
        let (a, b) = (HOST_CONTROLLER.to_string(), HOST_APISERVER.to_string());
        let window = window(rng, 5_000, 60_000);
        // A third of them half-open: the connections stay, their segments wait (requests hang).
        let fault = match rng.random_range(0..6) {
            0 | 1 => NetFault::Hold { a, b, window },
            n => NetFault::Partition { a, b, window, one_way: n % 2 == 0 },
        };
        out.push(fault);
    }
    if chance(rng, 0.5) {
        let window = window(rng, 30_000, 300_000);
        out.push(NetFault::CutWatch { resources: Vec::new(), after_events: rng.random_range(5..50), window });
    }
    if chance(rng, 0.3) {
        out.push(NetFault::DropLongPoll { at_ms: rng.random_range(0..HEAL_MS) });
    }
    if chance(rng, 0.3) {
        let at_ms = rng.random_range(0..HEAL_MS - 10_000);
        out.push(NetFault::CrashController { at_ms, down_ms: rng.random_range(1_000..10_000) });
    }
    out
}

impl Scenario for SteadyState {
    fn network_faults(&self, seed: Seed) -> Vec<NetFault> {
        swarm_network_faults(&mut seed.named_rng("scenario/steady-state/network"))
    }

    fn name(&self) -> &'static str {
        "steady-state"
    }

    fn describe(&self) -> &'static str {
        "the standard workload under a seeded swarm of faults, healed at 10 min; must converge within 30 min"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        let mut rng = seed.named_rng("scenario/steady-state");
        let min_runners = rng.random_range(0..3);
        let mut plan = scale_set_world(seed, variant, min_runners, 10);
        for plural in ["pods", "ephemeralrunners", "ephemeralrunnersets", "secrets", "autoscalinglisteners"] {
            let max_ms = [0, 50, 500, 2_000][rng.random_range(0..4)];
            plan.config.apiserver.watch_lag.per_resource.insert(plural.into(), LagRange::between(0, max_ms));
        }
        plan.config.faults = FaultPlan {
            api: api_faults(&mut rng),
            github: github_faults(&mut rng),
            network: Vec::new(),
            perturbations: Vec::new(),
        };
        plan.config.disruptions = disruptions(&mut rng);
        plan.config.faults.api.extend(after_commit_faults(&mut rng));
        for plural in ["pods", "ephemeralrunners", "ephemeralrunnersets", "secrets", "autoscalinglisteners"] {
            let max_ms = [0, 10, 100, 1_000][rng.random_range(0..4)];
            plan.config
                .apiserver
                .watch_cache_lag
                .per_resource
                .insert(plural.into(), LagRange::between(0, max_ms));
        }
        let mut watch_rng = seed.named_rng("scenario/steady-state/watch-buffers");
        watch_buffers(&mut watch_rng, &mut plan.config.apiserver);
        plan.config.faults.api.extend(watch_stalls(&mut watch_rng));
        let mut github_rng = seed.named_rng("scenario/steady-state/github");
        plan.config.faults.github.extend(commit_then_fail_faults(&mut github_rng));
        github_pace(&mut github_rng, &mut plan.config.github);
        draw_party_clocks(seed, &mut plan, 0.5);
        draw_removed_runner_poll(seed, &mut plan, 0.5);
        draw_load(seed, &mut plan, 0.4, HEAL_MS);
        draw_slow_starts(seed, &mut plan, 0.4);
        draw_node_capacity(seed, &mut plan, 0.3);
        draw_node_loss(seed, &mut plan, 0.25);
        draw_kubelet_stalls(seed, &mut plan, 0.6);
        draw_container_failures(seed, &mut plan, 0.3, HEAL_MS);
        draw_pauses(seed, &mut plan, 0.25, HEAL_MS);
        draw_runner_sessions(seed, &mut plan, 0.5);
        draw_listener_pauses(seed, &mut plan, 0.25, HEAL_MS);
        draw_sidecars(seed, &mut plan, 0.3);
        draw_regular_sidecars(seed, &mut plan, 0.4);
        plan.config.workload.horizon_ms = HEAL_MS;
        plan.config.horizon_ms = HEAL_MS + LIVENESS_MS;
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        use oracles::{convergence, deletion, gate, jobs, phases, pods, registrations, removals};
        vec![
            &jobs::NoJobLostToControllerKill,
            &deletion::NoBusyRunnerDeleted,
            &deletion::FinalizersInOneWrite,
            &pods::NoAlreadyExistsErrors,
            &pods::BoundedPodCreates,
            &registrations::JitConfigOncePerRunner,
            &deletion::NoRunningWhileDeleting,
            &phases::TerminalPhaseIsFinal,
            &phases::RunningOnlyAfterJobStarted,
            &pods::PodOwnedByItsRunner,
            &registrations::NoOrphanRegistration,
            &removals::RemovedRunnerDeletedPromptly,
            &gate::ScaleDownOnlyOnPatchZero,
            &convergence::ConvergesAfterHeal,
        ]
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const GOALS: &[ProbeGoal] = &[
            ProbeGoal::floor(&probes::STALE_POD_CACHE_READ, Rate::measured(91, 100, 2_000_000)),
            ProbeGoal::floor(&probes::API_COMMITTED_THEN_FAILED, Rate::measured(60, 100, 2_000_000)),
            ProbeGoal::floor(&probes::RETRY_AFTER_COMMIT_ALREADY_EXISTS, Rate::measured(57, 100, 2_000_000)),
            ProbeGoal::floor(&probes::GITHUB_COMMITTED_THEN_FAILED, Rate::measured(81, 100, 2_000_000)),
            ProbeGoal::floor(&probes::JIT_RETRY_AGENT_EXISTS, Rate::measured(69, 100, 2_000_000)),
            ProbeGoal::floor(&probes::REMOVE_RUNNER_RETRIED_AFTER_COMMIT, Rate::measured(73, 100, 2_000_000)),
            ProbeGoal::floor(&probes::SESSION_RETRY_CONFLICT, Rate::measured(281, 1_000, 22_100_000)),
            ProbeGoal::floor(&probes::SLOW_WATCHER_RESUMED, Rate::measured(76, 200, 15_000_000)),
            ProbeGoal::floor(&probes::SLOW_WATCHER_RELISTED, Rate::measured(17, 200, 15_000_000)),
            ProbeGoal::floor(&probes::WATCH_STALLED_OVER_CHANGES, Rate::measured(20, 200, 15_000_000)),
            ProbeGoal::floor(
                &probes::REGISTRATION_RETRIED_AFTER_REMOVAL,
                Rate::measured(198, 400, 20_700_000),
            ),
            ProbeGoal::floor(&probes::REQUEST_REJECTED_UNDER_LOAD, Rate::measured(42, 200, 21_400_000)),
            ProbeGoal::floor(&probes::REQUEST_QUEUED_FOR_A_SECOND, Rate::measured(50, 200, 21_400_000)),
            ProbeGoal::floor(
                &probes::POD_STARTED_A_MINUTE_AFTER_BINDING,
                Rate::measured(93, 200, 22_000_000),
            ),
            ProbeGoal::floor(&probes::IMAGE_PULL_BACKED_OFF, Rate::measured(86, 200, 22_000_000)),
            ProbeGoal::floor(&probes::RUNNER_REMOVED_WHILE_BOOTING, Rate::measured(41, 200, 22_000_000)),
            ProbeGoal::floor(&probes::POD_WAITED_UNSCHEDULABLE, Rate::measured(57, 200, 22_000_000)),
            ProbeGoal::floor(&probes::POD_TAINT_EVICTED, Rate::measured(31, 200, 22_000_000)),
            ProbeGoal::floor(&probes::PROCESS_OUTLIVED_FORCE_DELETE, Rate::measured(11, 200, 22_000_000)),
            ProbeGoal::floor(
                &probes::POD_REPLACED_WHILE_OLD_PROCESS_RAN,
                Rate::measured(11, 200, 22_000_000),
            ),
            ProbeGoal::floor(&probes::KUBELET_STALL_HELD_A_DELETION, Rate::measured(59, 1000, 29_000_000)),
            ProbeGoal::floor(&probes::INIT_CONTAINER_FAILED, Rate::measured(50, 200, 22_000_000)),
            ProbeGoal::floor(&probes::CONTAINER_OOM_KILLED, Rate::measured(29, 200, 22_000_000)),
            ProbeGoal::floor(&probes::SIDECAR_CRASHED_BESIDE_RUNNER, Rate::measured(62, 200, 28_200_000)),
            ProbeGoal::floor(&probes::REGULAR_SIDECAR_OUTLIVED_RUNNER, Rate::measured(289, 1000, 29_400_000)),
            ProbeGoal::floor(
                &probes::POD_FAILED_BESIDE_SUCCEEDED_RUNNER,
                Rate::measured(285, 1000, 29_400_000),
            ),
            ProbeGoal::floor(&probes::CONTROLLER_PAUSED_MID_RECONCILE, Rate::measured(17, 200, 24_000_000)),
            ProbeGoal::floor(&probes::RUNNER_SESSION_RETRIED, Rate::measured(84, 200, 26_000_000)),
            ProbeGoal::floor(&probes::LISTENER_PAUSED_AS_JOBS_QUEUED, Rate::measured(15, 200, 27_000_000)),
            ProbeGoal::floor(
                &probes::LISTENER_ANSWER_WAITED_WHILE_PAUSED,
                Rate::measured(21, 200, 27_000_000),
            ),
            ProbeGoal::floor(&probes::RUNNER_SESSION_CONFLICTED, Rate::measured(53, 200, 26_000_000)),
        ];
        GOALS
    }
}
