//! # The kubelet model
//!
//! One simulated node, and the scheduler of the one-node cluster. The kubelet is an API client (its
//! own `kube::Client`, actor `kubelet`) that sees pods only through its own list and watch
//! ([`informer`]), which lags on its own ([`KubeletConfig::pod_watch_lag`]). The scheduler
//! ([`scheduler`]) binds each pod it sees unscheduled; once the kubelet sees a pod bound to its node it
//! gives it a pod worker ([`pod`]): status writes through `pods/status` in a real kubelet's sequence
//! ([`status`]), the sandbox, the main container's process ([`container`]: a runner against the fake
//! GitHub ([`container::runner`]), the controller's real listener code, or an idle process), restarts per
//! `restartPolicy` with CrashLoopBackOff, and, when it sees the pod's deletion, graceful termination
//! ([`termination`]): SIGTERM after a seeded delay, SIGKILL when the grace period runs out, the
//! terminal status, and the kubelet's grace-0 delete. Its writes are in [`writes`]. Scenarios can
//! evict pods and crash containers. What it did is a structured event log ([`events`]) and trace
//! lines. What a process reads from its pod spec is the images' contract ([`contract`]), not any
//! controller's code. A world may lose a node ([`node_loss`]): then the runners' pods spread over a
//! pool of nodes, and the control plane's answer to the loss is in [`node_lifecycle`].

pub mod capacity;
pub mod container;
pub mod contract;
pub mod events;
pub mod informer;
pub mod init_containers;
pub mod node_lifecycle;
pub(crate) mod node_link;
pub mod node_loss;
pub mod pod;
pub mod scheduler;
pub(crate) mod sidecar_steps;
pub mod sidecars;
pub mod slow_starts;
pub mod status;
pub mod termination;
pub mod watched;
pub mod writes;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::apiserver::admission::timestamp_seconds;
use crate::apiserver::{FakeApiServer, LagRange};
use crate::clock::SimClock;
use crate::clock_skew::{ClockSkew, PartyClock};
use crate::github::FakeGitHub;
use crate::net::Links;
use crate::record::Recorder;
use crate::schedule::{Scheduler, SchedulerSlot};
use crate::seed::Seed;
use capacity::Room;
pub use capacity::{NodeCapacity, ScaleUp};
pub use container::ListenerLauncher;
pub use events::{KubeletEvent, KubeletEventKind, StopCause};
use informer::{PodChange, PodInformer, key_of};
pub use init_containers::InitContainers;
use node_link::NodeLink;
pub use node_loss::{LossOutcome, NodeLoss};
use pod::{PodSignal, PodTask};
pub use sidecars::SidecarCrashes;
pub use slow_starts::SlowStarts;
use watched::WatchedPod;

/// The API client actor the kubelet's requests and watches are attributed to.
pub const ACTOR: &str = "kubelet";

/// How the node behaves; every field has a documented default. Every delay is drawn uniformly from its
/// range (inclusive) from a seeded stream of the pod it concerns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KubeletConfig {
    /// The node's name (`spec.nodeName` of bound pods). Default `arcsim-node-1`.
    pub node_name: String,
    /// How late the kubelet's pod watch delivers each change after it commits (default 50–500 ms):
    /// uniform per change, drawn from the watch's own seeded stream, never reordering changes (a change
    /// is due no earlier than the one before it). It replaces the API server's per-resource lag for
    /// this one watch, so a scenario that slows the controller's pod watch leaves the kubelet's alone.
    pub pod_watch_lag: LagRange,
    /// From seeing a pod unscheduled to binding it (the scheduler; default 10–200 ms).
    pub scheduling_delay: LagRange,
    /// From seeing its pod bound to the sandbox ready with the pod's IP (default 100–500 ms).
    pub sandbox_delay: LagRange,
    /// From the sandbox to the main container running: image pull and start (default 500–2500 ms).
    pub start_delay: LagRange,
    /// From a container's last exit to the sandbox torn down (default 50–300 ms).
    pub teardown_delay: LagRange,
    /// From seeing a deletion to SIGTERM reaching the containers: the pod worker's sync and the
    /// runtime's StopContainer (default 10–200 ms). The grace period counts from SIGTERM.
    pub sigterm_delay: LagRange,
    /// From SIGTERM to a runner having deleted its session and exited 0 (default 100–1000 ms); until
    /// then GitHub may still assign it a job, which it never acquires.
    pub runner_stop: LagRange,
    /// From SIGTERM to a busy runner having interrupted its job's steps and reported the job canceled
    /// (default 1–10 s); it then stops as an idle one does.
    pub runner_job_cancel: LagRange,
    /// First CrashLoopBackOff delay (default 10 s); it doubles per restart.
    pub crash_backoff_initial_ms: u64,
    /// CrashLoopBackOff cap (default 300 s).
    pub crash_backoff_max_ms: u64,
    /// Retry period of a container whose secret is missing (default 2 s).
    pub config_error_retry_ms: u64,
    /// Percent of runner processes that hang once their first job ends (default 0): the job is
    /// reported, then the process never exits until SIGTERM, as users saw in #4603, #4136 and #4203.
    /// Drawn per container start from the pod's stream, and only when non-zero, so worlds without it
    /// draw exactly as before.
    pub runner_hang_percent: u8,
    /// How far the node's wall clock reads from true time: the pod status timestamps it writes read
    /// it, and so does every process it runs (listeners, runners). Absent (the default): true time.
    #[serde(default, skip_serializing_if = "ClockSkew::is_none")]
    pub clock: ClockSkew,
    /// Slow image pulls, failed pulls and runner boots ([`slow_starts`]). Absent (the default): every
    /// pull takes `start_delay` and a runner is at GitHub the instant its container runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_starts: Option<SlowStarts>,
    /// How many pods the nodes run at once, and nodes that join while pods wait ([`capacity`]).
    /// Absent (the default): room for every pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_capacity: Option<NodeCapacity>,
    /// How init containers run and how many fail to start ([`init_containers`]). Absent (the
    /// default): each runs 200 ms–2 s and none fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<InitContainers>,
    /// A node of the runners' pool that stops answering the control plane ([`node_loss`]). Absent
    /// (the default): one node, never lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_loss: Option<NodeLoss>,
    /// Whether a runner process reaches GitHub over the fake's HTTP interface, with the service's
    /// latency and faults, retrying as actions/runner does: a legacy runner's `config.sh` as
    /// `startup.sh` runs it (`container::config_sh`), then every runner's session
    /// (`container::session`). False (the default): direct calls that cannot fail but for the
    /// service's refusals.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub runner_sessions_over_http: bool,
    /// How native sidecars crash ([`sidecars`]). Absent (the default): a sidecar runs until the
    /// kubelet stops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sidecar_crashes: Option<SidecarCrashes>,
}

impl Default for KubeletConfig {
    fn default() -> Self {
        KubeletConfig {
            node_name: "arcsim-node-1".into(),
            pod_watch_lag: LagRange::between(50, 500),
            scheduling_delay: LagRange::between(10, 200),
            sandbox_delay: LagRange::between(100, 500),
            start_delay: LagRange::between(500, 2500),
            teardown_delay: LagRange::between(50, 300),
            sigterm_delay: LagRange::between(10, 200),
            runner_stop: LagRange::between(100, 1000),
            runner_job_cancel: LagRange::between(1000, 10_000),
            crash_backoff_initial_ms: 10_000,
            crash_backoff_max_ms: 300_000,
            config_error_retry_ms: 2_000,
            runner_hang_percent: 0,
            clock: ClockSkew::NONE,
            slow_starts: None,
            node_capacity: None,
            node_loss: None,
            init_containers: None,
            runner_sessions_over_http: false,
            sidecar_crashes: None,
        }
    }
}

/// A uniform draw from `range`.
pub(crate) fn draw(rng: &mut ChaCha8Rng, range: LagRange) -> Duration {
    let ms =
        if range.max_ms == 0 { 0 } else { rng.random_range(range.min_ms..=range.max_ms.max(range.min_ms)) };
    Duration::from_millis(ms)
}

/// What the pod tasks share.
pub(crate) struct Shared {
    pub config: KubeletConfig,
    pub client: kube::Client,
    pub github: FakeGitHub,
    pub clock: SimClock,
    pub record: Recorder,
    pub listener: Option<ListenerLauncher>,
    pub seed: Seed,
    /// The last pod IP handed out (10.244.x.y, in the order sandboxes come up).
    pub last_ip: AtomicU32,
    /// The run's schedule, handed to each process.
    pub schedule: SchedulerSlot,
    /// The nodes' room for pods, when the world counts it.
    pub room: Option<Arc<Room>>,
    /// The link of the node that can be lost, when the world loses one.
    pub link: Option<Arc<NodeLink>>,
}

impl Shared {
    /// The room the scheduler must find for a pod of `namespace`, when the world counts it.
    pub(crate) fn room_for(&self, namespace: &str) -> Option<&Arc<Room>> {
        self.room.as_ref().filter(|room| room.counts(namespace))
    }

    /// The node a pod of `namespace` is bound to: one of the pool's untainted nodes (drawn from
    /// `rng`) when the world loses a node and the pod is of the pool's namespace, else the kubelet's.
    pub(crate) fn node_for(&self, namespace: &str, rng: &mut ChaCha8Rng) -> String {
        let Some(loss) = self.config.node_loss.as_ref().filter(|loss| loss.namespace == namespace) else {
            return self.config.node_name.clone();
        };
        let tainted = self.link.as_ref().filter(|link| link.is_tainted()).map(|link| link.node());
        let nodes: Vec<String> = loss.pool().into_iter().filter(|n| Some(n.as_str()) != tainted).collect();
        nodes[rng.random_range(0..nodes.len())].clone()
    }

    /// Whether the model runs pods bound to `node`.
    fn serves(&self, node: &str) -> bool {
        node == self.config.node_name
            || self.config.node_loss.as_ref().is_some_and(|l| l.pool().iter().any(|n| n == node))
    }

    pub(crate) fn record(&self, namespace: &str, name: &str, uid: &str, kind: KubeletEventKind) {
        let pod = format!("{namespace}/{name}");
        let event = KubeletEvent { ms: self.clock.elapsed_ms(), pod, uid: uid.to_string(), kind };
        self.record.emit(event);
    }

    /// The CrashLoopBackOff before a container's next start after `restarts` restarts: the first
    /// delay doubled per restart, at most the cap.
    pub(crate) fn crash_backoff(&self, restarts: u32) -> Duration {
        let (initial, max) = (self.config.crash_backoff_initial_ms, self.config.crash_backoff_max_ms);
        Duration::from_millis(initial.saturating_mul(1 << restarts.min(16)).min(max))
    }

    /// Now, as the API's timestamps spell it (seconds).
    pub(crate) fn now(&self) -> String {
        timestamp_seconds(PartyClock::new(self.clock, self.config.clock).now())
    }

    /// The next pod IP.
    pub(crate) fn next_pod_ip(&self) -> String {
        let n = self.last_ip.fetch_add(1, Ordering::Relaxed) + 2;
        format!("10.244.{}.{}", (n / 254) % 256, n % 254 + 1)
    }
}

/// Each running pod's worker by `namespace/name`.
type PodSignals = BTreeMap<String, Worker>;

/// A running pod's worker: the uid it was started for, its node, its signal channel.
struct Worker {
    uid: String,
    node: String,
    signals: UnboundedSender<PodSignal>,
}

/// The running kubelet. Clones share it.
#[derive(Clone)]
pub struct Kubelet {
    shared: Arc<Shared>,
    pods: Arc<Mutex<PodSignals>>,
    /// uids of the pods the scheduler has taken on.
    scheduling: Arc<Mutex<BTreeSet<String>>>,
    /// Workers of pods on the lost node whose name a newer pod took while the node was cut off (a
    /// replacement of a force-deleted pod), by uid: their node never heard, so they run on.
    displaced: Arc<Mutex<BTreeMap<String, Worker>>>,
}

impl std::fmt::Debug for Kubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kubelet").field("node", &self.shared.config.node_name).finish_non_exhaustive()
    }
}

impl Kubelet {
    /// Starts the kubelet on `apiserver`, running runner processes against `github` and listener pods
    /// through `listener` (idle when `None`). Its watches get `config.pod_watch_lag`. Must be called
    /// inside the run's runtime.
    pub fn start(
        seed: Seed,
        apiserver: &FakeApiServer,
        links: &Links,
        github: FakeGitHub,
        record: Recorder,
        config: KubeletConfig,
        listener: Option<ListenerLauncher>,
    ) -> Kubelet {
        apiserver.set_actor_watch_lag(ACTOR, config.pod_watch_lag);
        let client = links.client_as(ACTOR);
        let clock = record.clock();
        let last_ip = AtomicU32::new(0);
        let schedule = SchedulerSlot::default();
        let room = config.node_capacity.as_ref().map(|capacity| Arc::new(Room::new(capacity)));
        let link = config.node_loss.as_ref().map(|loss| Arc::new(NodeLink::new(loss.lost_node())));
        let shared = Arc::new(Shared {
            config,
            client,
            github,
            clock,
            record,
            listener,
            seed,
            last_ip,
            schedule,
            room,
            link,
        });
        let kubelet =
            Kubelet { shared, pods: Arc::default(), scheduling: Arc::default(), displaced: Arc::default() };
        let informer = PodInformer::new(kubelet.shared.client.clone(), seed.named_rng("kubelet/informer"));
        let this = kubelet.clone();
        tokio::spawn(informer.run(move |change| this.observe(change)));
        if let Some(loss) = kubelet.shared.config.node_loss.clone() {
            let client = links.client_as(node_lifecycle::ACTOR);
            tokio::spawn(node_lifecycle::run(kubelet.clone(), loss, client));
        }
        kubelet
    }

    /// Orders the runner processes' same-instant steps by the run's `scheduler` (set once, before the
    /// first pod starts; `fifo` until then).
    pub fn set_scheduler(&self, scheduler: Scheduler) {
        self.shared.schedule.set(scheduler);
    }

    fn observe(&self, change: PodChange) {
        if let Some(link) = &self.shared.link {
            let pod = match &change {
                PodChange::Seen(pod) | PodChange::Gone(pod) => pod.clone(),
            };
            if link.hold(pod.node_name.as_deref(), &change) {
                return self.release_room(&change);
            }
        }
        self.release_room(&change);
        match change {
            PodChange::Seen(pod) => self.seen(pod),
            PodChange::Gone(pod) => self.gone(&pod),
        }
    }

    /// The scheduler's part of a change, heard even when the lost node's kubelet does not hear it:
    /// room a terminal or gone pod no longer takes is free.
    fn release_room(&self, change: &PodChange) {
        let (pod, gone) = match change {
            PodChange::Seen(pod) => (pod, false),
            PodChange::Gone(pod) => (pod, true),
        };
        if let Some(room) = self.shared.room.as_ref().filter(|_| gone || pod.is_terminal()) {
            room.release(pod.metadata.uid.as_deref().unwrap_or_default());
        }
    }

    /// The lost node stopped answering: its processes die with it if its machine `died`.
    pub(crate) fn lose_node(&self, died: bool) {
        let Some(link) = &self.shared.link else { return };
        link.lose();
        self.shared.record("node", link.node(), "", KubeletEventKind::NodeLost { died });
        if died {
            let pods = self.pods.lock().expect("kubelet pods");
            for worker in pods.values().filter(|w| w.node == link.node()) {
                let _ = worker.signals.send(PodSignal::NodeDied);
            }
        }
    }

    /// The lost node is back: its kubelet hears, in order, what it missed.
    pub(crate) fn node_returned(&self) {
        let Some(link) = &self.shared.link else { return };
        let missed = link.come_back();
        let deleted: std::collections::BTreeSet<&str> =
            missed.iter().filter(|change| change.is_deletion()).map(PodChange::uid).collect();
        let deletions_heard = u32::try_from(deleted.len()).unwrap_or(u32::MAX);
        self.shared.record("node", link.node(), "", KubeletEventKind::NodeReturned { deletions_heard });
        for change in missed {
            self.observe(change);
        }
    }

    /// Taints the lost node: the scheduler leaves it.
    pub(crate) fn taint_node(&self) {
        if let Some(link) = &self.shared.link {
            link.taint();
        }
    }

    /// A version of a pod: the scheduler takes an unscheduled one, the kubelet starts a pod bound to
    /// its node, and a pod worker hears of its pod's deletion.
    fn seen(&self, pod: Arc<WatchedPod>) {
        let (key, uid) = (key_of(&pod), pod.metadata.uid.clone().unwrap_or_default());
        let deleting = pod.metadata.deletion_timestamp.is_some();
        let grace = pod.metadata.deletion_grace_period_seconds.unwrap_or(0);
        let mut pods = self.pods.lock().expect("kubelet pods");
        let mut displaced = self.displaced.lock().expect("displaced workers");
        if let Some(worker) = pods.get(&key).filter(|w| w.uid == uid).or_else(|| displaced.get(&uid)) {
            if deleting {
                let _ = worker.signals.send(PodSignal::Deleting { grace_seconds: grace });
            }
            return;
        }
        let node = pod.node_name.clone().unwrap_or_default();
        if self.shared.serves(&node) {
            // The server decoded every pod it stores (admission), so its JSON decodes here too.
            let Ok(pod) = pod.pod() else { return };
            let (tx, signals) = unbounded_channel();
            if deleting {
                let _ = tx.send(PodSignal::Deleting { grace_seconds: grace });
            }
            let cut_off =
                |w: &Worker| self.shared.link.as_ref().is_some_and(|l| l.is_lost() && l.node() == w.node);
            if let Some(old) =
                pods.insert(key, Worker { uid: uid.clone(), node, signals: tx }).filter(cut_off)
            {
                displaced.insert(old.uid.clone(), old);
            }
            let rng = self.shared.seed.named_rng(&format!("kubelet/pod/{uid}"));
            tokio::spawn(PodTask::new(self.shared.clone(), pod, signals, rng).run());
        } else if node.is_empty()
            && !deleting
            && self.scheduling.lock().expect("scheduling").insert(uid.clone())
        {
            if let Some(room) = self.shared.room_for(pod.metadata.namespace.as_deref().unwrap_or_default()) {
                room.wait_for(&uid);
            }
            let rng = self.shared.seed.named_rng(&format!("kubelet/schedule/{uid}"));
            tokio::spawn(scheduler::schedule(self.shared.clone(), pod.metadata.clone(), rng));
        }
    }

    /// A pod gone from the API: its worker (if it has one) hears of it.
    fn gone(&self, pod: &WatchedPod) {
        let (key, uid) = (key_of(pod), pod.metadata.uid.clone().unwrap_or_default());
        self.scheduling.lock().expect("scheduling").remove(&uid);
        if let Some(worker) = self.displaced.lock().expect("displaced workers").remove(&uid) {
            let _ = worker.signals.send(PodSignal::Removed);
            return;
        }
        let mut pods = self.pods.lock().expect("kubelet pods");
        if pods.get(&key).is_some_and(|w| w.uid == uid)
            && let Some(worker) = pods.remove(&key)
        {
            let _ = worker.signals.send(PodSignal::Removed);
        }
    }

    fn signal(&self, namespace: &str, name: &str, signal: PodSignal) -> bool {
        let pods = self.pods.lock().expect("kubelet pods");
        pods.get(&format!("{namespace}/{name}")).is_some_and(|w| w.signals.send(signal).is_ok())
    }

    /// Evicts a pod (phase Failed with `reason`, e.g. `Evicted` or `OutOfmemory`); false if unknown.
    pub fn evict(&self, namespace: &str, name: &str, reason: &str) -> bool {
        self.signal(namespace, name, PodSignal::Evict { reason: reason.to_string() })
    }

    /// Crashes the pod's main container with `exit_code` (it restarts per its policy); false if unknown.
    pub fn crash(&self, namespace: &str, name: &str, exit_code: i32) -> bool {
        self.signal(namespace, name, PodSignal::Crash { exit_code, reason: None })
    }

    /// The kernel's OOM killer ends the pod's main container: exit 137, reason `OOMKilled` (it
    /// restarts per its policy); false if unknown.
    pub fn oom_kill(&self, namespace: &str, name: &str) -> bool {
        let reason = Some("OOMKilled".to_string());
        self.signal(namespace, name, PodSignal::Crash { exit_code: container::EXIT_SIGKILL, reason })
    }

    /// Everything the kubelet has done so far.
    pub fn events(&self) -> Vec<KubeletEvent> {
        self.shared.record.events_of::<KubeletEvent>().into_iter().map(|(_, e)| e).collect()
    }

    /// The pods (`namespace/name`) the kubelet is running now.
    pub fn running_pods(&self) -> Vec<String> {
        self.pods.lock().expect("kubelet pods").keys().cloned().collect()
    }
}
