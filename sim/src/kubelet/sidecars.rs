//! Native sidecars (issue 42, item 8; docs/windows.md): init containers with `restartPolicy: Always`,
//! as ARC's chart has run `dind` in containerMode dind since #3842. The kubelet starts one in its
//! place among the init containers and goes on at once (no startup probe); it runs beside the main
//! container, restarted whenever it exits whatever the pod's restart policy (the first restart at the
//! next sync, later ones after CrashLoopBackOff); once the main container has exited for good the
//! kubelet stops it (it exits 0 on SIGTERM, as dockerd does) and only then is the pod's phase
//! terminal. A world may make sidecars crash ([`SidecarCrashes`]): each run of a sidecar while the
//! main container runs may end with exit 1 (`Error`) or 137 (`OOMKilled`) after a drawn time. Until
//! the kubelet restarts it, `initContainerStatuses` reports it `terminated` with that code: the
//! status ARC's init-container check (#4457, 0.14.2) reads as a failed init container. Each pod with
//! a sidecar draws from a stream of its own (`kubelet/pod/<uid>/sidecar`), so other pods draw as
//! before. Simplified: a sidecar crashes only while the main container runs (a restart it waits for is
//! dropped when the main container stops), and the main container's process is not polled while the
//! kubelet writes a sidecar's status (a few milliseconds).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::events::KubeletEventKind;
use super::pod::PodTask;
use super::sidecar_steps::Step;
use super::status::ContainerState;
use crate::apiserver::LagRange;

/// The exit code of a process the kernel's OOM killer ended.
const EXIT_OOM: i32 = 137;

/// How a world's sidecars crash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SidecarCrashes {
    /// Percent of a sidecar's runs (beside a running main container) that end in a crash.
    pub percent: u8,
    /// How long such a run lasts before it crashes.
    pub after: LagRange,
    /// Percent of the crashes that are the OOM killer's (exit 137, `OOMKilled`); the rest exit 1.
    pub oom_percent: u8,
}

impl PodTask {
    /// Starts init container `i`, a sidecar: running from now on, and the initialization goes on.
    pub(crate) async fn start_sidecar(&mut self, i: usize) {
        let started = self.now();
        self.view.init_containers[i].state = ContainerState::Running(started);
        self.write().await;
        let (container, restart_count) =
            (self.view.init_containers[i].name.clone(), self.view.init_containers[i].restart_count);
        self.record(KubeletEventKind::SidecarStarted { container, restart_count });
    }

    /// Draws, for every running sidecar, whether this run crashes and when (the main container has
    /// just started).
    pub(crate) fn plan_sidecar_crashes(&mut self) {
        let running: Vec<usize> = (0..self.view.init_containers.len())
            .filter(|&i| {
                self.view.init_containers[i].restartable && self.view.init_containers[i].is_running()
            })
            .collect();
        for i in running {
            self.plan_crash(i);
        }
    }

    fn plan_crash(&mut self, i: usize) {
        let Some(crashes) = self.kubelet.config.sidecar_crashes.clone() else { return };
        let uid = self.uid();
        let rng = self
            .sidecars
            .rng
            .get_or_insert_with(|| self.kubelet.seed.named_rng(&format!("kubelet/pod/{uid}/sidecar")));
        if crashes.percent == 0 || rng.random_range(0..100u8) >= crashes.percent {
            return;
        }
        let after = super::draw(rng, crashes.after);
        let code = if rng.random_range(0..100u8) < crashes.oom_percent { EXIT_OOM } else { 1 };
        self.sidecars.set(i, after, Step::Crash(code));
    }

    /// Takes the sidecars' earliest step and writes what it changed.
    pub(crate) async fn step_sidecar(&mut self) {
        let Some((i, step)) = self.sidecars.take_due() else { return };
        match step {
            Step::Crash(code) => self.sidecar_crashed(i, code).await,
            Step::Sync => self.sidecar_sync(i).await,
            Step::Restart => self.restart_sidecar(i).await,
        }
    }

    async fn restart_sidecar(&mut self, i: usize) {
        self.start_sidecar(i).await;
        self.plan_crash(i);
    }

    async fn sidecar_crashed(&mut self, i: usize, exit_code: i32) {
        let finished = self.now();
        let view = &mut self.view.init_containers[i];
        let ContainerState::Running(started) = view.state.clone() else { return };
        let reason = (exit_code == EXIT_OOM).then(|| "OOMKilled".to_string());
        view.state = ContainerState::Terminated { exit_code, started, finished, reason };
        let container = view.name.clone();
        self.record(KubeletEventKind::SidecarCrashed { container, exit_code });
        self.write().await;
        let pause = self.draw(LagRange::between(100, 1_000));
        self.sidecars.set(i, pause, Step::Sync);
    }

    /// The sync after a crash: a sidecar that never restarted starts again at once; one that did waits
    /// out CrashLoopBackOff.
    async fn sidecar_sync(&mut self, i: usize) {
        let restarts = self.view.init_containers[i].restart_count;
        self.count_restart(i);
        if restarts == 0 {
            return self.restart_sidecar(i).await;
        }
        let backoff = self.kubelet.crash_backoff(restarts - 1);
        self.view.init_containers[i].state = ContainerState::Waiting("CrashLoopBackOff".into());
        self.write().await;
        self.sidecars.set(i, backoff, Step::Restart);
    }

    /// One more restart of sidecar `i`, its last run's termination kept.
    fn count_restart(&mut self, i: usize) {
        let view = &mut self.view.init_containers[i];
        if let ContainerState::Terminated { exit_code, started, finished, .. } = view.state.clone() {
            view.last_terminated = Some((exit_code, started, finished));
        }
        view.restart_count += 1;
    }

    /// The kubelet stops the pod's sidecars (the main container is done): each exits 0 on SIGTERM.
    /// Whether any was running.
    pub(crate) fn stop_sidecars(&mut self) -> bool {
        self.sidecars.clear();
        let finished = self.now();
        let mut stopped = false;
        for view in self.view.init_containers.iter_mut().filter(|c| c.restartable) {
            if let ContainerState::Running(started) = view.state.clone() {
                view.state = ContainerState::Terminated {
                    exit_code: 0,
                    started,
                    finished: finished.clone(),
                    reason: None,
                };
                stopped = true;
            }
        }
        stopped
    }
}
