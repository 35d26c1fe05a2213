//! # The kubelet model
//!
//! One simulated node. The kubelet follows every pod through the fake API server's change stream and
//! gives each its own task ([`pod`]): bind after a seeded scheduling delay, start the containers after a
//! seeded start delay, run the main container's process ([`container`]: a scale-set runner against the
//! fake GitHub, a legacy runner running `config.sh` with its registration token, the controller's real
//! listener code, or an idle process), restart per `restartPolicy` with CrashLoopBackOff, and on
//! deletion stop the containers within the grace period and remove the pod with a grace-0 delete. Its
//! API writes go through its own `kube::Client`, attributed to actor `kubelet`. Scenarios can evict pods
//! and crash containers. What it did is a structured event log ([`events`]) and trace lines. What a
//! process reads from its pod spec is the images' contract ([`contract`]), not any controller's code.

pub mod container;
pub mod contract;
pub mod events;
pub mod pod;
pub mod status;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::apiserver::{EventType, FakeApiServer, LagRange};
use crate::clock::SimClock;
use crate::github::FakeGitHub;
use crate::record::Recorder;
use crate::seed::Seed;
pub use container::ListenerLauncher;
pub use events::{KubeletEvent, KubeletEventKind, StopCause};
use pod::{PodSignal, PodTask};

/// How the node behaves; every field has a documented default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KubeletConfig {
    /// The node's name (`spec.nodeName` of bound pods). Default `arcsim-node-1`.
    pub node_name: String,
    /// From pod creation to binding (default 10–200 ms).
    pub scheduling_delay: LagRange,
    /// From binding to the main container running: image pull and start (default 500–2500 ms).
    pub start_delay: LagRange,
    /// From SIGTERM to the containers having stopped, capped by the grace period (default 50–1000 ms).
    pub stop_delay: LagRange,
    /// First CrashLoopBackOff delay (default 10 s); it doubles per restart.
    pub crash_backoff_initial_ms: u64,
    /// CrashLoopBackOff cap (default 300 s).
    pub crash_backoff_max_ms: u64,
    /// Retry period of a container whose secret is missing (default 2 s).
    pub config_error_retry_ms: u64,
}

impl Default for KubeletConfig {
    fn default() -> Self {
        KubeletConfig {
            node_name: "arcsim-node-1".into(),
            scheduling_delay: LagRange::between(10, 200),
            start_delay: LagRange::between(500, 2500),
            stop_delay: LagRange::between(50, 1000),
            crash_backoff_initial_ms: 10_000,
            crash_backoff_max_ms: 300_000,
            config_error_retry_ms: 2_000,
        }
    }
}

/// What the pod tasks share.
pub(crate) struct Shared {
    pub config: KubeletConfig,
    pub client: kube::Client,
    pub github: FakeGitHub,
    pub clock: SimClock,
    pub record: Recorder,
    pub listener: Option<ListenerLauncher>,
}

impl Shared {
    pub fn record(&self, namespace: &str, name: &str, uid: &str, kind: KubeletEventKind) {
        let pod = format!("{namespace}/{name}");
        let event = KubeletEvent { ms: self.clock.elapsed_ms(), pod, uid: uid.to_string(), kind };
        self.record.emit(event);
    }
}

/// Each running pod's signal channel by `namespace/name`, with the uid it was started for.
type PodSignals = BTreeMap<String, (String, UnboundedSender<PodSignal>)>;

/// The running kubelet. Clones share it.
#[derive(Clone)]
pub struct Kubelet {
    shared: Arc<Shared>,
    pods: Arc<Mutex<PodSignals>>,
}

impl std::fmt::Debug for Kubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kubelet").field("node", &self.shared.config.node_name).finish_non_exhaustive()
    }
}

impl Kubelet {
    /// Starts the kubelet on `apiserver`, running runner processes against `github` and listener pods
    /// through `listener` (idle when `None`). Must be called inside the run's runtime.
    pub fn start(
        seed: Seed,
        apiserver: &FakeApiServer,
        github: FakeGitHub,
        record: Recorder,
        config: KubeletConfig,
        listener: Option<ListenerLauncher>,
    ) -> Kubelet {
        let shared = Arc::new(Shared {
            config,
            client: apiserver.client_as("kubelet"),
            github,
            clock: record.clock(),
            record,
            listener,
        });
        let kubelet = Kubelet { shared, pods: Arc::default() };
        let pods_type = apiserver.registry().find_plural("pods").expect("the fake serves pods");
        let mut changes = apiserver.changes();
        let this = kubelet.clone();
        tokio::spawn(async move {
            while let Some(change) = changes.next().await {
                if change.key.resource == pods_type {
                    this.observe(change.kind, &change.object, seed);
                }
            }
        });
        kubelet
    }

    fn observe(&self, kind: EventType, object: &serde_json::Value, seed: Seed) {
        let Ok(pod) = serde_json::from_value::<Pod>(object.clone()) else { return };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let key = format!(
            "{}/{}",
            pod.metadata.namespace.as_deref().unwrap_or(""),
            pod.metadata.name.as_deref().unwrap_or("")
        );
        let mut pods = self.pods.lock().expect("kubelet pods");
        match kind {
            EventType::Added => {
                let (tx, signals) = unbounded_channel();
                pods.insert(key, (uid.clone(), tx));
                let rng = seed.named_rng(&format!("kubelet/pod/{uid}"));
                let task = PodTask { kubelet: self.shared.clone(), pod, signals, rng };
                tokio::spawn(task.run());
            }
            EventType::Modified => {
                let Some(grace) = pod
                    .metadata
                    .deletion_grace_period_seconds
                    .filter(|_| pod.metadata.deletion_timestamp.is_some())
                else {
                    return;
                };
                if let Some((_, tx)) = pods.get(&key).filter(|(known, _)| *known == uid) {
                    let _ = tx.send(PodSignal::Deleting { grace_seconds: grace });
                }
            }
            EventType::Deleted => {
                if pods.get(&key).is_some_and(|(known, _)| *known == uid)
                    && let Some((_, tx)) = pods.remove(&key)
                {
                    let _ = tx.send(PodSignal::Removed);
                }
            }
        }
    }

    fn signal(&self, namespace: &str, name: &str, signal: PodSignal) -> bool {
        let pods = self.pods.lock().expect("kubelet pods");
        pods.get(&format!("{namespace}/{name}")).is_some_and(|(_, tx)| tx.send(signal).is_ok())
    }

    /// Evicts a pod (phase Failed with `reason`, e.g. `Evicted` or `OutOfmemory`); false if unknown.
    pub fn evict(&self, namespace: &str, name: &str, reason: &str) -> bool {
        self.signal(namespace, name, PodSignal::Evict { reason: reason.to_string() })
    }

    /// Crashes the pod's main container with `exit_code` (it restarts per its policy); false if unknown.
    pub fn crash(&self, namespace: &str, name: &str, exit_code: i32) -> bool {
        self.signal(namespace, name, PodSignal::Crash { exit_code })
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
