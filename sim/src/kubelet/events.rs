//! What the kubelet model did, as structured events for oracles (and as trace lines, actor `kubelet`).

use serde::Serialize;

use crate::record::{Line, Observed};

/// Why a container stopped running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopCause {
    /// Its process exited by itself.
    Exited,
    /// The pod was deleted (graceful termination).
    PodDeleted,
    /// The pod object vanished without a graceful termination (grace 0 from a client).
    PodRemoved,
    /// The pod was evicted.
    Evicted,
    /// Its node's machine died ([`super::node_loss::LossOutcome::Died`]).
    NodeDied,
}

/// One kubelet event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "event")]
pub enum KubeletEventKind {
    /// The pod was bound to the node.
    Scheduled,
    /// No node had room for the pod: it stays Pending, PodScheduled False `Unschedulable`, until room
    /// frees or a node joins (only worlds with [`super::capacity::NodeCapacity`]).
    Unschedulable {
        /// The scheduler's message.
        message: String,
    },
    /// A node joined the cluster (a cluster autoscaler's scale-up this pod's wait asked for).
    NodeJoined {
        /// The cluster's nodes now.
        nodes: u32,
    },
    /// The main container started (attempt `restart_count`).
    ContainerStarted {
        /// Container name.
        container: String,
        /// Restarts before this start.
        restart_count: u32,
    },
    /// A container could not start (missing secret, …) and will be retried.
    ContainerConfigError {
        /// Container name.
        container: String,
        /// What is missing.
        message: String,
    },
    /// An image pull failed (`ErrImagePull`); the kubelet tries again after its image backoff
    /// (`ImagePullBackOff` meanwhile). Only worlds with [`super::SlowStarts`] fail pulls.
    ImagePullFailed {
        /// Container name.
        container: String,
        /// Failed pulls so far, this one included.
        attempt: u32,
    },
    /// An init container failed to start (`terminated`, reason `StartError`): the pod fails under
    /// `restartPolicy: Never`, else the kubelet backs off and tries again.
    InitContainerFailed {
        /// Container name.
        container: String,
        /// Its exit code.
        exit_code: i32,
    },
    /// A runner process registered (legacy `config.sh`) or connected (JIT) at GitHub.
    RunnerConnected {
        /// GitHub runner id.
        runner_id: i64,
    },
    /// A runner's session creation at GitHub failed (over HTTP): `status` is the answer's (none when
    /// the connection dropped); it tries again in `retry_in_ms`, or gives up (none).
    SessionCreationFailed {
        /// The answer's status.
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// When it tries again.
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_in_ms: Option<u64>,
    },
    /// A request of a legacy runner's `config.sh` failed (over HTTP): `status` is the answer's (none
    /// when the connection dropped); `config.sh` sends it again in `retry_in_ms`, or fails (none).
    RegistrationRequestFailed {
        /// The request's path.
        path: String,
        /// The answer's status.
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// When it is sent again.
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_in_ms: Option<u64>,
    },
    /// A legacy runner's `config.sh` failed.
    RegistrationFailed {
        /// The token used.
        token: String,
        /// Why.
        reason: String,
    },
    /// A runner process picked up a job.
    JobStarted {
        /// GitHub runner id.
        runner_id: i64,
        /// Runner request id.
        request_id: i64,
    },
    /// A runner process reported its job ended and then hung instead of exiting
    /// ([`super::KubeletConfig::runner_hang_percent`]); it stops only on SIGTERM.
    HungAfterJob {
        /// GitHub runner id.
        runner_id: i64,
        /// The job it ran.
        request_id: i64,
    },
    /// A runner's poll failed "Registration … was not found" after its registration was removed; it
    /// retries as actions/runner does, and exits 0 after `for_ms` unless SIGTERM comes first
    /// (assumption `removed-runner-poll=registration-not-found`).
    RetryingRemovedRegistration {
        /// GitHub runner id.
        runner_id: i64,
        /// How long it goes on retrying.
        for_ms: u64,
    },
    /// A container stopped.
    ContainerStopped {
        /// Container name.
        container: String,
        /// Its exit code.
        exit_code: i32,
        /// Why it stopped.
        cause: StopCause,
        /// The GitHub runner it ran, if any.
        runner_id: Option<i64>,
        /// The job it was running when it stopped, if any.
        running_job: Option<i64>,
    },
    /// The kubelet saw, through its watch, that the pod is being deleted with this grace period.
    Terminating {
        /// `deletionGracePeriodSeconds`.
        grace_seconds: i64,
    },
    /// The container's process got SIGTERM.
    Sigterm {
        /// Container name.
        container: String,
    },
    /// The grace period ran out: the container's process got SIGKILL.
    Sigkill {
        /// Container name.
        container: String,
    },
    /// A sidecar started, or started again ([`super::sidecars`]): a native one (an init container
    /// with `restartPolicy: Always`) or a regular one (a second entry of `spec.containers`).
    SidecarStarted {
        /// Container name.
        container: String,
        /// Its restarts so far.
        restart_count: u32,
        /// A regular container beside the main one, not a native sidecar.
        #[serde(skip_serializing_if = "is_false")]
        regular: bool,
    },
    /// A sidecar's process exited while the main container ran (1, or 137 `OOMKilled`); the kubelet
    /// restarts a native one, and a regular one as the pod's restart policy says.
    SidecarCrashed {
        /// Container name.
        container: String,
        /// Its exit code.
        exit_code: i32,
        /// A regular container beside the main one, not a native sidecar.
        #[serde(skip_serializing_if = "is_false")]
        regular: bool,
    },
    /// The main container exited for good while regular sidecars ran on: the pod stays Running
    /// (not Ready) until it is deleted, as the kubelet never stops them by itself.
    SidecarsOutlivedMain {
        /// The regular sidecars still running.
        containers: Vec<String>,
    },
    /// The pod's phase turned Failed though its main container exited 0: a regular sidecar had
    /// exited non-zero under `restartPolicy: Never`.
    FailedBesideSucceededMain {
        /// The regular sidecars that had failed.
        containers: Vec<String>,
    },
    /// The kernel's OOM killer ended the main container (exit 137, reason `OOMKilled`).
    OomKilled {
        /// Container name.
        container: String,
    },
    /// The pod was evicted.
    Evicted {
        /// The eviction reason (`Evicted`, `OutOfmemory`, …).
        reason: String,
    },
    /// The kubelet finished a pod's termination and removed it (grace-0 delete).
    PodRemoved,
    /// The node stopped answering the control plane ([`super::node_loss`]; subject `node/<name>`):
    /// its kubelet hears nothing and writes nothing until it comes back.
    NodeLost {
        /// Whether its machine died with its processes (else they run on).
        died: bool,
    },
    /// The lost node is back (subject `node/<name>`): its kubelet hears what it missed.
    NodeReturned {
        /// How many of its pods' deletions (a deletion begun, or the pod gone) it missed and hears
        /// only now.
        deletions_heard: u32,
    },
    /// The node lifecycle set the pod's Ready False: its node had not reported for the grace period.
    MarkedNotReady {
        /// The node.
        node: String,
    },
    /// The taint eviction deleted the pod (DisruptionTarget `DeletionByTaintManager`): its node was
    /// unreachable longer than the pod tolerates.
    TaintEvicted {
        /// The node.
        node: String,
    },
    /// The pod was deleted with grace 0 while its node was lost: by pod GC (the Node object was
    /// deleted; the pod marked Failed first) or by an operator's force delete.
    ForceDeleted {
        /// The node.
        node: String,
        /// `pod-gc` or `operator`.
        by: String,
    },
}

impl Observed for KubeletEvent {
    fn line(&self) -> Option<Line<'_>> {
        Some(Line::new("kubelet", self.pod.as_str(), serde_json::to_string(&self.kind).unwrap_or_default()))
    }

    crate::observed_as_any!();
}

/// An event with its time and pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KubeletEvent {
    /// Sim milliseconds.
    pub ms: u64,
    /// `namespace/name` (`node/<name>` for an event of a node).
    pub pod: String,
    /// The pod's uid.
    pub uid: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: KubeletEventKind,
}

/// Serde's test for a `false` flag left out of the trace.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(flag: &bool) -> bool {
    !*flag
}
