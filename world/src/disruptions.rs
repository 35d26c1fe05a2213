//! [`Disruption`]s: what the world does to itself at a sim time (a controller restart, a crashed or
//! evicted pod, a user's patch or `kubectl delete --all`, the leader killed, a scale set vanishing at
//! GitHub), as data in the world's config, and `apply`, which does one to its targets.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use arc_sim::github::FakeGitHub;
use arc_sim::kubelet::Kubelet;
use arc_sim::record::{Recorder, WorldEvent};

use super::controller_host::ControllerHost;
use super::listener_pause::ListenerGates;
use super::user::User;

/// Something the world does to itself at a sim time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Disruption {
    /// Crash the controller process (every informer, queue and in-flight reconcile dropped) and start a
    /// fresh one.
    RestartController {
        /// When.
        at_ms: u64,
    },
    /// Crash the main container of the first running pod whose name starts with `prefix`.
    CrashPod {
        /// When.
        at_ms: u64,
        /// Namespace.
        namespace: String,
        /// Name prefix.
        prefix: String,
        /// Exit code.
        exit_code: i32,
    },
    /// Merge-patch an object's main resource as actor `user` (e.g. bump a runner set's
    /// `spec.actionableRevision`, as the ARS does on a runner-spec change).
    PatchObject {
        /// When.
        at_ms: u64,
        /// Resource plural.
        plural: String,
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// The JSON merge patch.
        patch: Value,
    },
    /// Crash the controller replica that leads (its Lease is not released) and restart it as a new
    /// process, which stands by; needs `replicas` in the world's config.
    KillLeader {
        /// When.
        at_ms: u64,
    },
    /// Stop the controller process (the leading replica, when replicas run) for `for_ms` and let it go
    /// on: nothing of it runs meanwhile, its timers fire late and at once after, its sent requests are
    /// served (`ProcessGate`). A process restarted while stopped starts afresh, unstopped.
    PauseController {
        /// When.
        at_ms: u64,
        /// How long it stays stopped.
        for_ms: u64,
    },
    /// Stop every running listener pod's process (the listener binary) for `for_ms` and let it go on:
    /// its long poll's answer, its timers and its watch wait; its sent requests are served. Its pod
    /// stays Running; a listener that ends meanwhile (its pod deleted) is not resumed.
    PauseListener {
        /// When.
        at_ms: u64,
        /// How long it stays stopped.
        for_ms: u64,
    },
    /// The kernel's OOM killer ends the main container of the first running pod whose name starts
    /// with `prefix` (exit 137, reason `OOMKilled`; it restarts per its policy).
    OomKillPod {
        /// When.
        at_ms: u64,
        /// Namespace.
        namespace: String,
        /// Name prefix.
        prefix: String,
    },
    /// Evict the first running pod whose name starts with `prefix`.
    EvictPod {
        /// When.
        at_ms: u64,
        /// Namespace.
        namespace: String,
        /// Name prefix.
        prefix: String,
        /// `Evicted`, `OutOfmemory`, …
        reason: String,
    },
    /// The scale set named `name` vanishes at GitHub behind the controller's back (#4370: deleted by an
    /// admin or by GitHub's cleanup): its runners are removed, its sessions closed, and every call that
    /// names it answers 404 `RunnerScaleSetNotFoundException`.
    DeleteScaleSet {
        /// When.
        at_ms: u64,
        /// The scale set's name.
        name: String,
    },
    /// `kubectl delete PLURAL --all -n NAMESPACE` as actor `user`: list the namespace's objects, then
    /// delete each by name in the list's order, one request after another (an object gone in between
    /// is skipped, as `--all` implies `--ignore-not-found`). The world knows nothing of who owns them.
    DeleteAll {
        /// When.
        at_ms: u64,
        /// Resource plural.
        plural: String,
        /// Namespace.
        namespace: String,
    },
}

impl Disruption {
    /// Whether it stops a process mid-run (so the world serves requests detached from their callers).
    pub fn pauses(&self) -> bool {
        matches!(self, Disruption::PauseController { .. } | Disruption::PauseListener { .. })
    }

    /// The sim ms it happens at.
    pub fn at_ms(&self) -> u64 {
        match self {
            Disruption::RestartController { at_ms }
            | Disruption::CrashPod { at_ms, .. }
            | Disruption::PatchObject { at_ms, .. }
            | Disruption::EvictPod { at_ms, .. }
            | Disruption::OomKillPod { at_ms, .. }
            | Disruption::DeleteAll { at_ms, .. }
            | Disruption::DeleteScaleSet { at_ms, .. }
            | Disruption::KillLeader { at_ms }
            | Disruption::PauseController { at_ms, .. }
            | Disruption::PauseListener { at_ms, .. } => *at_ms,
        }
    }
}

/// What a disruption acts on.
pub(crate) struct Targets<'a> {
    /// The controller process.
    pub host: &'a mut ControllerHost,
    /// The node.
    pub kubelet: &'a Kubelet,
    /// The fake GitHub.
    pub github: &'a FakeGitHub,
    /// The user at kubectl.
    pub user: User<'a>,
    /// Where it is recorded.
    pub record: &'a Recorder,
    /// The running listener processes.
    pub listeners: &'a ListenerGates,
}

/// Does `disruption` to `targets`: recorded first, and again as failed when it found nothing to do
/// (no running pod by that prefix is not a failure: the pod may be gone already).
pub(crate) async fn apply(disruption: Disruption, targets: Targets<'_>) {
    let Targets { host, kubelet, github, user, record, listeners } = targets;
    record.emit(WorldEvent::Disruption(serde_json::to_string(&disruption).unwrap_or_default()));
    let failed = match disruption {
        Disruption::RestartController { .. } => {
            host.start().await;
            None
        }
        Disruption::CrashPod { namespace, prefix, exit_code, .. } => {
            if let Some(name) = running_pod(kubelet, &namespace, &prefix) {
                kubelet.crash(&namespace, &name, exit_code);
            }
            None
        }
        Disruption::PatchObject { plural, namespace, name, patch, .. } => {
            user.patch(&plural, &namespace, &name, &patch).await.err()
        }
        Disruption::KillLeader { .. } => host.kill_leader().err().map(|e| e.message().to_string()),
        Disruption::PauseController { for_ms, .. } => {
            host.pause(for_ms).err().map(|e| e.message().to_string())
        }
        Disruption::PauseListener { for_ms, .. } => {
            listeners.pause(for_ms, record).err().map(|e| e.to_string())
        }
        Disruption::OomKillPod { namespace, prefix, .. } => {
            if let Some(name) = running_pod(kubelet, &namespace, &prefix) {
                kubelet.oom_kill(&namespace, &name);
            }
            None
        }
        Disruption::EvictPod { namespace, prefix, reason, .. } => {
            if let Some(name) = running_pod(kubelet, &namespace, &prefix) {
                kubelet.evict(&namespace, &name, &reason);
            }
            None
        }
        Disruption::DeleteAll { plural, namespace, .. } => user.delete_all(&plural, &namespace).await.err(),
        Disruption::DeleteScaleSet { name, .. } => {
            (!github.delete_scale_set_named(&name)).then(|| format!("no scale set named {name}"))
        }
    };
    if let Some(why) = failed {
        record.emit(WorldEvent::DisruptionFailed(why));
    }
}

/// The name of the first running pod of `namespace` whose name starts with `prefix`.
fn running_pod(kubelet: &Kubelet, namespace: &str, prefix: &str) -> Option<String> {
    let key_prefix = format!("{namespace}/{prefix}");
    kubelet
        .running_pods()
        .into_iter()
        .find(|p| p.starts_with(&key_prefix))
        .map(|p| p[namespace.len() + 1..].to_string())
}
