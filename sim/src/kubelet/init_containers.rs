//! Init containers (issue 42, item 8; docs/windows.md): a pod's `spec.initContainers` run one after
//! another once its sandbox is up and before its main container is created, each for a drawn time
//! (its process is the model's: it does its work and exits 0). A world may make some fail to start
//! ([`InitContainers::failed_percent`]): containerd's "failed to create containerd task: … context
//! canceled", reported `terminated` with exit 128 and reason `StartError` (#4452). Under `restartPolicy:
//! Never` the pod is then Failed, its main container never created (`waiting: PodInitializing`); under
//! `OnFailure` or `Always` the kubelet reports the failure with the pod still Pending, backs off
//! (`CrashLoopBackOff`, the init container's restart count up) and tries again: the window ARC's
//! init-container check (#4457, 0.14.2) exists for. Each pod with init containers draws from a stream
//! of its own (`kubelet/pod/<uid>/init`), so pods without any draw as before.

use std::time::Duration;

use k8s_openapi::api::core::v1::Container;
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::events::KubeletEventKind;
use super::pod::{Initialized, PodSignal, PodTask};
use super::status::ContainerState;
use crate::apiserver::LagRange;

/// How long an init container runs when the world says nothing (copying the runner's externals).
pub const DEFAULT_INIT_RUN: LagRange = LagRange::between(200, 2_000);

/// The exit code containerd reports for a task that never started.
pub const EXIT_START_ERROR: i32 = 128;

/// How a world's init containers behave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitContainers {
    /// How long each runs before it exits 0.
    pub run: LagRange,
    /// Percent of pods whose first init container fails to start, 1 to `max_failures` times.
    pub failed_percent: u8,
    /// The most failures in a row for such a pod.
    pub max_failures: u32,
}

impl PodTask {
    /// Runs the pod's init containers in order (none: done at once).
    pub(crate) async fn initialize(&mut self, init: &[Container]) -> Initialized {
        if init.is_empty() {
            return Initialized::Done;
        }
        let mut rng = self.kubelet.seed.named_rng(&format!("kubelet/pod/{}/init", self.uid()));
        let config = self.kubelet.config.init_containers.clone();
        let run = config.as_ref().map_or(DEFAULT_INIT_RUN, |c| c.run);
        let mut failures = match &config {
            Some(c) if c.failed_percent > 0 && rng.random_range(0..100u8) < c.failed_percent => {
                rng.random_range(1..=c.max_failures.max(1))
            }
            _ => 0,
        };
        for i in 0..init.len() {
            let sidecar = self.view.init_containers[i].restartable;
            loop {
                if i == 0 && failures > 0 {
                    failures -= 1;
                    match self.start_error(i).await {
                        Ok(true) => continue,
                        Ok(false) => return Initialized::Failed,
                        Err(signal) => return Initialized::Interrupted(signal),
                    }
                }
                if sidecar {
                    self.start_sidecar(i).await;
                    break;
                }
                match self.run_init(i, super::draw(&mut rng, run)).await {
                    Ok(()) => break,
                    Err(signal) => return Initialized::Interrupted(signal),
                }
            }
        }
        for c in &mut self.view.containers {
            c.state = ContainerState::Waiting("ContainerCreating".into());
        }
        self.write().await;
        Initialized::Done
    }

    /// Init container `i` runs for `run` and exits 0.
    async fn run_init(&mut self, i: usize, run: Duration) -> Result<(), PodSignal> {
        let started = self.now();
        self.view.init_containers[i].state = ContainerState::Running(started.clone());
        self.write().await;
        if let Some(signal) = self.wait(run).await {
            return Err(signal);
        }
        let finished = self.now();
        self.view.init_containers[i].state =
            ContainerState::Terminated { exit_code: 0, started, finished, reason: None };
        self.write().await;
        Ok(())
    }

    /// Init container `i` fails to start: reported, then (unless the pod never restarts) backed off.
    /// `Ok(true)` to try again, `Ok(false)` when the pod failed for good.
    async fn start_error(&mut self, i: usize) -> Result<bool, PodSignal> {
        let now = self.now();
        let container = self.view.init_containers[i].name.clone();
        self.record(KubeletEventKind::InitContainerFailed { container, exit_code: EXIT_START_ERROR });
        self.view.init_containers[i].state = ContainerState::Terminated {
            exit_code: EXIT_START_ERROR,
            started: now.clone(),
            finished: now.clone(),
            reason: Some("StartError".into()),
        };
        self.write().await;
        if self.view.restart_policy == "Never" {
            return Ok(false);
        }
        let backoff = self.kubelet.crash_backoff(self.view.init_containers[i].restart_count);
        let pause = self.draw(LagRange::between(100, 1_000));
        if let Some(signal) = self.wait(pause).await {
            return Err(signal);
        }
        let view = &mut self.view.init_containers[i];
        view.restart_count += 1;
        view.last_terminated = Some((EXIT_START_ERROR, now.clone(), now));
        view.state = ContainerState::Waiting("CrashLoopBackOff".into());
        self.write().await;
        match self.wait(backoff).await {
            Some(signal) => Err(signal),
            None => Ok(true),
        }
    }
}
