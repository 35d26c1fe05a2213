//! The pod status the kubelet reports through `pods/status`, shaped as a real kubelet shapes it
//! (kubernetes `pkg/kubelet/kubelet_pods.go` `generateAPIPodStatus` and `getPhase`,
//! `pkg/kubelet/status/generate.go`, the status manager's `lastTransitionTime` rule).
//!
//! [`PodView`] is what the kubelet knows of one pod (sandbox, IPs, start time, its containers and their
//! states); [`PodView::document`] renders it as the status the kubelet writes: phase, the five
//! kubelet-owned conditions in the kubelet's order (PodReadyToStartContainers, Initialized, Ready,
//! ContainersReady, PodScheduled), each `lastTransitionTime` kept until its status changes, `hostIP(s)`,
//! `podIP(s)` once the sandbox has its network, `startTime`, and the container statuses. Every write
//! sends the whole status; the fake API server treats the kubelet's strategic merge patch as a merge
//! patch, which replaces the arrays whole (a real kubelet sends only the difference).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::fnv::Fnv1a64;

/// The node's address (every pod's `hostIP`).
pub const HOST_IP: &str = "10.0.0.1";

/// The state of one container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerState {
    /// Not running: `waiting` with a reason (`ContainerCreating`, `CreateContainerConfigError`,
    /// `CrashLoopBackOff`).
    Waiting(String),
    /// Running since the timestamp.
    Running(String),
    /// Exited.
    Terminated {
        /// The exit code.
        exit_code: i32,
        /// When it started.
        started: String,
        /// When it exited.
        finished: String,
        /// The runtime's reason when not the usual `Completed` (exit 0) or `Error` (`OOMKilled`,
        /// `StartError`).
        reason: Option<String>,
    },
}

/// One container as the status reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerView {
    /// Name.
    pub name: String,
    /// Image.
    pub image: String,
    /// Current state.
    pub state: ContainerState,
    /// Restarts so far.
    pub restart_count: u32,
    /// The previous termination (exit code, started, finished), after a restart.
    pub last_terminated: Option<(i32, String, String)>,
    /// An init container with `restartPolicy: Always`: a native sidecar, which runs beside the main
    /// container instead of completing before it ([`super::sidecars`]).
    pub restartable: bool,
}

impl ContainerView {
    /// A container the kubelet is about to create: `waiting` with reason `ContainerCreating`.
    pub fn creating(name: &str, image: &str) -> Self {
        ContainerView {
            name: name.to_string(),
            image: image.to_string(),
            state: ContainerState::Waiting("ContainerCreating".into()),
            restart_count: 0,
            last_terminated: None,
            restartable: false,
        }
    }

    /// Whether it is running (with no probes, running is started and ready).
    pub fn is_running(&self) -> bool {
        matches!(self.state, ContainerState::Running(_))
    }

    /// Whether it exited 0 (an init container's success).
    pub fn completed(&self) -> bool {
        matches!(self.state, ContainerState::Terminated { exit_code: 0, .. })
    }

    /// The `initContainerStatuses[]` entry: ready once it completed (a sidecar: while it runs),
    /// `started` while it runs.
    pub fn to_init_json(&self, pod_uid: &str) -> Value {
        let mut status = self.to_json(pod_uid);
        if !self.restartable {
            status["ready"] = json!(self.completed());
        }
        status["started"] = json!(self.is_running());
        status
    }

    /// Whether it no longer holds the pod's initialization back: an init container once it completed,
    /// a sidecar once it has started (later crashes do not undo it).
    pub fn initialized(&self) -> bool {
        if self.restartable { self.has_run() } else { self.completed() }
    }

    /// Whether it has run at least once (the runtime then reports a container and image id).
    pub fn has_run(&self) -> bool {
        !matches!(self.state, ContainerState::Waiting(_)) || self.last_terminated.is_some()
    }

    /// The `containerStatuses[]` entry.
    pub fn to_json(&self, pod_uid: &str) -> Value {
        let running = self.is_running();
        let container_id = self.container_id(pod_uid);
        let mut status = json!({
            "name": self.name,
            "image": self.image,
            "ready": running,
            "started": running,
            "restartCount": self.restart_count,
            "lastState": {},
        });
        status["imageID"] = Value::String(if self.has_run() { image_id(&self.image) } else { String::new() });
        status["state"] = state_json(&self.state, &container_id);
        if self.has_run() {
            status["containerID"] = Value::String(container_id);
        }
        if let Some((code, started, finished)) = &self.last_terminated {
            let last = ContainerState::Terminated {
                exit_code: *code,
                started: started.clone(),
                finished: finished.clone(),
                reason: None,
            };
            let previous =
                ContainerView { restart_count: self.restart_count.saturating_sub(1), ..self.clone() };
            status["lastState"] = state_json(&last, &previous.container_id(pod_uid));
        }
        status
    }

    /// `containerd://` and 64 hex digits, fixed by the pod, the container and the attempt.
    fn container_id(&self, pod_uid: &str) -> String {
        let stem = format!("{pod_uid}/{}/{}/", self.name, self.restart_count);
        hex_digest("containerd://".to_string(), &stem)
    }
}

fn image_id(image: &str) -> String {
    hex_digest(format!("{image}@sha256:"), &format!("{image}/"))
}

/// `prefix` and 64 hex digits: the FNV-1a hashes of `stem` followed by 0, 1, 2 and 3.
fn hex_digest(mut prefix: String, stem: &str) -> String {
    prefix.reserve(64);
    for part in b'0'..=b'3' {
        let mut hash = Fnv1a64::default();
        hash.write(stem.as_bytes());
        hash.write(&[part]);
        write!(prefix, "{:016x}", hash.finish()).expect("writing to a String cannot fail");
    }
    prefix
}

fn state_json(state: &ContainerState, container_id: &str) -> Value {
    match state {
        ContainerState::Waiting(reason) => json!({"waiting": {"reason": reason}}),
        ContainerState::Running(since) => json!({"running": {"startedAt": since}}),
        ContainerState::Terminated { exit_code, started, finished, reason } => json!({"terminated": {
            "exitCode": exit_code,
            "reason": reason.as_deref().unwrap_or(if *exit_code == 0 { "Completed" } else { "Error" }),
            "startedAt": started,
            "finishedAt": finished,
            "containerID": container_id,
        }}),
    }
}

/// The pod phase as `getPhase` derives it from the containers and the restart policy; a terminal pod
/// (deleted and stopped, or run to the end under its policy) is Succeeded when every container exited
/// 0, Failed otherwise.
pub fn phase(containers: &[ContainerView], restart_policy: &str, terminal: bool) -> &'static str {
    let waiting = containers
        .iter()
        .any(|c| matches!(c.state, ContainerState::Waiting(_)) && c.last_terminated.is_none());
    let running = containers.iter().any(ContainerView::is_running);
    let code = |c: &ContainerView| match &c.state {
        ContainerState::Terminated { exit_code, .. } => Some(*exit_code),
        ContainerState::Waiting(_) => c.last_terminated.as_ref().map(|(code, _, _)| *code),
        ContainerState::Running(_) => None,
    };
    let all_succeeded = containers.iter().all(|c| code(c) == Some(0));
    match () {
        () if waiting => "Pending",
        () if running => "Running",
        () if terminal || restart_policy == "Never" => {
            if all_succeeded {
                "Succeeded"
            } else {
                "Failed"
            }
        }
        () if restart_policy == "Always" => "Running",
        () if all_succeeded => "Succeeded",
        () => "Running",
    }
}

/// The phase the init containers impose, as `getPhase` counts them: Failed when one failed and the
/// pod never restarts, Pending while any has not completed; `None` once all completed (or there are
/// none).
pub fn init_phase(init: &[ContainerView], restart_policy: &str) -> Option<&'static str> {
    let failed = init.iter().filter(|c| !c.restartable || !c.has_run()).any(|c| match &c.state {
        ContainerState::Terminated { exit_code, .. } => *exit_code != 0,
        ContainerState::Waiting(_) => c.last_terminated.as_ref().is_some_and(|(code, _, _)| *code != 0),
        ContainerState::Running(_) => false,
    });
    match () {
        () if failed && restart_policy == "Never" => Some("Failed"),
        () if failed || init.iter().any(|c| !c.initialized()) => Some("Pending"),
        () => None,
    }
}

/// One condition as the kubelet generates it, before its transition time is set.
#[derive(Clone)]
struct Generated {
    kind: &'static str,
    status: bool,
    reason: Option<String>,
    message: Option<String>,
}

impl Generated {
    fn new(kind: &'static str, status: bool) -> Self {
        Generated { kind, status, reason: None, message: None }
    }

    fn because(mut self, reason: &str, message: Option<String>) -> Self {
        self.reason = Some(reason.to_string());
        self.message = message;
        self
    }
}

/// Why the kubelet evicted a pod (status `reason` and `message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eviction {
    /// `Evicted`, `OutOfmemory`, …
    pub reason: String,
    /// The message.
    pub message: String,
}

/// What the kubelet knows of one pod, and the conditions' transition times it has reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodView {
    /// The pod's uid (container ids derive from it).
    pub uid: String,
    /// `spec.restartPolicy`.
    pub restart_policy: String,
    /// Whether the sandbox exists with its network (PodReadyToStartContainers).
    pub sandbox_ready: bool,
    /// The pod's address, once its sandbox has one.
    pub pod_ip: Option<String>,
    /// When the kubelet first reported the pod.
    pub start_time: Option<String>,
    /// Its containers, in the spec's order (the status lists them by name, as the kubelet sorts
    /// them).
    pub containers: Vec<ContainerView>,
    /// Which of them runs the modelled process (the others are regular sidecars).
    pub main: usize,
    /// Its init containers, in order (none for most pods).
    pub init_containers: Vec<ContainerView>,
    /// The pod will not run again (deleted and stopped): its phase is final.
    pub terminal: bool,
    /// The pod was evicted: phase Failed with this reason, and a DisruptionTarget condition.
    pub evicted: Option<Eviction>,
    /// `(type, status) → lastTransitionTime` of every condition reported so far.
    transitions: BTreeMap<String, (bool, String)>,
}

impl PodView {
    /// A view of a pod the kubelet has just admitted, keeping the transition times of the conditions
    /// the pod already carries (the scheduler's PodScheduled).
    pub fn admitted(
        uid: &str,
        restart_policy: &str,
        containers: Vec<ContainerView>,
        existing: &Value,
    ) -> Self {
        let transitions = existing
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let kind = c.get("type")?.as_str()?.to_string();
                let status = c.get("status")?.as_str()? == "True";
                let at = c.get("lastTransitionTime").and_then(Value::as_str).unwrap_or_default().to_string();
                Some((kind, (status, at)))
            })
            .collect();
        PodView {
            uid: uid.to_string(),
            restart_policy: restart_policy.to_string(),
            sandbox_ready: false,
            pod_ip: None,
            start_time: None,
            containers,
            main: 0,
            init_containers: Vec::new(),
            terminal: false,
            evicted: None,
            transitions,
        }
    }

    /// The phase now.
    pub fn phase(&self) -> &'static str {
        if self.evicted.is_some() {
            return "Failed";
        }
        match init_phase(&self.init_containers, &self.restart_policy) {
            Some("Failed") => "Failed",
            Some(pending) if !self.terminal => pending,
            _ if !self.terminal && self.sidecar_running() => {
                match phase(&self.containers, &self.restart_policy, false) {
                    "Pending" => "Pending",
                    _ => "Running",
                }
            }
            _ => phase(&self.containers, &self.restart_policy, self.terminal),
        }
    }

    /// Whether a sidecar runs (`getPhase` counts it as a running container: the pod stays Running
    /// after its main container exits until the kubelet has stopped its sidecars).
    pub fn sidecar_running(&self) -> bool {
        self.init_containers.iter().any(|c| c.restartable && c.is_running())
    }

    /// The status document at `now` (and the transition times it reports, remembered).
    pub fn document(&mut self, now: &str) -> Value {
        let phase = self.phase();
        let conditions: Vec<Value> = self.generate(phase).into_iter().map(|c| self.stamp(c, now)).collect();
        // Built values are moved in, not passed to `json!`, which would serialise a copy of each.
        let mut status = json!({
            "phase": phase,
            "hostIP": HOST_IP,
            "hostIPs": [{"ip": HOST_IP}],
            "startTime": self.start_time,
        });
        status["conditions"] = Value::Array(conditions);
        status["containerStatuses"] = Value::Array(self.container_statuses());
        if !self.init_containers.is_empty() {
            let init: Vec<Value> = self.init_containers.iter().map(|c| c.to_init_json(&self.uid)).collect();
            status["initContainerStatuses"] = Value::Array(init);
        }
        if let Some(ip) = &self.pod_ip {
            status["podIP"] = json!(ip);
            status["podIPs"] = json!([{"ip": ip}]);
        }
        if let Some(eviction) = self.evicted.clone() {
            for c in status["containerStatuses"].as_array_mut().into_iter().flatten() {
                c["ready"] = json!(false);
                c["started"] = json!(false);
            }
            status["reason"] = json!(eviction.reason);
            status["message"] = json!(eviction.message);
            let target = Generated::new("DisruptionTarget", true)
                .because("TerminationByKubelet", Some(eviction.message));
            let target = self.stamp(target, now);
            status["conditions"].as_array_mut().expect("conditions").insert(0, target);
        }
        status
    }

    /// `containerStatuses`: sorted by name, as the kubelet's `convertToAPIContainerStatuses` sorts
    /// them (init containers keep the spec's order).
    fn container_statuses(&self) -> Vec<Value> {
        let mut sorted: Vec<&ContainerView> = self.containers.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        sorted.into_iter().map(|c| c.to_json(&self.uid)).collect()
    }

    /// The main container's view.
    pub fn main(&self) -> &ContainerView {
        &self.containers[self.main]
    }

    /// The main container's view, to change.
    pub fn main_mut(&mut self) -> &mut ContainerView {
        &mut self.containers[self.main]
    }

    /// The positions in `containers` of the regular sidecars: every container but the main one.
    pub fn regular_sidecars(&self) -> impl Iterator<Item = usize> + use<> {
        let main = self.main;
        (0..self.containers.len()).filter(move |&i| i != main)
    }

    /// The names of the regular sidecars running now.
    pub fn regular_sidecars_running(&self) -> Vec<String> {
        let running = self.regular_sidecars().map(|i| &self.containers[i]).filter(|c| c.is_running());
        running.map(|c| c.name.clone()).collect()
    }

    fn generate(&self, phase: &str) -> Vec<Generated> {
        let terminal_reason = match phase {
            "Succeeded" => Some("PodCompleted"),
            "Failed" => Some("PodFailed"),
            _ => None,
        };
        let sidecars = self.init_containers.iter().filter(|c| c.restartable);
        let unready: Vec<&str> =
            sidecars.chain(&self.containers).filter(|c| !c.is_running()).map(|c| c.name.as_str()).collect();
        let containers_ready = match terminal_reason {
            Some(reason) => Generated::new("ContainersReady", false).because(reason, None),
            None if unready.is_empty() => Generated::new("ContainersReady", true),
            None => Generated::new("ContainersReady", false).because(
                "ContainersNotReady",
                Some(format!("containers with unready status: [{}]", unready.join(" "))),
            ),
        };
        let ready = Generated { kind: "Ready", ..containers_ready.clone() };
        let incomplete: Vec<&str> =
            self.init_containers.iter().filter(|c| !c.initialized()).map(|c| c.name.as_str()).collect();
        let mut initialized = Generated::new("Initialized", incomplete.is_empty());
        if !incomplete.is_empty() {
            let message = format!("containers with incomplete status: [{}]", incomplete.join(" "));
            initialized = initialized.because("ContainersNotInitialized", Some(message));
        } else if phase == "Succeeded" {
            initialized = initialized.because("PodCompleted", None);
        }
        vec![
            Generated::new("PodReadyToStartContainers", self.sandbox_ready),
            initialized,
            ready,
            containers_ready,
            Generated::new("PodScheduled", true),
        ]
    }

    /// The condition's JSON, its `lastTransitionTime` kept while its status is unchanged.
    fn stamp(&mut self, c: Generated, now: &str) -> Value {
        let at = match self.transitions.get(c.kind) {
            Some((status, at)) if *status == c.status && !at.is_empty() => at.clone(),
            _ => now.to_string(),
        };
        match self.transitions.get_mut(c.kind) {
            Some(kept) => *kept = (c.status, at.clone()),
            None => drop(self.transitions.insert(c.kind.to_string(), (c.status, at.clone()))),
        }
        let mut out = json!({
            "type": c.kind,
            "status": if c.status { "True" } else { "False" },
            "lastProbeTime": null,
            "lastTransitionTime": at,
        });
        if let Some(reason) = c.reason {
            out["reason"] = json!(reason);
        }
        if let Some(message) = c.message {
            out["message"] = json!(message);
        }
        out
    }
}

/// The scheduler's PodScheduled condition at `now` (what a binding writes).
pub fn scheduled_condition(now: &str) -> Value {
    json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now})
}

/// PodScheduled False as kube-scheduler writes it for a pod no node has room for.
pub fn unschedulable_condition(now: &str, message: &str) -> Value {
    json!({"type": "PodScheduled", "status": "False", "lastProbeTime": null, "lastTransitionTime": now,
        "reason": "Unschedulable", "message": message})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner(state: ContainerState) -> ContainerView {
        ContainerView { state, ..ContainerView::creating("runner", "img") }
    }

    #[test]
    fn ids_are_the_hashes_of_the_container_and_the_image() {
        use crate::fnv::fnv1a64;
        let hex = |stem: &str| -> String {
            (0..4).map(|part| format!("{:016x}", fnv1a64(format!("{stem}{part}").as_bytes()))).collect()
        };
        let c = ContainerView { restart_count: 2, ..runner(ContainerState::Running("t".into())) };
        assert_eq!(c.container_id("uid-1"), format!("containerd://{}", hex("uid-1/runner/2/")));
        assert_eq!(image_id("ghcr.io/a:b"), format!("ghcr.io/a:b@sha256:{}", hex("ghcr.io/a:b/")));
    }

    fn condition<'a>(status: &'a Value, kind: &str) -> &'a Value {
        status["conditions"].as_array().unwrap().iter().find(|c| c["type"] == kind).unwrap()
    }

    #[test]
    fn conditions_come_in_the_kubelets_order_and_keep_their_time_until_they_change() {
        let existing = json!([scheduled_condition("t0")]);
        let mut view =
            PodView::admitted("u1", "Never", vec![ContainerView::creating("runner", "img")], &existing);
        let first = view.document("t1");
        let kinds: Vec<&str> =
            first["conditions"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
        );
        assert_eq!(condition(&first, "PodScheduled")["lastTransitionTime"], "t0");
        assert_eq!(condition(&first, "Ready")["message"], "containers with unready status: [runner]");
        assert_eq!(first["phase"], "Pending");
        assert!(first.get("podIP").is_none());
        view.sandbox_ready = true;
        view.pod_ip = Some("10.244.0.2".into());
        view.containers[0].state = ContainerState::Running("t2".into());
        let running = view.document("t2");
        assert_eq!(running["phase"], "Running");
        assert_eq!(condition(&running, "Ready")["status"], "True");
        assert_eq!(condition(&running, "Ready")["lastTransitionTime"], "t2");
        assert_eq!(condition(&running, "Initialized")["lastTransitionTime"], "t1");
        assert_eq!(running["podIPs"][0]["ip"], "10.244.0.2");
        assert_eq!(running["containerStatuses"][0]["started"], true);
    }

    #[test]
    fn a_terminated_container_reports_its_code_and_the_pod_its_terminal_phase() {
        let done = runner(ContainerState::Terminated {
            exit_code: 7,
            started: "t0".into(),
            finished: "t2".into(),
            reason: None,
        });
        let json = done.to_json("u1");
        assert_eq!(json["state"]["terminated"]["exitCode"], 7);
        assert_eq!(json["state"]["terminated"]["reason"], "Error");
        assert_eq!(json["ready"], false);
        assert!(json["containerID"].as_str().unwrap().starts_with("containerd://"));
        assert_eq!(phase(std::slice::from_ref(&done), "Never", false), "Failed");
        assert_eq!(phase(std::slice::from_ref(&done), "OnFailure", false), "Running");
        assert_eq!(phase(std::slice::from_ref(&done), "Always", true), "Failed");
        let ok = runner(ContainerState::Terminated {
            exit_code: 0,
            started: "t0".into(),
            finished: "t2".into(),
            reason: None,
        });
        let mut view = PodView::admitted("u1", "Never", vec![ok], &Value::Null);
        let status = view.document("t3");
        assert_eq!(status["phase"], "Succeeded");
        assert_eq!(condition(&status, "ContainersReady")["reason"], "PodCompleted");
        assert_eq!(condition(&status, "Initialized")["reason"], "PodCompleted");
    }

    #[test]
    fn a_restarted_container_reports_its_last_termination() {
        let mut view = runner(ContainerState::Waiting("CrashLoopBackOff".into()));
        view.restart_count = 1;
        view.last_terminated = Some((137, "t0".into(), "t1".into()));
        let json = view.to_json("u1");
        assert_eq!(json["lastState"]["terminated"]["exitCode"], 137);
        assert_ne!(json["lastState"]["terminated"]["containerID"], json["containerID"]);
        assert_eq!(phase(std::slice::from_ref(&view), "Always", false), "Running");
    }
}
