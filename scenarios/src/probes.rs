//! Coverage probes: named race windows that a run either hit or did not, derived from the run's
//! record (API traffic, GitHub events, kubelet events, counters), never from the controller. A
//! scenario declares which probes it exists to hit and the minimum share of seeds that must hit each;
//! a sweep in which the window never opened proves nothing.

use std::collections::BTreeMap;

use arc_controller::runtime::metrics::PREDICATE_DROPPED_TOTAL;
use arc_sim::apiserver::{AuditEntry, Committed};
use arc_sim::faults::ApiVerb;
use arc_sim::github::GitHubEvent;
use arc_sim::github::{EventKind, RemoveOutcome};
use arc_sim::kubelet::KubeletEvent;
use arc_sim::kubelet::KubeletEventKind;
use arc_sim::record::Interest;
use arc_sim::world::RunRecord;
use serde_json::Value;

use crate::oracles::Oracle as _;
use crate::oracles::view::{key_of, str_at};

/// A probe a scenario must hit in at least `min_share` of its seeds.
#[derive(Debug, Clone, Copy)]
pub struct ProbeGoal {
    /// The probe.
    pub probe: &'static Probe,
    /// Minimum share of seeds, in `[0, 1]`.
    pub min_share: f64,
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

fn audited(run: &RunRecord, resource: &str, verb: ApiVerb, code: u16, actor: &str) -> u32 {
    run.audit()
        .filter(|a| a.resource == resource && a.verb == verb && a.code == code)
        .filter(|a| {
            a.actor == actor || (actor == "controller" && crate::oracles::view::is_controller(&a.actor))
        })
        .count() as u32
}

fn pod_create_already_exists(run: &RunRecord) -> u32 {
    audited(run, "pods", ApiVerb::Create, 409, "controller")
}

fn stale_pod_cache_read(run: &RunRecord) -> u32 {
    pod_create_already_exists(run) + audited(run, "pods", ApiVerb::Delete, 404, "controller")
}

fn remove_runner_lost_to_assignment(run: &RunRecord) -> u32 {
    run.github_events()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::RemoveRunner { outcome: RemoveOutcome::JobStillRunning | RemoveOutcome::Busy, .. }
            )
        })
        .count() as u32
}

/// A RemoveRunner that removed an idle runner while a job acquired by its scale set was still waiting
/// for a runner: the job would have been this runner's, and went to another.
fn assignment_lost_to_remove_runner(run: &RunRecord) -> u32 {
    let mut waiting: BTreeMap<i64, i64> = BTreeMap::new();
    let scale_set_of: BTreeMap<i64, i64> =
        run.runners.iter().filter_map(|r| Some((r.id, r.scale_set_id?))).collect();
    let mut hits = 0;
    for e in run.github_events() {
        match &e.kind {
            EventKind::JobAcquired { request_id, scale_set_id } => {
                waiting.insert(*request_id, *scale_set_id);
            }
            EventKind::JobAssigned { request_id, .. } | EventKind::JobCompleted { request_id, .. } => {
                waiting.remove(request_id);
            }
            EventKind::RemoveRunner { runner_id, outcome: RemoveOutcome::Removed } => {
                let set = scale_set_of.get(runner_id);
                if set.is_some_and(|s| waiting.values().any(|w| w == s)) {
                    hits += 1;
                }
            }
            _ => {}
        }
    }
    hits
}

/// A job assigned to a runner within 1 s (either order) of the controller moving to remove that runner:
/// a RemoveRunner call for it, or a delete of its EphemeralRunner or pod.
fn job_assigned_within_1s_of_pod_delete(run: &RunRecord) -> u32 {
    let runner_of_pod: BTreeMap<String, i64> = run
        .kubelet_events()
        .filter_map(|e| match e.kind {
            KubeletEventKind::RunnerConnected { runner_id } => Some((e.pod.clone(), runner_id)),
            _ => None,
        })
        .collect();
    let mut removals: Vec<(u64, i64)> = run
        .audit()
        .filter(|a| matches!(a.resource.as_str(), "pods" | "ephemeralrunners" | "runners"))
        .filter(|a| {
            a.verb == ApiVerb::Delete && crate::oracles::view::is_controller(&a.actor) && a.code < 300
        })
        .filter_map(|a| Some((a.ms, *runner_of_pod.get(&format!("{}/{}", a.namespace, a.name))?)))
        .collect();
    removals.extend(run.github_events().filter_map(|e| match e.kind {
        EventKind::RemoveRunner { runner_id, .. } => Some((e.at_ms, runner_id)),
        _ => None,
    }));
    run.github_events()
        .filter_map(|e| match e.kind {
            EventKind::JobAssigned { runner_id, .. } => Some((e.at_ms, runner_id)),
            _ => None,
        })
        .filter(|(at, runner)| removals.iter().any(|(ms, r)| r == runner && ms.abs_diff(*at) <= 1000))
        .count() as u32
}

/// Legacy tokens: `(runner key, token) → expiresAt ms` from the Runners' status, and when each token
/// was replaced.
fn token_lifetimes(run: &RunRecord) -> Vec<(String, String, u64, u64)> {
    let epoch = run.trace.clock().epoch().as_millisecond();
    let mut out: Vec<(String, String, u64, u64)> = Vec::new();
    for (ms, change) in run.changes_of("runners") {
        let Some(token) = str_at(&change.object, "/status/registration/token") else { continue };
        let key = key_of(&change.object);
        if out.iter().any(|(k, t, _, _)| *k == key && t == token) {
            continue;
        }
        if let Some(last) = out.iter_mut().rev().find(|(k, _, _, _)| *k == key) {
            last.3 = ms;
        }
        let expires = str_at(&change.object, "/status/registration/expiresAt")
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map_or(u64::MAX, |t| u64::try_from(t.as_millisecond() - epoch).unwrap_or(0));
        out.push((key, token.to_string(), expires, u64::MAX));
    }
    out
}

/// A legacy runner pod still existed, holding its token, when that token expired: a container restart
/// from then on registers with an expired token unless the pod is replaced first.
fn token_expired_before_container_start(run: &RunRecord) -> u32 {
    let tokens = token_lifetimes(run);
    let mut live: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut hits = 0;
    for (ms, change) in run.changes_of("pods") {
        let key = key_of(&change.object);
        match change.kind {
            arc_sim::apiserver::EventType::Added => {
                if let Some(token) = env_token(&change.object) {
                    live.insert(key, (ms, token));
                }
            }
            arc_sim::apiserver::EventType::Deleted => {
                if let Some((_, token)) = live.remove(&key) {
                    let expired_inside = tokens.iter().any(|(_, t, exp, _)| *t == token && *exp < ms);
                    hits += u32::from(expired_inside);
                }
            }
            arc_sim::apiserver::EventType::Modified => {}
        }
    }
    hits + live
        .values()
        .filter(|(_, token)| tokens.iter().any(|(_, t, exp, _)| *t == *token && *exp < run.end_ms))
        .count() as u32
}

fn env_token(pod: &Value) -> Option<String> {
    let containers = pod.pointer("/spec/containers")?.as_array()?;
    containers.iter().flat_map(|c| c.get("env").and_then(Value::as_array).into_iter().flatten()).find_map(
        |e| {
            (e.get("name")?.as_str()? == "RUNNER_TOKEN")
                .then(|| e.get("value")?.as_str().map(str::to_string))
                .flatten()
        },
    )
}

/// A legacy Runner's token was refreshed while its runner ran a job at GitHub.
fn token_refreshed_while_busy(run: &RunRecord) -> u32 {
    let tokens = token_lifetimes(run);
    let busy: Vec<(String, u64, u64)> = run
        .jobs
        .iter()
        .filter_map(|j| {
            let runner = run.runners.iter().find(|r| Some(r.id) == j.runner_id && r.scope.is_some())?;
            Some((runner.name.clone(), j.started_ms?, j.finished_ms.unwrap_or(u64::MAX)))
        })
        .collect();
    tokens
        .iter()
        .filter(|(_, _, _, replaced)| *replaced != u64::MAX)
        .filter(|(key, _, _, replaced)| {
            let name = key.rsplit('/').next().unwrap_or("");
            busy.iter().any(|(n, from, to)| n == name && from <= replaced && replaced < to)
        })
        .count() as u32
}

fn predicate_dropped_update(run: &RunRecord) -> u32 {
    u32::try_from(run.metric(PREDICATE_DROPPED_TOTAL, &[])).unwrap_or(u32::MAX)
}

fn listener_patch_conflict(run: &RunRecord) -> u32 {
    audited(run, "ephemeralrunners", ApiVerb::Patch, 409, "listener")
}

fn controller_restart_mid_reconcile(run: &RunRecord) -> u32 {
    run.restarts_mid_reconcile
}

/// `pod-create-already-exists`.
pub const POD_CREATE_ALREADY_EXISTS: Probe = Probe {
    name: "pod-create-already-exists",
    describe: "a pod create met AlreadyExists because the cache lagged",
    count: pod_create_already_exists,
    needs: || Interest::of_resources::<AuditEntry>(&["pods"]),
};

/// `stale-pod-cache-read`.
pub const STALE_POD_CACHE_READ: Probe = Probe {
    name: "stale-pod-cache-read",
    describe: "the controller acted on a pod cache that lagged the API server",
    count: stale_pod_cache_read,
    needs: || Interest::of_resources::<AuditEntry>(&["pods"]),
};

/// `remove-runner-lost-to-assignment`.
pub const REMOVE_RUNNER_LOST_TO_ASSIGNMENT: Probe = Probe {
    name: "remove-runner-lost-to-assignment",
    describe: "RemoveRunner answered busy because a job won the race",
    count: remove_runner_lost_to_assignment,
    needs: || Interest::of::<GitHubEvent>(),
};

/// `assignment-lost-to-remove-runner`.
pub const ASSIGNMENT_LOST_TO_REMOVE_RUNNER: Probe = Probe {
    name: "assignment-lost-to-remove-runner",
    describe: "RemoveRunner removed an idle runner while a job of its scale set waited",
    count: assignment_lost_to_remove_runner,
    needs: || Interest::of::<GitHubEvent>(),
};

/// `job-assigned-within-1s-of-pod-delete`.
pub const JOB_ASSIGNED_WITHIN_1S_OF_POD_DELETE: Probe = Probe {
    name: "job-assigned-within-1s-of-pod-delete",
    describe: "a job was assigned to a runner within 1 s of its pod's delete",
    count: job_assigned_within_1s_of_pod_delete,
    needs: || {
        Interest::of_resources::<AuditEntry>(&["pods", "ephemeralrunners", "runners"])
            .and::<GitHubEvent>()
            .and::<KubeletEvent>()
    },
};

/// `token-expired-before-container-start`.
pub const TOKEN_EXPIRED_BEFORE_CONTAINER_START: Probe = Probe {
    name: "token-expired-before-container-start",
    describe: "a legacy pod outlived its registration token",
    count: token_expired_before_container_start,
    needs: || Interest::of_resources::<Committed>(&["runners", "pods"]),
};

/// `token-refreshed-while-busy`.
pub const TOKEN_REFRESHED_WHILE_BUSY: Probe = Probe {
    name: "token-refreshed-while-busy",
    describe: "a legacy runner's token was refreshed while it ran a job",
    count: token_refreshed_while_busy,
    needs: || Interest::of_resources::<Committed>(&["runners"]),
};

/// `idle-runner-scaled-down`.
pub const IDLE_RUNNER_SCALED_DOWN: Probe = Probe {
    name: "idle-runner-scaled-down",
    describe: "the runner set removed and deleted a registered idle runner (what the patch-ID gate oracle judges)",
    count: crate::oracles::gate::scale_downs_judged,
    needs: || crate::oracles::gate::ScaleDownOnlyOnPatchZero.needs(),
};

/// `predicate-dropped-update`.
pub const PREDICATE_DROPPED_UPDATE: Probe = Probe {
    name: "predicate-dropped-update",
    describe: "an update predicate dropped an event",
    count: predicate_dropped_update,
    needs: Interest::none,
};

/// `listener-patch-conflict`.
pub const LISTENER_PATCH_CONFLICT: Probe = Probe {
    name: "listener-patch-conflict",
    describe: "the listener's optimistic-lock Running write met a Conflict",
    count: listener_patch_conflict,
    needs: || Interest::of_resources::<AuditEntry>(&["ephemeralrunners"]),
};

/// `controller-restart-mid-reconcile`.
pub const CONTROLLER_RESTART_MID_RECONCILE: Probe = Probe {
    name: "controller-restart-mid-reconcile",
    describe: "the controller was restarted with a reconcile in flight",
    count: controller_restart_mid_reconcile,
    needs: Interest::none,
};

/// Every probe, in the order reports list them.
pub static PROBES: &[&Probe] = &[
    &POD_CREATE_ALREADY_EXISTS,
    &STALE_POD_CACHE_READ,
    &REMOVE_RUNNER_LOST_TO_ASSIGNMENT,
    &ASSIGNMENT_LOST_TO_REMOVE_RUNNER,
    &JOB_ASSIGNED_WITHIN_1S_OF_POD_DELETE,
    &TOKEN_EXPIRED_BEFORE_CONTAINER_START,
    &TOKEN_REFRESHED_WHILE_BUSY,
    &IDLE_RUNNER_SCALED_DOWN,
    &PREDICATE_DROPPED_UPDATE,
    &LISTENER_PATCH_CONFLICT,
    &CONTROLLER_RESTART_MID_RECONCILE,
];

/// Every probe.
pub fn all() -> &'static [&'static Probe] {
    PROBES
}

/// The probes that fired in `run`, with their counts.
pub fn fired(run: &RunRecord) -> BTreeMap<&'static str, u32> {
    PROBES.iter().map(|p| (p.name, (p.count)(run))).filter(|(_, n)| *n > 0).collect()
}
