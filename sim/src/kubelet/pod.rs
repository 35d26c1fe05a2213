//! One pod's life on the simulated node, as a task: scheduled (bound) after a seeded delay, containers
//! started after another, the main container's process run, restarted per `restartPolicy` with
//! CrashLoopBackOff, and killed on deletion (graceful: SIGTERM, a seeded stop time within the grace
//! period, then the kubelet's grace-0 delete), eviction, an injected crash, or the object's removal.
//!
//! Every status write carries the pod's uid, an optimistic precondition, so a write can never land on a
//! new pod that reuses the name.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::Shared;
use super::container::{self, Process, ProcessContext, ProcessState};
use super::events::{KubeletEventKind, StopCause};
use super::status::{ContainerState, ContainerView, status_patch};
use crate::apiserver::LagRange;
use crate::apiserver::admission::timestamp_seconds;

/// What the kubelet's watch tells a pod task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodSignal {
    /// deletionTimestamp was set: terminate gracefully.
    Deleting {
        /// The grace period, in seconds.
        grace_seconds: i64,
    },
    /// The object is gone.
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
    },
}

/// How the main container's run ended.
enum Ending {
    Exited(i32),
    Signal(PodSignal, i32),
}

pub(crate) struct PodTask {
    pub kubelet: Arc<Shared>,
    pub pod: Pod,
    pub signals: UnboundedReceiver<PodSignal>,
    pub rng: ChaCha8Rng,
}

impl PodTask {
    fn namespace(&self) -> String {
        self.pod.metadata.namespace.clone().unwrap_or_default()
    }

    fn name(&self) -> String {
        self.pod.metadata.name.clone().unwrap_or_default()
    }

    fn uid(&self) -> String {
        self.pod.metadata.uid.clone().unwrap_or_default()
    }

    fn api(&self) -> Api<Pod> {
        Api::namespaced(self.kubelet.client.clone(), &self.namespace())
    }

    fn record(&self, kind: KubeletEventKind) {
        self.kubelet.record(&self.namespace(), &self.name(), &self.uid(), kind);
    }

    fn now(&self) -> String {
        timestamp_seconds(self.kubelet.clock.now())
    }

    fn draw(&mut self, range: LagRange) -> Duration {
        let ms = if range.max_ms == 0 { 0 } else { self.rng.random_range(range.min_ms..=range.max_ms) };
        Duration::from_millis(ms)
    }

    /// Sleeps `d` unless a signal comes first. A crash signal while no process runs is ignored.
    async fn wait(&mut self, d: Duration) -> Option<PodSignal> {
        let deadline = tokio::time::Instant::now() + d;
        loop {
            let signal = tokio::select! {
                biased;
                signal = self.signals.recv() => signal.unwrap_or(PodSignal::Removed),
                () = tokio::time::sleep_until(deadline) => return None,
            };
            if !matches!(signal, PodSignal::Crash { .. }) {
                return Some(signal);
            }
        }
    }

    /// The whole life of the pod.
    pub async fn run(mut self) {
        let delay = self.draw(self.kubelet.config.scheduling_delay);
        if let Some(signal) = self.wait(delay).await {
            return self.end_before_start(signal).await;
        }
        if !self.bind().await {
            return;
        }
        self.record(KubeletEventKind::Scheduled);
        let delay = self.draw(self.kubelet.config.start_delay);
        if let Some(signal) = self.wait(delay).await {
            return self.end_before_start(signal).await;
        }
        self.run_containers().await;
    }

    async fn bind(&self) -> bool {
        let patch =
            json!({"metadata": {"uid": self.uid()}, "spec": {"nodeName": self.kubelet.config.node_name}});
        let (api, name, params, merge) =
            (self.api(), self.name(), PatchParams::default(), Patch::Merge(&patch));
        retrying(|| api.patch(&name, &params, &merge)).await.is_ok()
    }

    async fn end_before_start(&mut self, signal: PodSignal) {
        match signal {
            PodSignal::Removed => {}
            PodSignal::Deleting { .. } => self.remove().await,
            PodSignal::Evict { reason } => {
                self.evicted(&reason, Vec::new()).await;
                self.await_deletion().await;
            }
            PodSignal::Crash { .. } => {}
        }
    }

    /// Runs the main container, restarting it per the restart policy, until the pod ends.
    async fn run_containers(&mut self) {
        let spec = self.pod.spec.clone().unwrap_or_default();
        let Some(main) = main_container(&spec) else { return };
        let policy = spec.restart_policy.clone().unwrap_or_else(|| "Always".into());
        let process = Process::of(&self.pod, &main);
        let mut view = ContainerView {
            name: main.name.clone(),
            image: main.image.clone().unwrap_or_default(),
            state: ContainerState::Waiting("ContainerCreating".into()),
            restart_count: 0,
            last_terminated: None,
        };
        loop {
            let (ending, started) = match self.start_and_run(&process, &mut view).await {
                Ok(ended) => ended,
                Err(signal) => return self.end_before_start(signal).await,
            };
            let code = match &ending {
                Ending::Exited(code) | Ending::Signal(_, code) => *code,
            };
            let finished = self.now();
            view.state = ContainerState::Terminated {
                exit_code: code,
                started: started.clone(),
                finished: finished.clone(),
            };
            match ending {
                Ending::Signal(PodSignal::Removed, _) => return,
                Ending::Signal(PodSignal::Deleting { grace_seconds }, _) => {
                    return self.terminate(&view, grace_seconds).await;
                }
                Ending::Signal(PodSignal::Evict { reason }, _) => {
                    self.evicted(&reason, vec![view]).await;
                    return self.await_deletion().await;
                }
                Ending::Exited(_) | Ending::Signal(PodSignal::Crash { .. }, _) => {}
            }
            let restart = policy == "Always" || (policy == "OnFailure" && code != 0);
            if !restart {
                let phase = if code == 0 { "Succeeded" } else { "Failed" };
                self.write_status(phase, std::slice::from_ref(&view)).await;
                return self.await_deletion().await;
            }
            if !self.back_off(&mut view, code, started, finished).await {
                return;
            }
        }
    }

    /// Waits out CrashLoopBackOff before the next start; false when the pod ended meanwhile.
    async fn back_off(
        &mut self,
        view: &mut ContainerView,
        code: i32,
        started: String,
        finished: String,
    ) -> bool {
        let config = &self.kubelet.config;
        let exponent = view.restart_count.min(16);
        let backoff =
            config.crash_backoff_initial_ms.saturating_mul(1 << exponent).min(config.crash_backoff_max_ms);
        view.restart_count += 1;
        view.last_terminated = Some((code, started, finished));
        view.state = ContainerState::Waiting("CrashLoopBackOff".into());
        self.write_status("Running", std::slice::from_ref(view)).await;
        match self.wait(Duration::from_millis(backoff)).await {
            None | Some(PodSignal::Crash { .. }) => true,
            Some(PodSignal::Removed) => false,
            Some(PodSignal::Deleting { .. }) => {
                self.remove().await;
                false
            }
            Some(PodSignal::Evict { reason }) => {
                self.evicted(&reason, vec![view.clone()]).await;
                self.await_deletion().await;
                false
            }
        }
    }

    /// Prepares and starts the process, and runs it until it exits or a signal stops it. Returns how it
    /// ended and when it started; `Err` when a signal came before it could start.
    async fn start_and_run(
        &mut self,
        process: &Process,
        view: &mut ContainerView,
    ) -> Result<(Ending, String), PodSignal> {
        let state = Arc::new(Mutex::new(ProcessState::default()));
        let ctx = self.process_context(state.clone());
        let input = loop {
            match container::prepare(&ctx, process).await {
                Ok(input) => break input,
                Err(e) => {
                    self.record(KubeletEventKind::ContainerConfigError {
                        container: view.name.clone(),
                        message: e.0,
                    });
                    view.state = ContainerState::Waiting("CreateContainerConfigError".into());
                    self.write_status("Pending", std::slice::from_ref(view)).await;
                    let retry = Duration::from_millis(self.kubelet.config.config_error_retry_ms);
                    if let Some(signal) = self.wait(retry).await {
                        return Err(signal);
                    }
                }
            }
        };
        let started = self.now();
        view.state = ContainerState::Running(started.clone());
        self.write_status("Running", std::slice::from_ref(view)).await;
        self.record(KubeletEventKind::ContainerStarted {
            container: view.name.clone(),
            restart_count: view.restart_count,
        });
        let cancel = CancellationToken::new();
        let mut running = container::run(ctx, process.clone(), input, cancel.clone()).boxed();
        let ending = tokio::select! {
            biased;
            signal = self.signals.recv() => {
                let signal = signal.unwrap_or(PodSignal::Removed);
                cancel.cancel();
                let code = running.await;
                let code = match &signal { PodSignal::Crash { exit_code } => *exit_code, _ => code };
                Ending::Signal(signal, code)
            }
            code = &mut running => Ending::Exited(code),
        };
        self.stopped(view, &ending, &state);
        Ok((ending, started))
    }

    fn stopped(&self, view: &ContainerView, ending: &Ending, state: &Arc<Mutex<ProcessState>>) {
        let (cause, exit_code) = match ending {
            Ending::Exited(code) => (StopCause::Exited, *code),
            Ending::Signal(PodSignal::Deleting { .. }, code) => (StopCause::PodDeleted, *code),
            Ending::Signal(PodSignal::Removed, code) => (StopCause::PodRemoved, *code),
            Ending::Signal(PodSignal::Evict { .. }, code) => (StopCause::Evicted, *code),
            Ending::Signal(PodSignal::Crash { .. }, code) => (StopCause::Exited, *code),
        };
        let state = state.lock().expect("process state").clone();
        self.record(KubeletEventKind::ContainerStopped {
            container: view.name.clone(),
            exit_code,
            cause,
            runner_id: state.runner_id,
            running_job: state.running_job,
        });
    }

    fn process_context(&self, state: Arc<Mutex<ProcessState>>) -> ProcessContext {
        let (kubelet, ns, name, uid) = (self.kubelet.clone(), self.namespace(), self.name(), self.uid());
        ProcessContext {
            github: self.kubelet.github.clone(),
            client: self.kubelet.client.clone(),
            namespace: ns.clone(),
            pod: name.clone(),
            listener: self.kubelet.listener.clone(),
            state,
            record: Arc::new(move |kind| kubelet.record(&ns, &name, &uid, kind)),
        }
    }

    /// Graceful termination: the containers take a seeded time (within the grace period) to stop, then
    /// the kubelet deletes the pod with grace 0.
    async fn terminate(&mut self, view: &ContainerView, grace_seconds: i64) {
        let stop =
            self.draw(self.kubelet.config.stop_delay).min(Duration::from_secs(grace_seconds.max(0) as u64));
        tokio::time::sleep(stop).await;
        self.write_status("Running", std::slice::from_ref(view)).await;
        self.remove().await;
    }

    async fn evicted(&self, reason: &str, containers: Vec<ContainerView>) {
        self.record(KubeletEventKind::Evicted { reason: reason.to_string() });
        let now = self.now();
        let mut patch = status_patch("Failed", &containers, &[], &now);
        patch["status"]["reason"] = json!(reason);
        patch["status"]["message"] = json!(format!("The node was low on resource: {reason}"));
        for c in patch["status"]["containerStatuses"].as_array_mut().into_iter().flatten() {
            // An evicted pod's container is reported as last seen (not terminated), ARC's rule (a).
            if let Some(started) = c.pointer("/state/terminated/startedAt").cloned() {
                c["state"] = json!({"running": {"startedAt": started}});
            }
        }
        self.patch_status(patch).await;
    }

    /// After the pod ended (or was evicted) it stays until deleted; then the kubelet removes it.
    async fn await_deletion(&mut self) {
        while let Some(signal) = self.signals.recv().await {
            match signal {
                PodSignal::Deleting { .. } => return self.remove().await,
                PodSignal::Removed => return,
                PodSignal::Evict { .. } | PodSignal::Crash { .. } => {}
            }
        }
    }

    /// The kubelet's grace-0 delete, guarded by the uid.
    async fn remove(&self) {
        let pre = Preconditions { uid: Some(self.uid()), resource_version: None };
        let params = DeleteParams::default().grace_period(0).preconditions(pre);
        let (api, name) = (self.api(), self.name());
        if retrying(|| api.delete(&name, &params)).await.is_ok() {
            self.record(KubeletEventKind::PodRemoved);
        }
    }

    async fn write_status(&self, phase: &str, containers: &[ContainerView]) {
        let now = self.now();
        self.patch_status(status_patch(phase, containers, &[], &now)).await;
    }

    async fn patch_status(&self, mut patch: Value) {
        patch["metadata"] = json!({"uid": self.uid()});
        let (api, name, params, merge) =
            (self.api(), self.name(), PatchParams::default(), Patch::Merge(&patch));
        let _ = retrying(|| api.patch_status(&name, &params, &merge)).await;
    }
}

/// Retries a kubelet API call the server refused for the moment (5xx, 429) or left unanswered (a
/// dropped connection), once a second, as a kubelet's status manager keeps syncing until it succeeds;
/// other answers end it.
async fn retrying<T, F, Fut>(mut call: F) -> kube::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = kube::Result<T>>,
{
    let mut attempts = 0;
    loop {
        match call().await {
            Err(e) if transient(&e) && attempts < 600 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            result => return result,
        }
    }
}

/// A refusal for the moment (5xx, 429) or no answer at all (anything but an API status).
fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(status) => status.code >= 500 || status.code == 429,
        _ => true,
    }
}

/// The container whose process the model runs: `runner` or `listener` if present, else the first.
fn main_container(
    spec: &k8s_openapi::api::core::v1::PodSpec,
) -> Option<k8s_openapi::api::core::v1::Container> {
    let named = |n: &str| spec.containers.iter().find(|c| c.name == n).cloned();
    named("runner").or_else(|| named("listener")).or_else(|| spec.containers.first().cloned())
}
