//! One pod's worker on the simulated node, from the moment the kubelet sees the pod bound to it. Its
//! status writes follow a real kubelet's sequence (see [`super::status`]):
//!
//! 1. admitted: Pending, PodReadyToStartContainers False, the container `waiting: ContainerCreating`,
//!    `hostIP(s)` and `startTime`;
//! 2. after a seeded sandbox delay: PodReadyToStartContainers True, `podIP(s)`;
//! 3. after a seeded start delay (and once its secrets can be read): Running, the container running
//!    (started, ready), ContainersReady and Ready True;
//! 4. when the process exits and the restart policy does not restart it: the terminal phase, the
//!    container terminated with its exit code; a restart instead writes `waiting: CrashLoopBackOff` with
//!    `lastState` and then 3 again;
//! 5. after a seeded teardown delay: PodReadyToStartContainers False.
//!
//! A deletion the worker hears of (through the kubelet's lagged watch) is handled in
//! [`super::termination`]; an eviction kills the process at once and writes Failed with its reason; an
//! injected crash kills the process with an exit code and restarts it per the policy.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::container::runner::Shutdown;
use super::container::{self, EXIT_SIGKILL, Process, ProcessContext, ProcessState};
use super::events::{KubeletEventKind, StopCause};
use super::sidecar_steps::Sidecars;
use super::status::{ContainerState, ContainerView, Eviction, PodView};
use super::writes::PodWrites;
use crate::apiserver::LagRange;
use crate::clock::sleep_until_some;

/// What the kubelet tells a pod worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodSignal {
    /// The kubelet's watch showed the pod with a deletionTimestamp: terminate gracefully.
    Deleting {
        /// The grace period, in seconds.
        grace_seconds: i64,
    },
    /// The object is gone from the API.
    Removed,
    /// Evict the pod (phase Failed, this reason).
    Evict {
        /// `Evicted`, `OutOfmemory`, …
        reason: String,
    },
    /// The main container's process crashes with this exit code.
    Crash {
        /// Exit code.
        exit_code: i32,
        /// The runtime's reason, when not `Error` (`OOMKilled`: the kernel's OOM killer).
        reason: Option<String>,
    },
    /// The node's machine died: the process is gone and the worker never acts again.
    NodeDied,
}

/// How a run of the main container ended, as far as the container loop cares.
pub(crate) enum Ended {
    /// The process exited (or crashed) with this code (and the runtime's reason, if not the usual);
    /// the restart policy decides what follows.
    Exited(i32, Option<String>),
    /// The pod's life is over (terminated, evicted or removed); the worker is done.
    Done,
}

/// How a pod's initialization ended ([`super::init_containers`]).
pub(crate) enum Initialized {
    /// Every init container completed: the main container may be created.
    Done,
    /// An init container failed under `restartPolicy: Never`: the pod is Failed.
    Failed,
    /// A signal came first (a deletion, an eviction, the node's death).
    Interrupted(PodSignal),
}

/// A started process: its future (dropping it is SIGKILL), its SIGTERM, what it reported.
pub(crate) struct Running {
    pub future: BoxFuture<'static, i32>,
    pub sigterm: CancellationToken,
    pub state: Arc<Mutex<ProcessState>>,
    /// When it started (`startedAt`).
    pub started: String,
}

impl Running {
    /// SIGKILL: the process is gone where it stands, and so is its connection.
    pub(crate) fn kill(&mut self) {
        self.future = futures::future::pending().boxed();
        self.state.lock().expect("process state").killed();
    }
}

/// One pod's worker.
pub(crate) struct PodTask {
    pub kubelet: Arc<Shared>,
    pub pod: Pod,
    pub signals: UnboundedReceiver<PodSignal>,
    /// The signal channel has closed (the kubelet forgot the pod); no more signals will come.
    pub closed: bool,
    pub rng: ChaCha8Rng,
    pub view: PodView,
    pub writes: PodWrites,
    /// The stream its slow start draws from (`kubelet/pod/<uid>/start`), when the node starts slowly.
    pub starts: Option<ChaCha8Rng>,
    /// Its native sidecars' steps to come ([`super::sidecars`]).
    pub sidecars: Sidecars,
}

impl PodTask {
    /// A worker for `pod` as the kubelet first saw it bound to its node.
    pub(crate) fn new(
        kubelet: Arc<Shared>,
        pod: Pod,
        signals: UnboundedReceiver<PodSignal>,
        rng: ChaCha8Rng,
    ) -> Self {
        let spec = pod.spec.clone().unwrap_or_default();
        let policy = spec.restart_policy.clone().unwrap_or_else(|| "Always".into());
        let init = spec.init_containers.clone().unwrap_or_default();
        let first_wait = if init.is_empty() { "ContainerCreating" } else { "PodInitializing" };
        let containers: Vec<ContainerView> = spec.containers.iter().map(|c| waiting(c, first_wait)).collect();
        let existing =
            pod.status.as_ref().and_then(|s| serde_json::to_value(&s.conditions).ok()).unwrap_or_default();
        let (namespace, name) = (
            pod.metadata.namespace.clone().unwrap_or_default(),
            pod.metadata.name.clone().unwrap_or_default(),
        );
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let mut view = PodView::admitted(&uid, &policy, containers, &existing);
        view.main = main_index(&spec);
        view.init_containers = init
            .iter()
            .map(|c| ContainerView {
                restartable: c.restart_policy.as_deref() == Some("Always"),
                ..waiting(c, "PodInitializing")
            })
            .collect();
        let mut writes = PodWrites::new(kubelet.client.clone(), &namespace, &name, &uid);
        if let Some(link) = kubelet.link.as_ref().filter(|l| spec.node_name.as_deref() == Some(l.node())) {
            writes = writes.on_node(link.clone());
        }
        let starts = kubelet
            .config
            .slow_starts
            .is_some()
            .then(|| kubelet.seed.named_rng(&format!("kubelet/pod/{uid}/start")));
        PodTask {
            kubelet,
            pod,
            signals,
            closed: false,
            rng,
            view,
            writes,
            starts,
            sidecars: Sidecars::default(),
        }
    }

    fn namespace(&self) -> String {
        self.pod.metadata.namespace.clone().unwrap_or_default()
    }

    fn name(&self) -> String {
        self.pod.metadata.name.clone().unwrap_or_default()
    }

    pub(crate) fn uid(&self) -> String {
        self.pod.metadata.uid.clone().unwrap_or_default()
    }

    pub(crate) fn record(&self, kind: KubeletEventKind) {
        self.kubelet.record(&self.namespace(), &self.name(), &self.uid(), kind);
    }

    pub(crate) fn now(&self) -> String {
        self.kubelet.now()
    }

    pub(crate) fn draw(&mut self, range: LagRange) -> Duration {
        super::draw(&mut self.rng, range)
    }

    /// Writes the pod's status as it stands.
    pub(crate) async fn write(&mut self) -> bool {
        let now = self.now();
        let status = self.view.document(&now);
        self.writes.status(status).await
    }

    /// The next signal; once the channel has closed, `Removed` once and then nothing ever again.
    pub(crate) async fn next_signal(&mut self) -> PodSignal {
        if self.closed {
            return std::future::pending().await;
        }
        match self.signals.recv().await {
            Some(signal) => signal,
            None => {
                self.closed = true;
                PodSignal::Removed
            }
        }
    }

    /// Sleeps `d` unless a signal comes first. A crash signal while no process runs is ignored.
    pub(crate) async fn wait(&mut self, d: Duration) -> Option<PodSignal> {
        let deadline = tokio::time::Instant::now() + d; // allow-nondeterminism: tokio's paused clock is the sim clock
        loop {
            let signal = tokio::select! {
                biased;
                signal = self.next_signal() => signal,
                () = tokio::time::sleep_until(deadline) => return None,
            };
            if !matches!(signal, PodSignal::Crash { .. }) {
                return Some(signal);
            }
        }
    }

    /// The whole life of the pod on the node.
    pub(crate) async fn run(mut self) {
        self.view.start_time = Some(self.now());
        self.write().await;
        let delay = self.draw(self.kubelet.config.sandbox_delay);
        if let Some(signal) = self.wait(delay).await {
            return self.end_without_process(signal).await;
        }
        self.view.sandbox_ready = true;
        self.view.pod_ip = Some(self.kubelet.next_pod_ip());
        self.write().await;
        let init = self.pod.spec.as_ref().and_then(|s| s.init_containers.clone()).unwrap_or_default();
        match self.initialize(&init).await {
            Initialized::Done => {}
            Initialized::Failed => {
                self.finish().await;
                return self.await_deletion().await;
            }
            Initialized::Interrupted(signal) => return self.end_without_process(signal).await,
        }
        if let Err(signal) = self.pull_image().await {
            return self.end_without_process(signal).await;
        }
        let delay = self.draw(self.kubelet.config.start_delay);
        if let Some(signal) = self.wait(delay).await {
            return self.end_without_process(signal).await;
        }
        self.run_containers().await;
    }

    /// The first start's image pull on a node that starts slowly ([`super::SlowStarts`]): each failed pull is
    /// reported `ErrImagePull`, then `ImagePullBackOff` from half-way through the image backoff (a
    /// simplification of the pod worker's resyncs) until the next try; then the successful pull's
    /// extra time. `Err` when a signal came first.
    async fn pull_image(&mut self) -> Result<(), PodSignal> {
        let (Some(slow), Some(rng)) = (self.kubelet.config.slow_starts.clone(), self.starts.as_mut()) else {
            return Ok(());
        };
        let plan = slow.pull_plan(rng);
        for (attempt, failed) in (1..).zip(plan.failures) {
            self.hold(failed.pulling).await?;
            let container = self.view.main().name.clone();
            self.record(KubeletEventKind::ImagePullFailed { container, attempt });
            self.view.main_mut().state = ContainerState::Waiting("ErrImagePull".into());
            self.write().await;
            self.hold(failed.backoff / 2).await?;
            self.view.main_mut().state = ContainerState::Waiting("ImagePullBackOff".into());
            self.write().await;
            self.hold(failed.backoff - failed.backoff / 2).await?;
        }
        self.hold(plan.pull).await
    }

    /// Waits `d` (not at all when zero); `Err` with the signal that came first.
    async fn hold(&mut self, d: Duration) -> Result<(), PodSignal> {
        if d.is_zero() {
            return Ok(());
        }
        self.wait(d).await.map_or(Ok(()), Err)
    }

    /// A signal while no process runs.
    pub(crate) async fn end_without_process(&mut self, signal: PodSignal) {
        match signal {
            PodSignal::Removed | PodSignal::Crash { .. } => {}
            PodSignal::NodeDied => std::future::pending::<()>().await,
            PodSignal::Deleting { grace_seconds } => self.delete_stopped(grace_seconds).await,
            PodSignal::Evict { reason } => {
                self.evicted(&reason).await;
                self.await_deletion().await;
            }
        }
    }

    /// Runs the main container, restarting it per the restart policy, until the pod ends.
    async fn run_containers(&mut self) {
        let spec = self.pod.spec.clone().unwrap_or_default();
        let Some(main) = main_container(&spec) else { return };
        let process = Process::of(&self.pod, &main);
        loop {
            let started = match self.start(&process).await {
                Ok(running) => running,
                Err(signal) => return self.end_without_process(signal).await,
            };
            let since = started.started.clone();
            self.plan_sidecar_crashes();
            let Ended::Exited(code, reason) = self.supervise(started).await else { return };
            let finished = self.now();
            self.view.main_mut().state = ContainerState::Terminated {
                exit_code: code,
                started: since.clone(),
                finished: finished.clone(),
                reason,
            };
            let policy = self.view.restart_policy.clone();
            let restart = policy == "Always" || (policy == "OnFailure" && code != 0);
            if !restart {
                self.end_main().await;
                return self.await_deletion().await;
            }
            if !self.back_off(code, since, finished).await {
                return;
            }
        }
    }

    /// The main container is done for good: the pod ends, unless regular sidecars run on (the
    /// kubelet leaves them running, the pod Running and not Ready, until it is deleted).
    async fn end_main(&mut self) {
        let outliving = self.view.regular_sidecars_running();
        if outliving.is_empty() {
            return self.finish().await;
        }
        self.write().await;
        self.record(KubeletEventKind::SidecarsOutlivedMain { containers: outliving });
    }

    /// The pod ran to its end: its sidecars stopped (the main container's end written first), the
    /// terminal status, then the sandbox torn down.
    async fn finish(&mut self) {
        if self.view.sidecar_running() {
            self.write().await;
            let delay = self.draw(self.kubelet.config.sigterm_delay);
            tokio::time::sleep(delay).await;
            self.stop_sidecars();
        }
        self.view.terminal = true;
        self.write().await;
        self.record_failure_beside_success();
        let delay = self.draw(self.kubelet.config.teardown_delay);
        tokio::time::sleep(delay).await;
        self.view.sandbox_ready = false;
        self.write().await;
    }

    /// Waits out CrashLoopBackOff before the next start; false when the pod ended meanwhile.
    async fn back_off(&mut self, code: i32, started: String, finished: String) -> bool {
        let view = self.view.main_mut();
        let backoff = self.kubelet.crash_backoff(view.restart_count);
        view.restart_count += 1;
        view.last_terminated = Some((code, started, finished));
        view.state = ContainerState::Waiting("CrashLoopBackOff".into());
        self.write().await;
        match self.wait(backoff).await {
            None => true,
            Some(signal) => {
                self.end_without_process(signal).await;
                false
            }
        }
    }

    /// Prepares and starts the process. `Err` when a signal came before it could start.
    async fn start(&mut self, process: &Process) -> Result<Running, PodSignal> {
        let state = Arc::new(Mutex::new(ProcessState::default()));
        let ctx = self.process_context(state.clone());
        let name = self.view.main().name.clone();
        let input = loop {
            match container::prepare(&ctx, process).await {
                Ok(input) => break input,
                Err(e) => {
                    self.record(KubeletEventKind::ContainerConfigError {
                        container: name.clone(),
                        message: e.0,
                    });
                    self.view.main_mut().state = ContainerState::Waiting("CreateContainerConfigError".into());
                    self.write().await;
                    let retry = Duration::from_millis(self.kubelet.config.config_error_retry_ms);
                    if let Some(signal) = self.wait(retry).await {
                        return Err(signal);
                    }
                }
            }
        };
        let started = self.now();
        let sidecars = self.start_regular_sidecars(&started);
        self.view.main_mut().state = ContainerState::Running(started.clone());
        self.write().await;
        self.record_regular_sidecars_started(sidecars);
        let restart_count = self.view.main().restart_count;
        self.record(KubeletEventKind::ContainerStarted { container: name, restart_count });
        let sigterm = CancellationToken::new();
        let future = container::run(ctx, process.clone(), input, sigterm.clone()).boxed();
        Ok(Running { future, sigterm, state, started })
    }

    /// Runs the process until it exits or a signal ends it (its sidecars' crashes and restarts
    /// meanwhile).
    async fn supervise(&mut self, mut running: Running) -> Ended {
        let signal = loop {
            let sidecar = self.sidecars.next_due();
            tokio::select! {
                biased;
                signal = self.next_signal() => break signal,
                code = &mut running.future => {
                    self.sidecars.clear();
                    self.stopped(code, StopCause::Exited, &running.state);
                    return Ended::Exited(code, None);
                }
                () = sleep_until_some(sidecar) => self.step_sidecar().await,
            }
        };
        self.sidecars.clear();
        match signal {
            PodSignal::Crash { exit_code, reason } => {
                running.kill();
                if reason.as_deref() == Some("OOMKilled") {
                    self.record(KubeletEventKind::OomKilled { container: self.view.main().name.clone() });
                }
                self.stopped(exit_code, StopCause::Exited, &running.state);
                Ended::Exited(exit_code, reason)
            }
            PodSignal::Evict { reason } => {
                running.kill();
                self.stopped(EXIT_SIGKILL, StopCause::Evicted, &running.state);
                self.evicted(&reason).await;
                self.await_deletion().await;
                Ended::Done
            }
            PodSignal::Deleting { grace_seconds } => {
                self.terminate(running, Some(grace_seconds)).await;
                Ended::Done
            }
            PodSignal::Removed => {
                self.terminate(running, None).await;
                Ended::Done
            }
            PodSignal::NodeDied => self.died(running).await,
        }
    }

    /// The machine died under the process: it is gone, and so is every later act of the worker.
    pub(crate) async fn died(&mut self, mut running: Running) -> Ended {
        running.kill();
        self.stopped(EXIT_SIGKILL, StopCause::NodeDied, &running.state);
        std::future::pending::<()>().await;
        Ended::Done
    }

    /// Records the container's stop, with the runner and job its process reported.
    pub(crate) fn stopped(&self, exit_code: i32, cause: StopCause, state: &Arc<Mutex<ProcessState>>) {
        let state = state.lock().expect("process state").clone();
        self.record(KubeletEventKind::ContainerStopped {
            container: self.view.main().name.clone(),
            exit_code,
            cause,
            runner_id: state.runner_id,
            running_job: state.running_job,
        });
    }

    fn process_context(&mut self, state: Arc<Mutex<ProcessState>>) -> ProcessContext {
        let shutdown = Shutdown {
            stop: self.draw(self.kubelet.config.runner_stop),
            job_cancel: self.draw(self.kubelet.config.runner_job_cancel),
        };
        let boot = match (&self.kubelet.config.slow_starts, self.starts.as_mut()) {
            (Some(slow), Some(rng)) => slow.boot(rng),
            _ => Duration::ZERO,
        };
        let hang_percent = self.kubelet.config.runner_hang_percent;
        let hangs_after_job = hang_percent > 0 && self.rng.random_range(0..100u8) < hang_percent;
        let (kubelet, ns, name, uid) = (self.kubelet.clone(), self.namespace(), self.name(), self.uid());
        let stream = format!("kubelet/pod/{uid}/process/{}", self.view.main().restart_count);
        ProcessContext {
            github: self.kubelet.github.clone(),
            client: self.kubelet.client.clone(),
            namespace: ns.clone(),
            pod: name.clone(),
            listener: self.kubelet.listener.clone(),
            state,
            record: Arc::new(move |kind| kubelet.record(&ns, &name, &uid, kind)),
            shutdown,
            boot,
            sessions_over_http: self.kubelet.config.runner_sessions_over_http,
            hangs_after_job,
            schedule: self.kubelet.schedule.get().clone(),
            seed: self.kubelet.seed,
            stream,
        }
    }

    /// Eviction: phase Failed with the reason, the sandbox gone, the container reported as last seen
    /// (running, not terminated: ARC's rule (a) reads an evicted pod that way).
    async fn evicted(&mut self, reason: &str) {
        self.record(KubeletEventKind::Evicted { reason: reason.to_string() });
        let message = format!("The node was low on resource: {reason}");
        self.view.evicted = Some(Eviction { reason: reason.to_string(), message });
        self.view.sandbox_ready = false;
        let main = self.view.main_mut();
        if let ContainerState::Terminated { started, .. } = &main.state {
            main.state = ContainerState::Running(started.clone());
        }
        self.write().await;
    }

    /// After the pod ended (or was evicted) it stays until deleted; then the kubelet removes it.
    pub(crate) async fn await_deletion(&mut self) {
        loop {
            match self.next_signal().await {
                PodSignal::Deleting { grace_seconds } => return self.delete_stopped(grace_seconds).await,
                PodSignal::Removed => return,
                PodSignal::NodeDied => std::future::pending::<()>().await,
                PodSignal::Evict { .. } | PodSignal::Crash { .. } => {}
            }
        }
    }
}

/// A container's view before it runs: `waiting` with `reason`.
fn waiting(container: &Container, reason: &str) -> ContainerView {
    ContainerView {
        state: ContainerState::Waiting(reason.into()),
        ..ContainerView::creating(&container.name, container.image.as_deref().unwrap_or_default())
    }
}

/// The container whose process the model runs: `runner` or `listener` if present, else the first.
fn main_container(spec: &PodSpec) -> Option<Container> {
    spec.containers.get(main_index(spec)).cloned()
}

/// Where [`main_container`] stands in `spec.containers` (0 when there is none).
fn main_index(spec: &PodSpec) -> usize {
    let named = |n: &str| spec.containers.iter().position(|c| c.name == n);
    named("runner").or_else(|| named("listener")).unwrap_or(0)
}
