//! Pod status documents the kubelet writes through `/status`, shaped as a real kubelet shapes them.

use serde_json::{Value, json};

/// The state of one container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerState {
    /// Not started: `waiting` with a reason (`ContainerCreating`, `CreateContainerConfigError`,
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
    /// The previous termination, after a restart.
    pub last_terminated: Option<(i32, String, String)>,
}

impl ContainerView {
    /// The `containerStatuses[]` entry.
    pub fn to_json(&self) -> Value {
        let state = state_json(&self.state);
        let ready = matches!(self.state, ContainerState::Running(_));
        let mut status = json!({
            "name": self.name,
            "image": self.image,
            "imageID": format!("{}@sha256:arcsim", self.image),
            "containerID": format!("arcsim://{}-{}", self.name, self.restart_count),
            "ready": ready,
            "started": ready,
            "restartCount": self.restart_count,
            "state": state,
        });
        if let Some((code, started, finished)) = &self.last_terminated {
            let last = ContainerState::Terminated {
                exit_code: *code,
                started: started.clone(),
                finished: finished.clone(),
            };
            status["lastState"] = state_json(&last);
        }
        status
    }
}

fn state_json(state: &ContainerState) -> Value {
    match state {
        ContainerState::Waiting(reason) => json!({"waiting": {"reason": reason}}),
        ContainerState::Running(since) => json!({"running": {"startedAt": since}}),
        ContainerState::Terminated { exit_code, started, finished } => json!({"terminated": {
            "exitCode": exit_code,
            "reason": if *exit_code == 0 { "Completed" } else { "Error" },
            "startedAt": started,
            "finishedAt": finished,
        }}),
    }
}

/// The Ready and ContainersReady conditions at `now`.
pub fn conditions(ready: bool, now: &str) -> Value {
    let status = if ready { "True" } else { "False" };
    json!([
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
        {"type": "Initialized", "status": "True", "lastTransitionTime": now},
        {"type": "ContainersReady", "status": status, "lastTransitionTime": now},
        {"type": "Ready", "status": status, "lastTransitionTime": now},
    ])
}

/// A status patch body: phase, conditions, container statuses.
pub fn status_patch(phase: &str, containers: &[ContainerView], init: &[ContainerView], now: &str) -> Value {
    let ready =
        phase == "Running" && containers.iter().all(|c| matches!(c.state, ContainerState::Running(_)));
    let mut status = json!({
        "phase": phase,
        "conditions": conditions(ready, now),
        "containerStatuses": containers.iter().map(ContainerView::to_json).collect::<Vec<_>>(),
        "hostIP": "10.0.0.1",
        "podIP": "10.1.0.2",
    });
    if !init.is_empty() {
        status["initContainerStatuses"] = json!(init.iter().map(ContainerView::to_json).collect::<Vec<_>>());
    }
    json!({"status": status})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_container_is_ready_and_a_terminated_one_reports_its_code() {
        let running = ContainerView {
            name: "runner".into(),
            image: "img".into(),
            state: ContainerState::Running("t0".into()),
            restart_count: 0,
            last_terminated: None,
        };
        let patch = status_patch("Running", std::slice::from_ref(&running), &[], "t1");
        assert_eq!(patch["status"]["conditions"][3]["status"], "True");
        assert_eq!(patch["status"]["containerStatuses"][0]["state"]["running"]["startedAt"], "t0");
        let done = ContainerView {
            state: ContainerState::Terminated { exit_code: 7, started: "t0".into(), finished: "t2".into() },
            ..running
        };
        let json = done.to_json();
        assert_eq!(json["state"]["terminated"]["exitCode"], 7);
        assert_eq!(json["state"]["terminated"]["reason"], "Error");
        assert_eq!(json["ready"], false);
    }
}
