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
//! The parts: the controller host (`controller_host.rs`: the controller process or replicas, their
//! restarts, the leader killed) and [`Disruption`]s (what the world does to itself when, applied to
//! the host, the kubelet, GitHub and the user at kubectl, `user.rs`); [`World`] builds the fakes,
//! drives time and judges when the run is over. [`SteppedWorld`] runs a world in steps, paused in between,
//! for tools that look at it mid-run.

#![deny(missing_docs)]

mod answer;
mod cluster;
mod controller_host;
mod crds;
mod derived;
mod disruptions;
mod events_by_type;
mod held_release;
mod listener_pause;
mod on_turmoil;
mod pause;
mod process_clocks;
mod record;
mod replicas;
pub mod runtime;
pub mod seam;
mod settled;
mod stepping;
mod synthetic;
mod user;

use user::User;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use arc_controller::runtime::metrics::Metrics;
use arc_controller::{Families, Switches};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use answer::EarlyAnswer;
use arc_sim::apiserver::{ApiServerConfig, FakeApiServer};
use arc_sim::clock::SimClock;
use arc_sim::clock_skew::{ClockSkew, PartyClock};
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
use controller_host::{ControllerHost, HostInputs};
pub use crds::arc_crds;
pub use disruptions::Disruption;
use held_release::release_held_assignments_on_delete;
pub use listener_pause::ListenerGates;
pub use on_turmoil::run_world_on_turmoil;
pub use pause::{Gated, ProcessGate};
use process_clocks::ProcessClocks;
pub use record::RunRecord;
pub use replicas::{ReplicaConfig, replica_actor};
pub use settled::{legacy_settled, scale_set_settled};
pub use stepping::{Progress, SteppedWorld, SteppingError, trace_line};
pub use synthetic::SyntheticRun;

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
    /// How far each controller process's wall clock reads from true time, by its API actor
    /// (`controller`, `controller#0`, …); a process not named reads true time. Listeners run on the
    /// node and read its clock (`kubelet.clock`). Absent (the default): every controller reads true time.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub controller_clocks: BTreeMap<String, ClockSkew>,
    /// Whether the controller's processes limit their API clients' QPS and burst as their binary does
    /// (`kube_client`'s defaults: ARC's 20 and 30, a listener's 5 and 10); their clients retry after
    /// `Retry-After` either way. On in [`default_config`]; off in a world comparing twins whose request
    /// counts differ by design, where a limiter would turn a twin's extra reads into later writes, and
    /// in `arcsim run --unlimited-clients` (ARC with its limiter raised). A configuration that does
    /// not name it (a capsule written before it was on) runs unlimited, as it was recorded.
    #[serde(default, skip_serializing_if = "is_off")]
    pub client_rate_limits: bool,
}

fn is_off(b: &bool) -> bool {
    !*b
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
    hosting: Option<Arc<Hosting>>,
    controller: ControllerHost,
    listener_metrics: Metrics,
    listeners: ListenerGates,
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
        let pauses = config.disruptions.iter().any(Disruption::pauses);
        if pauses {
            github.detach_long_polls();
        }
        let script = ScriptedGitHub::new(github.service());
        let links = match &hosting {
            Some(hosting) => Links::on_turmoil(apiserver.clone(), Arc::clone(hosting.connections())),
            None => Links::new(config.network, apiserver.clone()),
        }
        .with_rate_limits(config.client_rate_limits)
        .with_detached_requests(pauses);
        let listener_metrics = Metrics::new();
        let switches = config.switches;
        let node_clock = PartyClock::new(clock, config.kubelet.clock);
        let listeners = ListenerGates::default();
        let launcher = families.scale_set.is_some().then(|| match &hosting {
            None => {
                let inputs =
                    seam::inputs_on(&links, "listener", node_clock, &listener_metrics, &script, switches);
                seam::listener_launcher(inputs, listeners.clone())
            }
            Some(hosting) => {
                let (links, metrics, script) = (links.clone(), listener_metrics.clone(), script.clone());
                let make_inputs: Arc<dyn Fn() -> arc_controller::Inputs + Send + Sync> =
                    Arc::new(move || {
                        seam::inputs_on(&links, "listener", node_clock, &metrics, &script, switches)
                    });
                seam::listener_launcher_on(Arc::clone(hosting), make_inputs, listeners.clone())
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
        let controller = ControllerHost::new(HostInputs {
            families: families.clone(),
            switches,
            replicas: config.replicas.clone(),
            links,
            clocks: ProcessClocks { sim: clock, skews: config.controller_clocks.clone() },
            script: script.clone(),
            hosting: hosting.clone(),
            record: record.clone(),
        });
        Ok(World {
            config,
            families,
            clock,
            record,
            apiserver,
            github,
            script,
            kubelet,
            hosting,
            controller,
            listener_metrics,
            listeners,
            answer: None,
        })
    }

    /// Lets the run stop early once `answer` says its record so far has answered it ([`EarlyAnswer`]).
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
        self.controller.start().await;
    }

    /// Creates the configured initial objects through the API, as actor `user`.
    pub async fn create_objects(&self) -> Result<(), WorldError> {
        let created = User::new(&self.apiserver).create_all(&self.config.objects).await;
        created.map_err(|(index, message)| WorldError::Object { index, message })
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
        self.controller.stop().await;
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
            NetCommand::Crash { host } if host == HOST_CONTROLLER => self.controller.crashing(),
            NetCommand::Bounce { host } if host == HOST_CONTROLLER => self.controller.bounced(),
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
        let targets = disruptions::Targets {
            host: &mut self.controller,
            kubelet: &self.kubelet,
            github: &self.github,
            user: User::new(&self.apiserver),
            record: &self.record,
            listeners: &self.listeners,
        };
        disruptions::apply(disruption, targets).await;
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
            metrics: self.controller.metrics(),
            listener_metrics: &self.listener_metrics,
        };
        let (controller_restarts, restarts_mid_reconcile) = self.controller.restarts();
        RunRecord {
            controller_restarts,
            restarts_mid_reconcile,
            ..sources.record(self.clock.elapsed_ms(), workload_end_ms, submitted_jobs)
        }
    }
}

/// The defaults of a world with no objects: every component at its default, no faults, the standard
/// workload, all fixes and optimisations on, the clients limited as ARC's binaries limit them, a
/// 2-hour horizon.
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
        controller_clocks: BTreeMap::new(),
        client_rate_limits: true,
    }
}
