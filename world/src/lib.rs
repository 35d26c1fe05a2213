//! # arc-world: one run
//!
//! One run of arcsim: the fake API server, the fake GitHub, the kubelet, the workload, and the
//! controller under test, all on one paused current-thread runtime, driven by one seed. [`World::run`]
//! creates the initial objects (as a user would with kubectl), starts the controller and the workload,
//! applies scheduled disruptions (controller restarts, pod crashes, evictions), and stops when the
//! workload is over, every job has ended and the world has settled, or at the horizon. It returns a
//! [`RunRecord`].
//!
//! The world is the only part of arcsim that touches the controller, and only through the seam the
//! binary uses too ([`seam`]): it fills the controller's `Inputs` with its own clients, clock and
//! GitHub transport, starts the selected [`Families`] with `arc_controller::start`, and runs every
//! listener pod through `arc_controller::scaleset::listener::run`.
//!
//! [`stepping`] runs a world in steps, paused in between, for tools that look at it mid-run.

#![deny(missing_docs)]

pub mod answer;
pub mod cluster;
pub mod crds;
mod held_release;
pub mod on_turmoil;
pub mod record;
pub mod replicas;
pub mod runtime;
pub mod seam;
pub mod settled;
pub mod stepping;
pub mod synthetic;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use arc_controller::runtime::manager::Manager;
use arc_controller::runtime::metrics::{ACTIVE_WORKERS, Metrics};
use arc_controller::{Families, Switches};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use answer::EarlyAnswer;
use arc_sim::apiserver::{ApiServerConfig, FakeApiServer};
use arc_sim::clock::SimClock;
use arc_sim::faults::FaultPlan;
use arc_sim::faults::network::NetCommand;
use arc_sim::github::{FakeGitHub, GitHubConfig, ScriptedGitHub};
use arc_sim::kubelet::{Kubelet, KubeletConfig};
use arc_sim::net::sim::{Hosting, Servers};
use arc_sim::net::{HOST_CONTROLLER, Links, NetEvent, Network};
use arc_sim::record::{Interest, Recorder, WorldEvent};
use arc_sim::schedule::{Schedule, Scheduler};
use arc_sim::seed::Seed;
use arc_sim::trace::TraceMode;
use arc_sim::workload::{Workload, WorkloadConfig};
pub use cluster::{Cluster, ClusterBuilder};
pub use crds::arc_crds;
use held_release::release_held_assignments_on_delete;
pub use record::RunRecord;
pub use replicas::{ReplicaConfig, replica_actor};
use replicas::{ReplicaWorld, Replicas};
pub use settled::{legacy_settled, scale_set_settled};
pub use stepping::{Progress, SteppedWorld};

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
    /// The sim ms it happens at.
    pub fn at_ms(&self) -> u64 {
        match self {
            Disruption::RestartController { at_ms }
            | Disruption::CrashPod { at_ms, .. }
            | Disruption::PatchObject { at_ms, .. }
            | Disruption::EvictPod { at_ms, .. }
            | Disruption::DeleteAll { at_ms, .. }
            | Disruption::DeleteScaleSet { at_ms, .. }
            | Disruption::KillLeader { at_ms } => *at_ms,
        }
    }
}

/// Everything a run is made of, as data (printed once at the start of a run's trace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldConfig {
    /// The seed.
    pub seed: Seed,
    /// The fake API server.
    pub apiserver: ApiServerConfig,
    /// The fake GitHub.
    pub github: GitHubConfig,
    /// The node.
    pub kubelet: KubeletConfig,
    /// Injected faults.
    pub faults: FaultPlan,
    /// Job arrivals.
    pub workload: WorkloadConfig,
    /// The controller's behaviour switches (a profile, or a variant of one).
    pub switches: Switches,
    /// Objects created at the start, in order, as a user would (`kubectl create`).
    pub objects: Vec<Value>,
    /// Disruptions, at their sim times.
    pub disruptions: Vec<Disruption>,
    /// Stop at this sim ms whatever happens.
    pub horizon_ms: u64,
    /// How often the world checks whether it has settled, in sim ms.
    pub settle_check_ms: u64,
    /// Controller replicas electing a leader; absent (the default): one controller process, no
    /// election.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<ReplicaConfig>,
    /// The network between the clients and the fakes; absent: in-process (the default).
    #[serde(default, skip_serializing_if = "Network::is_in_process")]
    pub network: Network,
    /// The order the sim's tasks take same-instant work in; absent: `fifo` (the default).
    #[serde(default, skip_serializing_if = "Schedule::is_fifo")]
    pub schedule: Schedule,
}

/// Whether the world has settled: the plug's convergence condition (live runners back at the minimum,
/// nothing left deleting, …), checked once every job has ended.
pub type Settled = Arc<dyn Fn(&FakeApiServer, &FakeGitHub) -> bool + Send + Sync>;

/// A running world.
pub struct World {
    config: WorldConfig,
    families: Families,
    clock: SimClock,
    record: Recorder,
    apiserver: FakeApiServer,
    github: FakeGitHub,
    script: ScriptedGitHub,
    kubelet: Kubelet,
    links: Links,
    hosting: Option<Arc<Hosting>>,
    metrics: Metrics,
    listener_metrics: Metrics,
    manager: Option<Manager>,
    replicas: Replicas,
    restarts: u32,
    restarts_mid_reconcile: u32,
    in_flight_at_crash: Option<i64>,
    controller_handed: bool,
    answer: Option<EarlyAnswer>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The world settled at this sim ms.
    Settled(u64),
    /// The horizon came first.
    Horizon,
    /// The run's [`EarlyAnswer`] said it had answered, at this sim ms.
    Answered(u64),
}

/// Why a world could not be built.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// The GitHub config or fault plan is invalid.
    #[error("fake GitHub: {0}")]
    GitHub(String),
    /// The workload config is invalid.
    #[error("workload: {0}")]
    Workload(String),
    /// An initial object could not be created.
    #[error("initial object {index}: {message}")]
    Object {
        /// Its position in `objects`.
        index: usize,
        /// Why.
        message: String,
    },
    /// The plan needs a network the run does not have, or the turmoil simulation failed.
    #[error("network: {0}")]
    Network(String),
}

impl World {
    /// Builds the world (inside the run's paused runtime) without starting anything.
    pub fn build(
        config: WorldConfig,
        families: Families,
        trace_mode: TraceMode,
        keep: Interest,
    ) -> Result<World, WorldError> {
        Self::build_hosted(config, families, trace_mode, keep, None)
    }

    /// [`World::build`]; under the turmoil network, inside the node host, handing its hosts what they
    /// serve and run through `hosting`.
    pub fn build_hosted(
        config: WorldConfig,
        families: Families,
        trace_mode: TraceMode,
        keep: Interest,
        hosting: Option<Arc<Hosting>>,
    ) -> Result<World, WorldError> {
        let hosting = match (config.network, hosting) {
            (Network::InProcess, _) if !config.faults.network.is_empty() => {
                return Err(WorldError::Network(
                    "network faults need the turmoil network (--network turmoil)".into(),
                ));
            }
            (Network::InProcess, _) => None,
            (Network::Turmoil, Some(hosting)) => Some(hosting),
            (Network::Turmoil, None) => {
                return Err(WorldError::Network(
                    "the turmoil network needs a turmoil simulation (net::sim)".into(),
                ));
            }
        };
        let clock = if hosting.is_some() { SimClock::turmoil() } else { SimClock::start() };
        let record = Recorder::new(clock, trace_mode);
        record.keep_only(keep);
        record.emit(WorldEvent::Config(serde_json::to_string(&config).unwrap_or_default()));
        let seed = config.seed;
        let cluster = ClusterBuilder::new(seed)
            .record(record.clone())
            .apiserver(config.apiserver.clone())
            .faults(&config.faults)
            .crds(arc_crds())
            .build();
        let apiserver = cluster.apiserver().clone();
        let github = FakeGitHub::new(seed, clock, record.clone(), config.github.clone(), &config.faults)
            .map_err(|e| WorldError::GitHub(e.to_string()))?;
        release_held_assignments_on_delete(&apiserver, &github, &config.faults.perturbations);
        let script = ScriptedGitHub::new(github.service());
        let links = match &hosting {
            Some(hosting) => Links::on_turmoil(apiserver.clone(), Arc::clone(hosting.connections())),
            None => Links::new(config.network, apiserver.clone()),
        };
        let metrics = Metrics::new();
        let listener_metrics = Metrics::new();
        let launcher = families.scale_set.is_some().then(|| match &hosting {
            None => {
                let inputs = seam::inputs_on(&links, "listener", clock, &listener_metrics, &script, &config);
                seam::listener_launcher(inputs)
            }
            Some(hosting) => {
                let (links, metrics, script, config) =
                    (links.clone(), listener_metrics.clone(), script.clone(), config.clone());
                let make_inputs: Arc<dyn Fn() -> arc_controller::Inputs + Send + Sync> =
                    Arc::new(move || seam::inputs_on(&links, "listener", clock, &metrics, &script, &config));
                seam::listener_launcher_on(Arc::clone(hosting), make_inputs)
            }
        });
        if let Some(hosting) = &hosting {
            hosting.publish_servers(Servers {
                apiserver: apiserver.clone(),
                github: script.clone(),
                record: record.clone(),
                faults: config.faults.network.clone(),
            });
        }
        let kubelet = Kubelet::start(
            seed,
            &apiserver,
            &links,
            github.clone(),
            record.clone(),
            config.kubelet.clone(),
            launcher,
        );
        let scheduler = Scheduler::new(seed, config.schedule);
        apiserver.set_scheduler(scheduler.clone());
        github.set_scheduler(scheduler.clone());
        kubelet.set_scheduler(scheduler);
        Ok(World {
            config,
            families,
            clock,
            record,
            apiserver,
            github,
            script,
            kubelet,
            links,
            hosting,
            metrics,
            listener_metrics,
            manager: None,
            replicas: Replicas::default(),
            restarts: 0,
            restarts_mid_reconcile: 0,
            in_flight_at_crash: None,
            controller_handed: false,
            answer: None,
        })
    }

    /// Lets the run stop early once `answer` says its record so far has answered it ([`answer`]).
    #[must_use]
    pub fn answering(mut self, answer: Option<EarlyAnswer>) -> Self {
        self.answer = answer;
        self
    }

    /// The fake API server.
    pub fn apiserver(&self) -> &FakeApiServer {
        &self.apiserver
    }

    /// The fake GitHub.
    pub fn github(&self) -> &FakeGitHub {
        &self.github
    }

    /// The fake GitHub's script of canned answers.
    pub fn script(&self) -> &ScriptedGitHub {
        &self.script
    }

    /// The kubelet.
    pub fn kubelet(&self) -> &Kubelet {
        &self.kubelet
    }

    /// The run's record (its text form is the trace).
    pub fn record(&self) -> &Recorder {
        &self.record
    }

    /// Starts (or restarts) the controller on a fresh manager; with replicas configured, starts them
    /// (once).
    pub async fn start_controller(&mut self) {
        if let Some(replicas) = self.config.replicas.clone() {
            let mut running = std::mem::take(&mut self.replicas);
            if running.is_empty() {
                running.start_all(&self.replica_world(), &replicas);
            }
            self.replicas = running;
            return;
        }
        if let Some(hosting) = self.hosting.clone() {
            self.start_controller_host(&hosting);
            return;
        }
        if let Some(mut old) = self.manager.take() {
            let in_flight = self.metrics.sum(ACTIVE_WORKERS, &[]);
            old.shutdown().await;
            self.restarts += 1;
            if in_flight > 0 {
                self.restarts_mid_reconcile += 1;
            }
            self.record.emit(WorldEvent::ControllerRestart { number: self.restarts, in_flight });
        }
        let inputs =
            seam::inputs_on(&self.links, "controller", self.clock, &self.metrics, &self.script, &self.config);
        self.manager = Some(arc_controller::start(&inputs, &self.families));
    }

    /// Under turmoil: hands the controller process to its host the first time, bounces the host (a
    /// restart from scratch) after.
    fn start_controller_host(&mut self, hosting: &Hosting) {
        if !self.controller_handed {
            let (links, clock, metrics, script, config, families) = (
                self.links.clone(),
                self.clock,
                self.metrics.clone(),
                self.script.clone(),
                self.config.clone(),
                self.families.clone(),
            );
            hosting.start_controller(Arc::new(move || {
                let inputs = seam::inputs_on(&links, "controller", clock, &metrics, &script, &config);
                Box::new(arc_controller::start(&inputs, &families))
            }));
            self.controller_handed = true;
            return;
        }
        self.crash_controller();
        hosting.command(NetCommand::Bounce { host: HOST_CONTROLLER.into() });
        self.bounced_controller();
    }

    /// Notes the in-flight reconciles of a controller about to crash.
    fn crash_controller(&mut self) {
        self.in_flight_at_crash = Some(self.metrics.sum(ACTIVE_WORKERS, &[]));
    }

    /// Counts a controller restart after a crash.
    fn bounced_controller(&mut self) {
        let in_flight = self.in_flight_at_crash.take().unwrap_or(0);
        self.restarts += 1;
        if in_flight > 0 {
            self.restarts_mid_reconcile += 1;
        }
        self.record.emit(WorldEvent::ControllerRestart { number: self.restarts, in_flight });
    }

    /// Creates the configured initial objects through the API, as actor `user`.
    pub async fn create_objects(&self) -> Result<(), WorldError> {
        let client = self.apiserver.client_as("user");
        for (index, object) in self.config.objects.iter().enumerate() {
            let mut attempts = 0;
            loop {
                match create_object(&self.apiserver, &client, object).await {
                    Ok(()) => break,
                    // A retry of a create that committed before its answer failed finds it there.
                    Err(CreateRefusal::AlreadyExists(_)) if attempts > 0 => break,
                    // A user retries what the server refused for a moment (an injected 5xx or 429, or
                    // a dropped connection).
                    Err(CreateRefusal::Transient(_)) if attempts < 30 => {
                        attempts += 1;
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    Err(refusal) => {
                        return Err(WorldError::Object { index, message: refusal.into_message() });
                    }
                }
            }
        }
        Ok(())
    }

    /// Runs the whole world: objects, controller, workload and disruptions, until settled or the horizon.
    pub async fn run(mut self, settled: Settled) -> Result<RunRecord, WorldError> {
        let workload = Workload::generate(self.config.seed, &self.config.workload)
            .map_err(|e| WorldError::Workload(e.to_string()))?
            .with_extra_jobs(&self.config.workload, &self.config.faults.perturbations);
        let workload_end_ms = workload.jobs().last().map_or(0, |j| j.at_ms);
        self.create_objects().await?;
        self.start_controller().await;
        let github = self.github.clone();
        let submitted = tokio::spawn(async move { workload.run(&github).await });
        let ending = self.drive(&settled, workload_end_ms).await;
        let submitted_jobs =
            if submitted.is_finished() { submitted.await.unwrap_or_default() } else { Vec::new() };
        if let Some(mut manager) = self.manager.take() {
            manager.shutdown().await;
        }
        self.replicas.stop_all().await;
        let mut record = self.snapshot(workload_end_ms, submitted_jobs);
        record.objects = self.objects();
        match ending {
            Ending::Settled(at) => record.settled_at_ms = Some(at),
            Ending::Answered(at) => record.answered_at_ms = Some(at),
            Ending::Horizon => {}
        }
        Ok(record)
    }

    /// Applies disruptions and checks for settling (and for an early answer) until one of them or the
    /// horizon.
    async fn drive(&mut self, settled: &Settled, workload_end_ms: u64) -> Ending {
        let mut disruptions = self.config.disruptions.clone();
        disruptions.sort_by_key(Disruption::at_ms);
        let mut disruptions = disruptions.into_iter().peekable();
        let mut net = arc_sim::faults::network::schedule(&self.config.faults.network).into_iter().peekable();
        let step = Duration::from_millis(self.config.settle_check_ms.max(1));
        let restarts = self.apiserver.restart_requests();
        loop {
            let now = self.clock.elapsed_ms();
            while let Some((_, command)) = net.next_if(|(at, _)| *at <= now) {
                self.apply_network(command);
            }
            let mut disrupted = false;
            while let Some(d) = disruptions.next_if(|d| d.at_ms() <= now) {
                self.disrupt(d).await;
                disrupted = true;
            }
            if now >= self.config.horizon_ms {
                self.record.emit(WorldEvent::Horizon(now));
                return Ending::Horizon;
            }
            // A world disrupted this instant has not had the time to show it: judged next step.
            if !disrupted
                && now >= workload_end_ms
                && disruptions.peek().is_none()
                && self.github.all_jobs_completed()
                && settled(&self.apiserver, &self.github)
            {
                self.record.emit(WorldEvent::Settled(now));
                return Ending::Settled(now);
            }
            if self.answered(now, workload_end_ms) {
                self.record.emit(WorldEvent::Answered(now));
                return Ending::Answered(now);
            }
            let next_ms = [disruptions.peek().map(Disruption::at_ms), net.peek().map(|(at, _)| *at)]
                .into_iter()
                .flatten()
                .min();
            let next_disruption = next_ms.map(|at| Duration::from_millis(at.saturating_sub(now)));
            tokio::select! {
                biased;
                () = restarts.notified() => self.restart_for_perturbation().await,
                () = tokio::time::sleep(next_disruption.map_or(step, |d| d.min(step))) => {}
            }
        }
    }

    /// Records a network command and queues it for the turmoil simulation; a controller crash and
    /// bounce count as a controller restart.
    fn apply_network(&mut self, command: NetCommand) {
        let Some(hosting) = self.hosting.clone() else { return };
        self.record.emit(NetEvent::Applied(command.clone()));
        match &command {
            NetCommand::Crash { host } if host == HOST_CONTROLLER => self.crash_controller(),
            NetCommand::Bounce { host } if host == HOST_CONTROLLER => self.bounced_controller(),
            _ => {}
        }
        hosting.command(command);
    }

    /// Crashes and restarts the controller right after the write a perturbation named.
    async fn restart_for_perturbation(&mut self) {
        let what =
            r#"{"kind":"restart-controller","after":"the write an intermediate-state perturbation names"}"#;
        self.record.emit(WorldEvent::Disruption(what.to_string()));
        self.start_controller().await;
    }

    async fn disrupt(&mut self, disruption: Disruption) {
        self.record.emit(WorldEvent::Disruption(serde_json::to_string(&disruption).unwrap_or_default()));
        match disruption {
            Disruption::RestartController { .. } => self.start_controller().await,
            Disruption::CrashPod { namespace, prefix, exit_code, .. } => {
                if let Some(name) = self.running_pod(&namespace, &prefix) {
                    self.kubelet.crash(&namespace, &name, exit_code);
                }
            }
            Disruption::PatchObject { plural, namespace, name, patch, .. } => {
                if let Err(e) = self.patch_object(&plural, &namespace, &name, &patch).await {
                    self.record.emit(WorldEvent::DisruptionFailed(e));
                }
            }
            Disruption::KillLeader { .. } => self.kill_leader(),
            Disruption::EvictPod { namespace, prefix, reason, .. } => {
                if let Some(name) = self.running_pod(&namespace, &prefix) {
                    self.kubelet.evict(&namespace, &name, &reason);
                }
            }
            Disruption::DeleteAll { plural, namespace, .. } => {
                if let Err(e) = self.delete_all(&plural, &namespace).await {
                    self.record.emit(WorldEvent::DisruptionFailed(e));
                }
            }
            Disruption::DeleteScaleSet { name, .. } => {
                if !self.github.delete_scale_set_named(&name) {
                    self.record.emit(WorldEvent::DisruptionFailed(format!("no scale set named {name}")));
                }
            }
        }
    }

    /// What replicas are started from.
    fn replica_world(&self) -> ReplicaWorld<'_> {
        ReplicaWorld {
            links: &self.links,
            clock: self.clock,
            metrics: &self.metrics,
            github: &self.script,
            config: &self.config,
            families: &self.families,
        }
    }

    /// Crashes the leading replica and restarts it; counted as a controller restart.
    fn kill_leader(&mut self) {
        let Some(replicas) = self.config.replicas.clone() else {
            self.record.emit(WorldEvent::DisruptionFailed("kill-leader needs replicas".into()));
            return;
        };
        let in_flight = self.metrics.sum(ACTIVE_WORKERS, &[]);
        let mut running = std::mem::take(&mut self.replicas);
        let killed = running.kill_leader(&self.replica_world(), &replicas);
        self.replicas = running;
        if killed.is_none() {
            self.record.emit(WorldEvent::DisruptionFailed("no replica leads".into()));
            return;
        }
        self.restarts += 1;
        if in_flight > 0 {
            self.restarts_mid_reconcile += 1;
        }
        self.record.emit(WorldEvent::ControllerRestart { number: self.restarts, in_flight });
    }

    async fn patch_object(
        &self,
        plural: &str,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<(), String> {
        let api = self.user_api(plural, namespace)?;
        api.patch(name, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(patch))
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// `kubectl delete PLURAL --all -n NAMESPACE`: one list, then one delete per listed name; a name
    /// already gone is skipped, any other refusal ends the command (kubectl reports it and goes on, but
    /// the world only needs to say the command did not do everything).
    async fn delete_all(&self, plural: &str, namespace: &str) -> Result<(), String> {
        let api = self.user_api(plural, namespace)?;
        let listed = api.list(&kube::api::ListParams::default()).await.map_err(|e| e.to_string())?;
        let mut refused = Vec::new();
        for name in listed.items.iter().filter_map(|o| o.metadata.name.as_deref()) {
            match api.delete(name, &kube::api::DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => refused.push(format!("{name}: {e}")),
            }
        }
        if refused.is_empty() {
            Ok(())
        } else {
            Err(format!("delete {plural} --all: {}", refused.join("; ")))
        }
    }

    /// A namespaced API of `plural` as actor `user`.
    fn user_api(&self, plural: &str, namespace: &str) -> Result<Api<DynamicObject>, String> {
        let rt =
            self.apiserver.registry().find_plural(plural).map(|id| self.apiserver.registry().get(id).clone());
        let rt = rt.ok_or_else(|| format!("unknown resource {plural}"))?;
        let gvk = GroupVersionKind::gvk(&rt.group, &rt.version, &rt.kind);
        let resource = ApiResource::from_gvk_with_plural(&gvk, &rt.plural);
        Ok(Api::namespaced_with(self.apiserver.client_as("user"), namespace, &resource))
    }

    fn running_pod(&self, namespace: &str, prefix: &str) -> Option<String> {
        let key_prefix = format!("{namespace}/{prefix}");
        self.kubelet
            .running_pods()
            .into_iter()
            .find(|p| p.starts_with(&key_prefix))
            .map(|p| p[namespace.len() + 1..].to_string())
    }

    /// Whether the run's early answer, if it has one and a check is due, holds for the record so far.
    fn answered(&mut self, now: u64, workload_end_ms: u64) -> bool {
        if !self.answer.as_ref().is_some_and(|a| a.due(now)) {
            return false;
        }
        let so_far = self.snapshot(workload_end_ms, Vec::new()).before(now);
        self.answer.as_mut().is_some_and(|a| a.check(now, &so_far))
    }

    /// Every object the API server holds now, by resource plural.
    fn objects(&self) -> BTreeMap<String, Vec<Value>> {
        let types = self.apiserver.registry().types();
        types.iter().map(|rt| (rt.plural.clone(), self.apiserver.objects(&rt.plural))).collect()
    }

    /// The record as it stands: every kept event, the fakes' state now, but no objects (a record so
    /// far has no end state to judge; the finished run's record adds them).
    fn snapshot(&self, workload_end_ms: u64, submitted_jobs: Vec<i64>) -> RunRecord {
        let sources = record::Sources {
            seed: self.config.seed,
            plug: self.families.name(),
            recorder: &self.record,
            apiserver: &self.apiserver,
            github: &self.github,
            metrics: &self.metrics,
            listener_metrics: &self.listener_metrics,
        };
        RunRecord {
            controller_restarts: self.restarts,
            restarts_mid_reconcile: self.restarts_mid_reconcile,
            ..sources.record(self.clock.elapsed_ms(), workload_end_ms, submitted_jobs)
        }
    }
}

/// Creates one object; the error says whether retrying could help (5xx, 429) and what went wrong.
/// Why the server did not create an initial object.
enum CreateRefusal {
    /// For a moment (5xx, 429, a dropped connection): worth retrying.
    Transient(String),
    /// 409 AlreadyExists.
    AlreadyExists(String),
    /// Anything else.
    Permanent(String),
}

impl CreateRefusal {
    fn into_message(self) -> String {
        match self {
            CreateRefusal::Transient(m) | CreateRefusal::AlreadyExists(m) | CreateRefusal::Permanent(m) => m,
        }
    }
}

async fn create_object(
    apiserver: &FakeApiServer,
    client: &kube::Client,
    object: &Value,
) -> Result<(), CreateRefusal> {
    let permanent = CreateRefusal::Permanent;
    let api_version =
        object.get("apiVersion").and_then(Value::as_str).ok_or_else(|| permanent("no apiVersion".into()))?;
    let kind = object.get("kind").and_then(Value::as_str).ok_or_else(|| permanent("no kind".into()))?;
    let rt = apiserver
        .registry()
        .types()
        .iter()
        .find(|t| t.api_version() == api_version && t.kind == kind)
        .ok_or_else(|| permanent(format!("the fake API server does not serve {api_version} {kind}")))?;
    let gvk = GroupVersionKind::gvk(&rt.group, &rt.version, &rt.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &rt.plural);
    let obj: DynamicObject = serde_json::from_value(object.clone()).map_err(|e| permanent(e.to_string()))?;
    let api: Api<DynamicObject> = match (rt.namespaced, obj.metadata.namespace.as_deref()) {
        (true, Some(ns)) => Api::namespaced_with(client.clone(), ns, &resource),
        (true, None) => return Err(permanent(format!("{kind} needs metadata.namespace"))),
        (false, _) => Api::all_with(client.clone(), &resource),
    };
    api.create(&PostParams::default(), &obj).await.map(|_| ()).map_err(|e| match &e {
        kube::Error::Api(status) if status.code >= 500 || status.code == 429 => {
            CreateRefusal::Transient(e.to_string())
        }
        kube::Error::Api(status) if status.reason == "AlreadyExists" => {
            CreateRefusal::AlreadyExists(e.to_string())
        }
        kube::Error::Api(_) => CreateRefusal::Permanent(e.to_string()),
        _ => CreateRefusal::Transient(e.to_string()),
    })
}

/// The defaults of a world with no objects: every component at its default, no faults, the standard
/// workload, all fixes and optimisations on, a 2-hour horizon.
pub fn default_config(seed: Seed) -> WorldConfig {
    WorldConfig {
        seed,
        apiserver: ApiServerConfig::default(),
        github: GitHubConfig::default(),
        kubelet: KubeletConfig::default(),
        faults: FaultPlan::none(),
        workload: WorkloadConfig::standard(),
        switches: Switches::default(),
        objects: Vec::new(),
        disruptions: Vec::new(),
        horizon_ms: 2 * 3_600_000,
        settle_check_ms: 1_000,
        replicas: None,
        network: Network::InProcess,
        schedule: Schedule::Fifo,
    }
}
