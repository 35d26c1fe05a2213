//! Sidecars (issue 42, item 8; docs/windows.md): containers that run beside a pod's main container.
//!
//! **Native sidecars**: init containers with `restartPolicy: Always`, as ARC's chart has run `dind`
//! in containerMode dind since #3842 on clusters from 1.29. The kubelet starts one in its place among
//! the init containers and goes on at once (no startup probe); it runs beside the main container,
//! restarted whenever it exits whatever the pod's restart policy (the first restart at the next sync,
//! later ones after CrashLoopBackOff); once the main container has exited for good the kubelet stops
//! it (it exits 0 on SIGTERM, as dockerd does) and only then is the pod's phase terminal.
//!
//! **Regular sidecars**: further entries of `spec.containers`, as the chart renders `dind` on
//! clusters before 1.29 and the legacy runner pod its `docker` container. They start with the main
//! container (simplified: in its write, once it can start) and are restarted as the pod's restart
//! policy says (under ARC's `Never`, not at all); the kubelet never stops them by itself, so a pod
//! whose main container exited for good while one runs stays Running, not Ready, until it is
//! deleted, and one that exited non-zero under `Never` makes the pod Failed when the main container
//! ends, whatever its exit code (the case ARC's #4340 reads as success when the runner exited 0).
//!
//! A world may make sidecars crash ([`SidecarCrashes`]): each run of a sidecar while the main
//! container runs may end with exit 1 (`Error`) or 137 (`OOMKilled`) after a drawn time. Until the
//! kubelet restarts a native one, `initContainerStatuses` reports it `terminated` with that code: the
//! status ARC's init-container check (#4457, 0.14.2) reads as a failed init container. Each pod with
//! a sidecar draws from a stream of its own (`kubelet/pod/<uid>/sidecar`), so other pods draw as
//! before. Simplified: a sidecar crashes only while the main container runs (a restart it waits for is
//! dropped when the main container stops), and the main container's process is not polled while the
//! kubelet writes a sidecar's status (a few milliseconds).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::events::KubeletEventKind;
use super::pod::PodTask;
use super::sidecar_steps::{Slot, Step};
use super::status::{ContainerState, ContainerView};
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
    /// Starts init container `i`, a native sidecar: running from now on, and the initialization goes
    /// on.
    pub(crate) async fn start_sidecar(&mut self, i: usize) {
        self.start_slot(Slot::Native(i)).await;
    }

    /// Marks the regular sidecars that never ran as running since `started` (the main container's
    /// first start writes them); their names and restart counts, to record once written.
    pub(crate) fn start_regular_sidecars(&mut self, started: &str) -> Vec<(String, u32)> {
        let mut started_now = Vec::new();
        for i in self.view.regular_sidecars() {
            let c = &mut self.view.containers[i];
            if !c.has_run() {
                c.state = ContainerState::Running(started.to_string());
                started_now.push((c.name.clone(), c.restart_count));
            }
        }
        started_now
    }

    /// Records the starts [`Self::start_regular_sidecars`] made.
    pub(crate) fn record_regular_sidecars_started(&self, started: Vec<(String, u32)>) {
        for (container, restart_count) in started {
            self.record(KubeletEventKind::SidecarStarted { container, restart_count, regular: true });
        }
    }

    async fn start_slot(&mut self, slot: Slot) {
        let started = self.now();
        self.slot_view(slot).state = ContainerState::Running(started);
        self.write().await;
        let view = self.slot_view(slot);
        let (container, restart_count) = (view.name.clone(), view.restart_count);
        let regular = matches!(slot, Slot::Regular(_));
        self.record(KubeletEventKind::SidecarStarted { container, restart_count, regular });
    }

    /// The view of the sidecar in `slot`.
    fn slot_view(&mut self, slot: Slot) -> &mut ContainerView {
        match slot {
            Slot::Native(i) => &mut self.view.init_containers[i],
            Slot::Regular(i) => &mut self.view.containers[i],
        }
    }

    /// Every sidecar, native ones first.
    fn slots(&self) -> Vec<Slot> {
        let native = (0..self.view.init_containers.len())
            .filter(|&i| self.view.init_containers[i].restartable)
            .map(Slot::Native);
        let regular = self.view.regular_sidecars().map(Slot::Regular);
        native.chain(regular).collect()
    }

    /// Draws, for every running sidecar, whether this run crashes and when (the main container has
    /// just started).
    pub(crate) fn plan_sidecar_crashes(&mut self) {
        let running: Vec<Slot> =
            self.slots().into_iter().filter(|&s| self.slot_view(s).is_running()).collect();
        for slot in running {
            self.plan_crash(slot);
        }
    }

    fn plan_crash(&mut self, slot: Slot) {
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
        self.sidecars.set(slot, after, Step::Crash(code));
    }

    /// Takes the sidecars' earliest step and writes what it changed.
    pub(crate) async fn step_sidecar(&mut self) {
        let Some((slot, step)) = self.sidecars.take_due() else { return };
        match step {
            Step::Crash(code) => self.sidecar_crashed(slot, code).await,
            Step::Sync => self.sidecar_sync(slot).await,
            Step::Restart => self.restart_sidecar(slot).await,
        }
    }

    async fn restart_sidecar(&mut self, slot: Slot) {
        self.start_slot(slot).await;
        self.plan_crash(slot);
    }

    async fn sidecar_crashed(&mut self, slot: Slot, exit_code: i32) {
        let finished = self.now();
        let view = self.slot_view(slot);
        let ContainerState::Running(started) = view.state.clone() else { return };
        let reason = (exit_code == EXIT_OOM).then(|| "OOMKilled".to_string());
        view.state = ContainerState::Terminated { exit_code, started, finished, reason };
        let container = view.name.clone();
        let regular = matches!(slot, Slot::Regular(_));
        self.record(KubeletEventKind::SidecarCrashed { container, exit_code, regular });
        self.write().await;
        if !self.restarts(slot, exit_code) {
            return;
        }
        let pause = self.draw(LagRange::between(100, 1_000));
        self.sidecars.set(slot, pause, Step::Sync);
    }

    /// Whether the kubelet restarts the sidecar after it exited with `exit_code`: a native one always,
    /// a regular one as the pod's restart policy says.
    fn restarts(&self, slot: Slot, exit_code: i32) -> bool {
        match (slot, self.view.restart_policy.as_str()) {
            (Slot::Native(_), _) | (Slot::Regular(_), "Always") => true,
            (Slot::Regular(_), "OnFailure") => exit_code != 0,
            (Slot::Regular(_), _) => false,
        }
    }

    /// The sync after a crash: a sidecar that never restarted starts again at once; one that did waits
    /// out CrashLoopBackOff.
    async fn sidecar_sync(&mut self, slot: Slot) {
        let restarts = self.slot_view(slot).restart_count;
        self.count_restart(slot);
        if restarts == 0 {
            return self.restart_sidecar(slot).await;
        }
        let backoff = self.kubelet.crash_backoff(restarts - 1);
        self.slot_view(slot).state = ContainerState::Waiting("CrashLoopBackOff".into());
        self.write().await;
        self.sidecars.set(slot, backoff, Step::Restart);
    }

    /// One more restart of the sidecar in `slot`, its last run's termination kept.
    fn count_restart(&mut self, slot: Slot) {
        let view = self.slot_view(slot);
        if let ContainerState::Terminated { exit_code, started, finished, .. } = view.state.clone() {
            view.last_terminated = Some((exit_code, started, finished));
        }
        view.restart_count += 1;
    }

    /// The kubelet stops the pod's sidecars (the main container is done, or the pod is deleted): each
    /// exits 0 on SIGTERM. Whether any was running.
    pub(crate) fn stop_sidecars(&mut self) -> bool {
        self.sidecars.clear();
        let finished = self.now();
        let mut stopped = false;
        for slot in self.slots() {
            let view = self.slot_view(slot);
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

    /// Records a pod that turned Failed though its main container exited 0 (a regular sidecar failed
    /// under `restartPolicy: Never`).
    pub(crate) fn record_failure_beside_success(&self) {
        let main_succeeded =
            matches!(self.view.main().state, ContainerState::Terminated { exit_code: 0, .. });
        if self.view.phase() != "Failed" || !main_succeeded {
            return;
        }
        let failed = |c: &&ContainerView| matches!(c.state, ContainerState::Terminated { exit_code, .. } if exit_code != 0);
        let sidecars = self.view.regular_sidecars().map(|i| &self.view.containers[i]);
        let containers = sidecars.filter(failed).map(|c| c.name.clone()).collect();
        self.record(KubeletEventKind::FailedBesideSucceededMain { containers });
    }
}
