//! Coverage probes: named race windows that a run either hit or did not, derived from the run's
//! record (API traffic, reads, commits, GitHub events, kubelet events), never from the controller.
//! Each counts the interleaving its name says and nothing wider (a 409 on a pod the controller had
//! already seen is not the cache race). A scenario declares which probes it exists to hit, with a
//! floor on the share of seeds that hit each; its control world (the same world without the race's
//! ingredient) declares a ceiling (see `Scenario::control` in arc-scenarios).
//!
//! - [`history`]: commits and reads indexed for the questions probes ask.
//! - [`cache_lag`], [`removal`], [`tokens`], [`controller`], [`after_commit`], [`user_delete`]: the counting
//!   functions, by race.
//! - [`slow_watchers`]: watches the API server closed for falling behind, and what their clients did;
//!   [`watch_stalls`]: watches that went silent while their resource changed.
//! - [`network`]: the network's faults (turmoil backend) and what the clients did after them.
//! - [`github`]: the fake GitHub's commit-then-fail faults, timing and capacity, from its call log.
//! - [`load`]: the controller's requests that priority and fairness queued or turned away.
//! - [`slow_starts`], [`node_loss`], [`container_failures`]: the kubelet's slow starts and room, a
//!   node that stops answering, init containers that fail and OOM kills.
//! - [`pauses`]: a controller process stopped and gone on; [`listener_pauses`]: a listener's.
//! - [`runner_sessions`]: runners' sessions created over HTTP, failed and tried again.

pub mod after_commit;
pub mod cache_lag;
pub mod config_sh;
pub mod container_failures;
pub mod controller;
pub mod github;
pub mod history;
pub mod listener_pauses;
pub mod load;
pub mod network;
pub mod node_loss;
pub mod pauses;
pub mod removal;
pub mod removed_registration;
pub mod runner_sessions;
pub mod runner_states;
pub mod runner_times;
pub mod scale_downs;
pub mod slow_starts;
pub mod slow_watchers;
pub mod tokens;
pub mod user_delete;
pub mod watch_stalls;

use std::collections::BTreeMap;

use arc_sim::apiserver::reads::ReadEntry;
use arc_sim::apiserver::{ApiFault, AuditEntry, CacheRead, Committed, SeatWait, WatchOpened, WatchSent};
use arc_sim::github::{GitHubCall, GitHubEvent};
use arc_sim::kubelet::KubeletEvent;
use arc_sim::net::NetEvent;
use arc_sim::record::{Interest, WorldEvent};
use arc_world::RunRecord;

use crate::rates::Rate;

/// What a scenario asks of one probe over a sweep's seeds, from a rate measured on other seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeBound {
    /// A race world: the probe fires in at least [`Rate::floor`] of the seeds.
    AtLeast(Rate),
    /// A control world: the probe fires in at most [`Rate::ceiling`] of the seeds.
    AtMost(Rate),
}

impl ProbeBound {
    /// Why `hits` of `seeds` is out of bounds, if it is.
    pub fn check(self, hits: u32, seeds: u32) -> Result<(), String> {
        match self {
            ProbeBound::AtLeast(rate) if hits < rate.floor(seeds) => Err(format!(
                "fired in {hits} of {seeds} seeds, under its floor {} (measured {}/{} from seed {})",
                rate.floor(seeds),
                rate.hits,
                rate.seeds,
                rate.from
            )),
            ProbeBound::AtMost(rate) if hits > rate.ceiling(seeds) => Err(format!(
                "fired in {hits} of {seeds} seeds of the control world, over its ceiling {} (measured {}/{} from seed {})",
                rate.ceiling(seeds),
                rate.hits,
                rate.seeds,
                rate.from
            )),
            _ => Ok(()),
        }
    }

    /// `≥ k` or `≤ k` for a sweep of `seeds` seeds.
    pub fn describe(self, seeds: u32) -> String {
        match self {
            ProbeBound::AtLeast(rate) => format!("floor {}/{seeds}", rate.floor(seeds)),
            ProbeBound::AtMost(rate) => format!("ceiling {}/{seeds}", rate.ceiling(seeds)),
        }
    }
}

/// A probe a scenario declares, with its bound.
#[derive(Debug, Clone, Copy)]
pub struct ProbeGoal {
    /// The probe.
    pub probe: &'static Probe,
    /// What the scenario's seeds must show of it.
    pub bound: ProbeBound,
}

impl ProbeGoal {
    /// A race world's goal: fire at least as often as `rate` promises.
    pub const fn floor(probe: &'static Probe, rate: Rate) -> Self {
        ProbeGoal { probe, bound: ProbeBound::AtLeast(rate) }
    }

    /// A control world's goal: stay as quiet as `rate` promises.
    pub const fn ceiling(probe: &'static Probe, rate: Rate) -> Self {
        ProbeGoal { probe, bound: ProbeBound::AtMost(rate) }
    }
}

/// A named race window: its name, what it is, and how to count it in a run.
#[derive(Debug)]
pub struct Probe {
    /// Its name.
    pub name: &'static str,
    /// One line on the window.
    pub describe: &'static str,
    /// How many times the window opened in a run.
    pub count: fn(&RunRecord) -> u32,
    /// The events it reads from the run's record.
    pub needs: fn() -> Interest,
}

fn pod_cache_needs() -> Interest {
    Interest::of_resources::<AuditEntry>(&["pods"])
        .and_resources::<Committed>(&["pods"])
        .and_resources::<ReadEntry>(&["pods"])
}

/// `pod-create-already-exists`.
pub const POD_CREATE_ALREADY_EXISTS: Probe = Probe {
    name: "pod-create-already-exists",
    describe: "a runner-pod create met AlreadyExists while the pod in the way had not reached the controller's cache",
    count: cache_lag::pod_create_met_unseen_pod,
    needs: pod_cache_needs,
};

/// `stale-pod-cache-read`.
pub const STALE_POD_CACHE_READ: Probe = Probe {
    name: "stale-pod-cache-read",
    describe: "the controller created or deleted a runner pod whose current state had not reached its cache",
    count: cache_lag::stale_pod_cache_read,
    needs: pod_cache_needs,
};

/// `remove-runner-lost-to-assignment`.
pub const REMOVE_RUNNER_LOST_TO_ASSIGNMENT: Probe = Probe {
    name: "remove-runner-lost-to-assignment",
    describe: "RemoveRunner answered busy for a runner the controller last saw idle, assigned a job within 10 s before",
    count: removal::remove_runner_lost_to_assignment,
    needs: || {
        Interest::of::<GitHubEvent>()
            .and_resources::<Committed>(&["ephemeralrunners"])
            .and_resources::<ReadEntry>(&["ephemeralrunners"])
    },
};

/// `assignment-lost-to-remove-runner`.
pub const ASSIGNMENT_LOST_TO_REMOVE_RUNNER: Probe = Probe {
    name: "assignment-lost-to-remove-runner",
    describe: "RemoveRunner removed an idle runner while a job of its scale set waited",
    count: removal::assignment_lost_to_remove_runner,
    needs: || Interest::of::<GitHubEvent>(),
};

/// `job-assigned-within-1s-of-pod-delete`.
pub const JOB_ASSIGNED_WITHIN_1S_OF_POD_DELETE: Probe = Probe {
    name: "job-assigned-within-1s-of-pod-delete",
    describe: "a job was assigned to a runner within 1 s of its pod's delete",
    count: removal::job_assigned_within_1s_of_pod_delete,
    needs: || {
        Interest::of_resources::<AuditEntry>(&["pods", "ephemeralrunners", "runners"])
            .and::<GitHubEvent>()
            .and::<KubeletEvent>()
    },
};

/// `job-assigned-after-pod-deletion`.
pub const JOB_ASSIGNED_AFTER_POD_DELETION: Probe = Probe {
    name: "job-assigned-after-pod-deletion",
    describe: "a job was assigned to a runner whose pod already had a deletionTimestamp",
    count: removal::job_assigned_after_pod_deletion,
    needs: || Interest::of_resources::<Committed>(&["pods"]).and::<GitHubEvent>().and::<KubeletEvent>(),
};

/// `token-expired-before-container-start`.
pub const TOKEN_EXPIRED_BEFORE_CONTAINER_START: Probe = Probe {
    name: "token-expired-before-container-start",
    describe: "a legacy runner container started holding a registration token that had already expired",
    count: tokens::container_started_with_expired_token,
    needs: || Interest::of_resources::<Committed>(&["runners", "pods"]).and::<KubeletEvent>(),
};

/// `token-refreshed-while-busy`.
pub const TOKEN_REFRESHED_WHILE_BUSY: Probe = Probe {
    name: "token-refreshed-while-busy",
    describe: "a legacy runner's token was refreshed while it ran a job",
    count: tokens::token_refreshed_while_busy,
    needs: || Interest::of_resources::<Committed>(&["runners"]),
};

/// `pod-ran-on-after-registration-removed`.
pub const POD_RAN_ON_AFTER_REGISTRATION_REMOVED: Probe = Probe {
    name: "pod-ran-on-after-registration-removed",
    describe: "a runner's registration was removed while it polled and its pod ran on for 30 s or more, retrying \"Registration was not found\"",
    count: removed_registration::pod_ran_on_after_registration_removed,
    needs: Interest::of::<KubeletEvent>,
};

/// `registration-retried-after-removal`.
pub const REGISTRATION_RETRIED_AFTER_REMOVAL: Probe = Probe {
    name: "registration-retried-after-removal",
    describe: "a runner's registration was removed while it polled and its process retried \"Registration was not found\" instead of exiting",
    count: removed_registration::registration_retried_after_removal,
    needs: Interest::of::<KubeletEvent>,
};

/// `token-refreshed-before-expiry`.
pub const TOKEN_REFRESHED_BEFORE_EXPIRY: Probe = Probe {
    name: "token-refreshed-before-expiry",
    describe: "a legacy runner's token was replaced while GitHub still held it valid: the controller's clock read ahead of GitHub's",
    count: tokens::token_refreshed_before_expiry,
    needs: || Interest::of_resources::<Committed>(&["runners"]),
};

/// `idle-runner-scaled-down`.
pub const IDLE_RUNNER_SCALED_DOWN: Probe = Probe {
    name: "idle-runner-scaled-down",
    describe: "an idle runner was scaled down while the controller's cache could also hold its set at a non-zero patch ID",
    count: scale_downs::with_nonzero_patch_held,
    needs: scale_downs::needs,
};

/// `unprojected-runner-update`.
pub const UNPROJECTED_RUNNER_UPDATE: Probe = Probe {
    name: "unprojected-runner-update",
    describe: "an EphemeralRunner update reached the controller changing nothing the runner-set reconciler reads",
    count: controller::unprojected_runner_update,
    needs: || {
        Interest::of_resources::<WatchSent>(&["ephemeralrunners"])
            .and_resources::<Committed>(&["ephemeralrunners"])
    },
};

/// `listener-patch-conflict`.
pub const LISTENER_PATCH_CONFLICT: Probe = Probe {
    name: "listener-patch-conflict",
    describe: "the listener's optimistic-lock Running write met a Conflict",
    count: controller::listener_patch_conflict,
    needs: || Interest::of_resources::<AuditEntry>(&["ephemeralrunners"]),
};

/// `controller-restart-mid-reconcile`.
pub const CONTROLLER_RESTART_MID_RECONCILE: Probe = Probe {
    name: "controller-restart-mid-reconcile",
    describe: "the controller was killed within 1 s of its last API request",
    count: controller::restart_mid_reconcile,
    needs: || Interest::of::<AuditEntry>().and::<WorldEvent>(),
};

/// `api-committed-then-failed`.
pub const API_COMMITTED_THEN_FAILED: Probe = Probe {
    name: "api-committed-then-failed",
    describe: "a mutating request committed, then its answer was a 500/504 or a dropped connection",
    count: after_commit::api_committed_then_failed,
    needs: Interest::of::<ApiFault>,
};

/// `retry-after-commit-already-exists`.
pub const RETRY_AFTER_COMMIT_ALREADY_EXISTS: Probe = Probe {
    name: "retry-after-commit-already-exists",
    describe: "a retry of a write that had committed met AlreadyExists, NotFound or Conflict",
    count: after_commit::retry_met_committed_write,
    needs: Interest::of::<AuditEntry>,
};

/// `stale-list-from-watch-cache`.
pub const STALE_LIST_FROM_WATCH_CACHE: Probe = Probe {
    name: "stale-list-from-watch-cache",
    describe: "a list or watch served from the watch cache was handed a state older than the store's",
    count: after_commit::stale_read_from_watch_cache,
    needs: Interest::of::<CacheRead>,
};

/// `github-committed-then-failed`.
pub const GITHUB_COMMITTED_THEN_FAILED: Probe = Probe {
    name: "github-committed-then-failed",
    describe: "a mutating GitHub call committed and then its client got a 5xx or a dropped connection",
    count: github::github_committed_then_failed,
    needs: || Interest::of::<GitHubCall>(),
};

/// `jit-retry-agent-exists`.
pub const JIT_RETRY_AGENT_EXISTS: Probe = Probe {
    name: "jit-retry-agent-exists",
    describe: "a GenerateJitConfig retried after a committed failure met 409 AgentExists",
    count: github::jit_retry_agent_exists,
    needs: || Interest::of::<GitHubCall>(),
};

/// `session-retry-conflict`.
pub const SESSION_RETRY_CONFLICT: Probe = Probe {
    name: "session-retry-conflict",
    describe: "a CreateMessageSession retried after a committed failure met 409 (its own session)",
    count: github::session_retry_conflict,
    needs: || Interest::of::<GitHubCall>(),
};

/// `remove-runner-retried-after-commit`.
pub const REMOVE_RUNNER_RETRIED_AFTER_COMMIT: Probe = Probe {
    name: "remove-runner-retried-after-commit",
    describe: "a RemoveRunner that removed the runner but failed was retried (204: nothing left to remove)",
    count: github::remove_runner_retried_after_commit,
    needs: || Interest::of::<GitHubCall>(),
};

/// `job-started-delayed`.
pub const JOB_STARTED_DELAYED: Probe = Probe {
    name: "job-started-delayed",
    describe: "a RemoveRunner or delete hit a runner between its job's assignment and the JobStarted",
    count: removal::job_started_delayed,
    needs: || {
        Interest::of_resources::<AuditEntry>(&["pods", "ephemeralrunners", "runners"])
            .and::<GitHubEvent>()
            .and::<KubeletEvent>()
    },
};

/// `acquisition-capped`.
pub const ACQUISITION_CAPPED: Probe = Probe {
    name: "acquisition-capped",
    describe: "AcquireJobs left a job queued because the scale set was at its listener's capacity",
    count: github::acquisition_capped,
    needs: || Interest::of::<GitHubEvent>(),
};

/// `runner-removed-before-job-started`.
pub const RUNNER_REMOVED_BEFORE_JOB_STARTED: Probe = Probe {
    name: "runner-removed-before-job-started",
    describe: "weak removal: RemoveRunner removed a runner whose assigned job was not yet announced",
    count: github::runner_removed_before_job_started,
    needs: || Interest::of::<GitHubEvent>(),
};

fn network_needs() -> Interest {
    Interest::of::<NetEvent>().and::<AuditEntry>().and::<WatchOpened>().and::<WatchSent>().and::<GitHubCall>()
}

/// `watch-resumed-from-rv`.
pub const WATCH_RESUMED_FROM_RV: Probe = Probe {
    name: "watch-resumed-from-rv",
    describe: "a watch whose connection the network cut was resumed from a resourceVersion",
    count: network::watch_resumed_from_rv,
    needs: network_needs,
};

/// `relist-after-410`.
pub const RELIST_AFTER_410: Probe = Probe {
    name: "relist-after-410",
    describe: "a watch answered 410 Expired was followed by a relist of its resource by the same client",
    count: network::relist_after_410,
    needs: network_needs,
};

/// `controller-bounced-mid-reconcile`.
pub const CONTROLLER_BOUNCED_MID_RECONCILE: Probe = Probe {
    name: "controller-bounced-mid-reconcile",
    describe: "the controller's host crashed within 1 s of its last API request",
    count: network::controller_bounced_mid_reconcile,
    needs: network_needs,
};

/// `controller-requests-held`.
pub const CONTROLLER_REQUESTS_HELD: Probe = Probe {
    name: "controller-requests-held",
    describe: "a half-open partition held the controller's requests to the API server (connections kept) until it healed",
    count: network::controller_requests_held,
    needs: network_needs,
};

/// `listener-session-lost`.
pub const LISTENER_SESSION_LOST: Probe = Probe {
    name: "listener-session-lost",
    describe: "a listener's long poll or host was cut by the network and a message session was created after",
    count: network::listener_session_lost,
    needs: network_needs,
};

/// `runner-deleted-while-registering`.
pub const RUNNER_DELETED_WHILE_REGISTERING: Probe = Probe {
    name: "runner-deleted-while-registering",
    describe: "a user deleted an EphemeralRunner that registers at GitHub (before or after) before its pod was created",
    count: user_delete::runner_deleted_while_registering,
    needs: || Interest::of_resources::<AuditEntry>(&["ephemeralrunners", "pods"]).and::<GitHubEvent>(),
};

/// `rest-rate-limited`.
pub const REST_RATE_LIMITED: Probe = Probe {
    name: "rest-rate-limited",
    describe: "a REST call was refused 403 for its credential's rate limit (assumption rest-rate-limits)",
    count: github::rest_rate_limited,
    needs: || Interest::of::<GitHubCall>(),
};

fn slow_watcher_needs() -> Interest {
    Interest::of::<WatchSent>().and::<WatchOpened>().and::<AuditEntry>()
}

/// `slow-watcher-resumed`.
pub const SLOW_WATCHER_RESUMED: Probe = Probe {
    name: "slow-watcher-resumed",
    describe: "the API server closed a watch that had fallen behind and its client watched again from a resourceVersion",
    count: slow_watchers::slow_watcher_resumed,
    needs: slow_watcher_needs,
};

/// `slow-watcher-relisted`.
pub const SLOW_WATCHER_RELISTED: Probe = Probe {
    name: "slow-watcher-relisted",
    describe: "a watch closed for falling behind resumed older than the watch cache's window: 410, then a relist",
    count: slow_watchers::slow_watcher_relisted,
    needs: slow_watcher_needs,
};

/// `watch-stalled-over-changes`.
pub const WATCH_STALLED_OVER_CHANGES: Probe = Probe {
    name: "watch-stalled-over-changes",
    describe: "a controller watch went silent (no error) while its resource changed, until its timeout",
    count: watch_stalls::watch_stalled_over_changes,
    needs: || Interest::of::<WatchSent>().and::<Committed>(),
};

/// `request-rejected-under-load`.
pub const REQUEST_REJECTED_UNDER_LOAD: Probe = Probe {
    name: "request-rejected-under-load",
    describe: "a request of the controller or a listener was turned away by the API server's priority and fairness: 429, Retry-After 1",
    count: load::request_rejected_under_load,
    needs: Interest::of::<SeatWait>,
};

/// `request-queued-for-a-second`.
pub const REQUEST_QUEUED_FOR_A_SECOND: Probe = Probe {
    name: "request-queued-for-a-second",
    describe: "a request of the controller or a listener waited 1 s or more for a seat of the API server's priority level",
    count: load::request_queued_for_a_second,
    needs: Interest::of::<SeatWait>,
};

/// `pod-started-a-minute-after-binding`.
pub const POD_STARTED_A_MINUTE_AFTER_BINDING: Probe = Probe {
    name: "pod-started-a-minute-after-binding",
    describe: "a pod's container first ran a minute or more after the pod was bound to the node (a slow or failed image pull)",
    count: slow_starts::pod_started_a_minute_after_binding,
    needs: Interest::of::<KubeletEvent>,
};

/// `image-pull-backed-off`.
pub const IMAGE_PULL_BACKED_OFF: Probe = Probe {
    name: "image-pull-backed-off",
    describe: "a pod's image pull failed (ErrImagePull) and the kubelet backed off (ImagePullBackOff) before it pulled again",
    count: slow_starts::image_pull_backed_off,
    needs: Interest::of::<KubeletEvent>,
};

/// `runner-removed-while-booting`.
pub const RUNNER_REMOVED_WHILE_BOOTING: Probe = Probe {
    name: "runner-removed-while-booting",
    describe: "a runner was removed at GitHub while its container ran but before it was online (still booting)",
    count: slow_starts::runner_removed_while_booting,
    needs: || Interest::of::<KubeletEvent>().and::<GitHubEvent>(),
};

/// `runner-session-retried`.
pub const RUNNER_SESSION_RETRIED: Probe = Probe {
    name: "runner-session-retried",
    describe: "a runner's session creation at GitHub (over HTTP) failed and the runner tried again 30 s later, as actions/runner does",
    count: runner_sessions::runner_session_retried,
    needs: Interest::of::<KubeletEvent>,
};

/// `runner-session-conflicted`.
pub const RUNNER_SESSION_CONFLICTED: Probe = Probe {
    name: "runner-session-conflicted",
    describe: "a runner's session creation met a session of its own in the way (409): an earlier try committed and its answer was lost",
    count: runner_sessions::runner_session_conflicted,
    needs: Interest::of::<KubeletEvent>,
};

/// `config-sh-request-retried`.
pub const CONFIG_SH_REQUEST_RETRIED: Probe = Probe {
    name: "config-sh-request-retried",
    describe: "a request of a legacy runner's config.sh (token exchange or registration, over HTTP) failed and was sent again 1-5 s later, as actions/runner does",
    count: config_sh::config_sh_request_retried,
    needs: Interest::of::<KubeletEvent>,
};

/// `config-sh-registration-answer-lost`.
pub const CONFIG_SH_REGISTRATION_ANSWER_LOST: Probe = Probe {
    name: "config-sh-registration-answer-lost",
    describe: "a legacy runner's registration committed at GitHub and its answer was lost: config.sh registers again and replaces its own lost registration",
    count: config_sh::config_sh_registration_answer_lost,
    needs: Interest::of::<GitHubCall>,
};

/// `pod-waited-unschedulable`.
pub const POD_WAITED_UNSCHEDULABLE: Probe = Probe {
    name: "pod-waited-unschedulable",
    describe: "no node had room for a pod: it waited Pending, PodScheduled False Unschedulable, for room to free or a node to join",
    count: slow_starts::pod_waited_unschedulable,
    needs: Interest::of::<KubeletEvent>,
};

/// `pod-taint-evicted`.
pub const POD_TAINT_EVICTED: Probe = Probe {
    name: "pod-taint-evicted",
    describe: "the taint eviction deleted a pod whose node had stopped answering (it stays Terminating: no kubelet confirms)",
    count: node_loss::pod_taint_evicted,
    needs: Interest::of::<KubeletEvent>,
};

/// `process-outlived-force-delete`.
pub const PROCESS_OUTLIVED_FORCE_DELETE: Probe = Probe {
    name: "process-outlived-force-delete",
    describe: "a pod on a lost node was deleted with grace 0 (pod GC, an operator) while its process still ran",
    count: node_loss::process_outlived_force_delete,
    needs: Interest::of::<KubeletEvent>,
};

/// `pod-replaced-while-old-process-ran`.
pub const POD_REPLACED_WHILE_OLD_PROCESS_RAN: Probe = Probe {
    name: "pod-replaced-while-old-process-ran",
    describe: "a pod's container started while an earlier pod of the same name still ran its process (a replacement beside a runner that never stopped)",
    count: node_loss::pod_replaced_while_old_process_ran,
    needs: Interest::of::<KubeletEvent>,
};

/// `kubelet-stall-held-a-deletion`.
pub const KUBELET_STALL_HELD_A_DELETION: Probe = Probe {
    name: "kubelet-stall-held-a-deletion",
    describe: "a kubelet stalled for less than the node monitor's grace (never NotReady) and only then heard of a pod's deletion, its runner running on meanwhile",
    count: node_loss::kubelet_stall_held_a_deletion,
    needs: Interest::of::<KubeletEvent>,
};

/// `init-container-failed`.
pub const INIT_CONTAINER_FAILED: Probe = Probe {
    name: "init-container-failed",
    describe: "a pod's init container failed to start (StartError): the pod failed, or backed off and tried again",
    count: container_failures::init_container_failed,
    needs: Interest::of::<KubeletEvent>,
};

/// `container-oom-killed`.
pub const CONTAINER_OOM_KILLED: Probe = Probe {
    name: "container-oom-killed",
    describe: "the kernel's OOM killer ended a pod's main container (exit 137, reason OOMKilled)",
    count: container_failures::container_oom_killed,
    needs: Interest::of::<KubeletEvent>,
};

/// `sidecar-crashed-beside-runner`.
pub const SIDECAR_CRASHED_BESIDE_RUNNER: Probe = Probe {
    name: "sidecar-crashed-beside-runner",
    describe: "a pod's native sidecar (an init container with restartPolicy Always, as the chart's dind) crashed while the main container ran; the kubelet restarted it",
    count: container_failures::sidecar_crashed,
    needs: Interest::of::<KubeletEvent>,
};

/// `regular-sidecar-outlived-runner`.
pub const REGULAR_SIDECAR_OUTLIVED_RUNNER: Probe = Probe {
    name: "regular-sidecar-outlived-runner",
    describe: "a runner container exited for good while a regular sidecar (dind as a second container) ran on, so the pod stayed Running until it was deleted",
    count: container_failures::regular_sidecar_outlived_runner,
    needs: Interest::of::<KubeletEvent>,
};

/// `pod-failed-beside-succeeded-runner`.
pub const POD_FAILED_BESIDE_SUCCEEDED_RUNNER: Probe = Probe {
    name: "pod-failed-beside-succeeded-runner",
    describe: "a pod turned Failed though its runner exited 0: a regular sidecar had crashed under restartPolicy Never (ARC #4340 reads the runner's exit)",
    count: container_failures::pod_failed_beside_succeeded_runner,
    needs: Interest::of::<KubeletEvent>,
};

/// `controller-paused-mid-reconcile`.
pub const CONTROLLER_PAUSED_MID_RECONCILE: Probe = Probe {
    name: "controller-paused-mid-reconcile",
    describe: "a controller process stopped (a pause) while reconciles were in flight, and went on later",
    count: pauses::controller_paused_mid_reconcile,
    needs: Interest::of::<WorldEvent>,
};

/// `listener-paused-as-jobs-queued`.
pub const LISTENER_PAUSED_AS_JOBS_QUEUED: Probe = Probe {
    name: "listener-paused-as-jobs-queued",
    describe: "a listener pod's process was stopped while jobs were queued at GitHub, which waited for it to go on",
    count: listener_pauses::listener_paused_as_jobs_queued,
    needs: || Interest::of::<WorldEvent>().and::<GitHubEvent>(),
};

/// `listener-answer-waited-while-paused`.
pub const LISTENER_ANSWER_WAITED_WHILE_PAUSED: Probe = Probe {
    name: "listener-answer-waited-while-paused",
    describe: "GitHub answered a stopped listener's long poll with a job message, which waited in the connection until the listener went on",
    count: listener_pauses::listener_answer_waited_while_paused,
    needs: || Interest::of::<WorldEvent>().and::<GitHubEvent>(),
};

/// `watch-closed-while-paused`.
pub const WATCH_CLOSED_WHILE_PAUSED: Probe = Probe {
    name: "watch-closed-while-paused",
    describe: "the API server closed a watch of a stopped controller process for falling behind",
    count: pauses::watch_closed_while_paused,
    needs: || Interest::of::<WorldEvent>().and::<WatchSent>(),
};

/// `leader-resumed-after-takeover`.
pub const LEADER_RESUMED_AFTER_TAKEOVER: Probe = Probe {
    name: "leader-resumed-after-takeover",
    describe: "a leading controller replica was stopped (a pause) while another took its Lease over, and went on",
    count: pauses::leader_resumed_after_takeover,
    needs: || Interest::of::<WorldEvent>().and_resources::<Committed>(&["leases"]),
};

/// Every probe, in the order reports list them.
pub static PROBES: &[&Probe] = &[
    &POD_CREATE_ALREADY_EXISTS,
    &STALE_POD_CACHE_READ,
    &REMOVE_RUNNER_LOST_TO_ASSIGNMENT,
    &ASSIGNMENT_LOST_TO_REMOVE_RUNNER,
    &JOB_ASSIGNED_WITHIN_1S_OF_POD_DELETE,
    &JOB_ASSIGNED_AFTER_POD_DELETION,
    &TOKEN_EXPIRED_BEFORE_CONTAINER_START,
    &TOKEN_REFRESHED_WHILE_BUSY,
    &TOKEN_REFRESHED_BEFORE_EXPIRY,
    &REGISTRATION_RETRIED_AFTER_REMOVAL,
    &POD_RAN_ON_AFTER_REGISTRATION_REMOVED,
    &IDLE_RUNNER_SCALED_DOWN,
    &UNPROJECTED_RUNNER_UPDATE,
    &LISTENER_PATCH_CONFLICT,
    &CONTROLLER_RESTART_MID_RECONCILE,
    &API_COMMITTED_THEN_FAILED,
    &RETRY_AFTER_COMMIT_ALREADY_EXISTS,
    &STALE_LIST_FROM_WATCH_CACHE,
    &GITHUB_COMMITTED_THEN_FAILED,
    &JIT_RETRY_AGENT_EXISTS,
    &SESSION_RETRY_CONFLICT,
    &REMOVE_RUNNER_RETRIED_AFTER_COMMIT,
    &JOB_STARTED_DELAYED,
    &ACQUISITION_CAPPED,
    &RUNNER_REMOVED_BEFORE_JOB_STARTED,
    &WATCH_RESUMED_FROM_RV,
    &RELIST_AFTER_410,
    &CONTROLLER_BOUNCED_MID_RECONCILE,
    &LISTENER_SESSION_LOST,
    &RUNNER_DELETED_WHILE_REGISTERING,
    &REST_RATE_LIMITED,
    &SLOW_WATCHER_RESUMED,
    &SLOW_WATCHER_RELISTED,
    &WATCH_STALLED_OVER_CHANGES,
    &REQUEST_REJECTED_UNDER_LOAD,
    &REQUEST_QUEUED_FOR_A_SECOND,
    &POD_STARTED_A_MINUTE_AFTER_BINDING,
    &IMAGE_PULL_BACKED_OFF,
    &RUNNER_REMOVED_WHILE_BOOTING,
    &RUNNER_SESSION_RETRIED,
    &RUNNER_SESSION_CONFLICTED,
    &CONFIG_SH_REQUEST_RETRIED,
    &CONFIG_SH_REGISTRATION_ANSWER_LOST,
    &POD_WAITED_UNSCHEDULABLE,
    &POD_TAINT_EVICTED,
    &PROCESS_OUTLIVED_FORCE_DELETE,
    &POD_REPLACED_WHILE_OLD_PROCESS_RAN,
    &KUBELET_STALL_HELD_A_DELETION,
    &INIT_CONTAINER_FAILED,
    &CONTAINER_OOM_KILLED,
    &SIDECAR_CRASHED_BESIDE_RUNNER,
    &REGULAR_SIDECAR_OUTLIVED_RUNNER,
    &POD_FAILED_BESIDE_SUCCEEDED_RUNNER,
    &CONTROLLER_PAUSED_MID_RECONCILE,
    &LISTENER_PAUSED_AS_JOBS_QUEUED,
    &LISTENER_ANSWER_WAITED_WHILE_PAUSED,
    &WATCH_CLOSED_WHILE_PAUSED,
    &LEADER_RESUMED_AFTER_TAKEOVER,
    &CONTROLLER_REQUESTS_HELD,
];

/// Every probe.
pub fn all() -> &'static [&'static Probe] {
    PROBES
}

/// The probes that fired in `run`, with their counts.
pub fn fired(run: &RunRecord) -> BTreeMap<&'static str, u32> {
    PROBES.iter().map(|p| (p.name, (p.count)(run))).filter(|(_, n)| *n > 0).collect()
}
