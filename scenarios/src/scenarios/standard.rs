//! `standard`: the first end-to-end world. One AutoscalingRunnerSet (minRunners 0, maxRunners 10), the
//! standard workload (about 50 jobs over 10 sim-minutes), no faults. Every job must end without being
//! lost, runners must scale up with demand and back to zero, and no registration may be left behind.

use arc_controller::Families;
use arc_controller::scaleset::ScaleSetSettings;
use arc_sim::Seed;
use arc_world::{default_config, scale_set_settled};

use super::objects::{CONTROLLER_NAMESPACE, RUNNER_NAMESPACE, RUNNER_SET, github_secret, runner_set};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::{self, Oracle};
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

/// The standard world.
pub struct Standard;

/// The scale-set world every scale-set scenario starts from: secret + runner set, the standard
/// workload aimed at the runner set, the controller built as `variant`.
pub fn scale_set_world(seed: Seed, variant: Variant, min_runners: u32, max_runners: u32) -> WorldPlan {
    let mut config = default_config(seed);
    config.apiserver.namespaces.extend([RUNNER_NAMESPACE.to_string(), CONTROLLER_NAMESPACE.to_string()]);
    config.workload.labels = vec![RUNNER_SET.to_string()];
    config.switches = variant.switches(arc_controller::Profile::Arcsim);
    config.objects = vec![github_secret(RUNNER_NAMESPACE), runner_set(min_runners, max_runners)];
    let settings =
        ScaleSetSettings { controller_namespace: CONTROLLER_NAMESPACE.into(), ..Default::default() };
    WorldPlan {
        config,
        families: Families::scale_set(settings),
        settled: scale_set_settled(RUNNER_NAMESPACE, min_runners as usize),
    }
}

/// The oracles every fault-free scale-set world must satisfy.
pub fn scale_set_oracles() -> Vec<&'static dyn Oracle> {
    use oracles::{convergence, gate, jobs, phases, pods, registrations, removals};
    vec![
        &convergence::NoJobLost,
        &jobs::NoJobLostToControllerKill,
        &registrations::NoOrphanRegistration,
        &registrations::RegistrationRemovedBeforeRunnerGone,
        &registrations::JitConfigOncePerRunner,
        &removals::RemovedRunnerDeletedPromptly,
        &pods::PodOwnedByItsRunner,
        &pods::NoAlreadyExistsErrors,
        &pods::BoundedPodCreates,
        &phases::TerminalPhaseIsFinal,
        &phases::RunningOnlyAfterJobStarted,
        &gate::ScaleDownOnlyOnPatchZero,
        &convergence::ConvergesAfterHeal,
    ]
}

impl Scenario for Standard {
    fn name(&self) -> &'static str {
        "standard"
    }

    fn describe(&self) -> &'static str {
        "one runner set (min 0, max 10), ~50 jobs over 10 sim-minutes, no faults"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        scale_set_world(seed, variant, 0, 10)
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        scale_set_oracles()
    }

    /// The control world of the swarm's windows (issue 42): watch buffers never fill, the watch cache
    /// keeps its history, no watch stalls, removed runners stop at once (the default of
    /// `removed-runner-poll`), the API server is not under load, pods start quickly on nodes with room for
    /// all, no controller or listener process is ever stopped, runners create their sessions by direct call, and
    /// runner pods run no sidecar, native or regular.
    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const QUIET: Rate = Rate::measured(0, 200, 18_300_000);
        const UNLOADED: Rate = Rate::measured(0, 200, 21_300_000);
        const QUICK_STARTS: Rate = Rate::measured(0, 200, 22_000_000);
        const UNPAUSED: Rate = Rate::measured(0, 200, 24_000_000);
        const DIRECT_SESSIONS: Rate = Rate::measured(0, 200, 26_000_000);
        const LISTENER_UNPAUSED: Rate = Rate::measured(0, 200, 27_000_000);
        const NO_SIDECARS: Rate = Rate::measured(0, 200, 28_400_000);
        const NO_REGULAR_SIDECARS: Rate = Rate::measured(0, 200, 29_500_000);
        const GOALS: &[ProbeGoal] = &[
            ProbeGoal::ceiling(&probes::SLOW_WATCHER_RESUMED, QUIET),
            ProbeGoal::ceiling(&probes::SLOW_WATCHER_RELISTED, QUIET),
            ProbeGoal::ceiling(&probes::WATCH_STALLED_OVER_CHANGES, QUIET),
            ProbeGoal::ceiling(&probes::REGISTRATION_RETRIED_AFTER_REMOVAL, QUIET),
            ProbeGoal::ceiling(&probes::REQUEST_REJECTED_UNDER_LOAD, UNLOADED),
            ProbeGoal::ceiling(&probes::REQUEST_QUEUED_FOR_A_SECOND, UNLOADED),
            ProbeGoal::ceiling(&probes::POD_STARTED_A_MINUTE_AFTER_BINDING, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::IMAGE_PULL_BACKED_OFF, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::RUNNER_REMOVED_WHILE_BOOTING, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::POD_WAITED_UNSCHEDULABLE, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::POD_TAINT_EVICTED, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::PROCESS_OUTLIVED_FORCE_DELETE, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::POD_REPLACED_WHILE_OLD_PROCESS_RAN, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::KUBELET_STALL_HELD_A_DELETION, Rate::measured(0, 200, 28_900_000)),
            ProbeGoal::ceiling(&probes::INIT_CONTAINER_FAILED, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::CONTAINER_OOM_KILLED, QUICK_STARTS),
            ProbeGoal::ceiling(&probes::CONTROLLER_PAUSED_MID_RECONCILE, UNPAUSED),
            ProbeGoal::ceiling(&probes::LEADER_RESUMED_AFTER_TAKEOVER, UNPAUSED),
            ProbeGoal::ceiling(&probes::LISTENER_PAUSED_AS_JOBS_QUEUED, LISTENER_UNPAUSED),
            ProbeGoal::ceiling(&probes::LISTENER_ANSWER_WAITED_WHILE_PAUSED, LISTENER_UNPAUSED),
            ProbeGoal::ceiling(&probes::RUNNER_SESSION_RETRIED, DIRECT_SESSIONS),
            ProbeGoal::ceiling(&probes::RUNNER_SESSION_CONFLICTED, DIRECT_SESSIONS),
            ProbeGoal::ceiling(&probes::SIDECAR_CRASHED_BESIDE_RUNNER, NO_SIDECARS),
            ProbeGoal::ceiling(&probes::REGULAR_SIDECAR_OUTLIVED_RUNNER, NO_REGULAR_SIDECARS),
            ProbeGoal::ceiling(&probes::POD_FAILED_BESIDE_SUCCEEDED_RUNNER, NO_REGULAR_SIDECARS),
        ];
        GOALS
    }
}
