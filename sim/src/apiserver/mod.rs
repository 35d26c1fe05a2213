//! # The fake Kubernetes API server
//!
//! An in-memory kube-apiserver with the semantics a controller can observe: resourceVersions from one
//! global counter, 409 AlreadyExists and Conflict, 404, 422 with real `Status` bodies, finalizers and
//! deletionTimestamp, graceful pod deletion, ownerReference garbage collection, the status subresource,
//! generateName, label and field selectors, paged lists, and watches with bookmarks, 410 Expired and
//! seeded per-watch delivery lag; lists and watches at resourceVersion `0` (or `NotOlderThan`) are
//! served from a watch cache that lags the store by a seeded delay, and serving time is split around
//! the commit. It is a `tower::Service`, so `kube::Client::new(service, "default")`
//! drives it exactly as it drives a real cluster, and [`tcp`] serves it over loopback for kubectl.
//!
//! Custom resources are learnt from CRD manifests, as data ([`CrdSet`]): each is validated against its
//! structural schema (422 with kube-apiserver's field errors) and pruned of unknown fields, which the
//! `fieldValidation` parameter ignores, warns about or refuses.
//!
//! Map of the code: [`registry`] (served kinds), [`crd`] (CRD manifests), [`schema`] (structural
//! schemas), [`validate`] (schema validation), [`prune`] (unknown fields), [`field_validation`] (the
//! `fieldValidation` parameter), [`gofmt`] (Go's value formatting in messages), [`store`] (objects,
//! resourceVersions, history), [`admission`] (validation, defaulting, status/spec split), [`labels`]
//! (label and annotation rules), [`pod_status`] (pod status updates),
//! [`serviceaccount_admission`] and [`quota`] (admission plugins; quota status), [`serviceaccounts`]
//! (every namespace's `default` account), [`delay_queue`] (their delayed work), [`lifecycle`]
//! (deletion), [`delete_hook`] (a delete about to be served, for a perturbation), [`patch`] and [`strategic`] (strategic merge patch),
//! [`engine`] (one function per verb), [`commit`] (a new version stored, or removed), [`list`] (paging), [`watch`] (lagged event streams), [`cache`]
//! (the watch cache lists and watches are served from), [`versions`] (the `resourceVersion` and
//! `resourceVersionMatch` parameters), [`timing`] (serving latency around the commit), [`gc`]
//! (garbage collector and namespace finalizer), [`faults`] (the fault layer), [`status`] (error bodies),
//! [`discovery`], [`selector`], [`http`] (routing, the tower service, the audit log), [`reads`] (who
//! was handed which version), [`tcp`] (loopback server); requests name their caller with
//! [`crate::actor`].

pub mod admission;
pub mod body;
pub mod cache;
pub mod commit;
pub mod crd;
pub mod delay_queue;
pub mod delete_hook;
pub mod discovery;
pub mod engine;
pub mod events;
pub mod faults;
pub mod field_validation;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod gc;
pub mod gofmt;
pub mod http;
pub mod labels;
pub mod lifecycle;
pub mod list;
pub mod load;
pub mod merge;
pub mod node_path;
pub mod patch;
pub mod pod_status;
pub mod prune;
pub mod quota;
pub mod reads;
pub mod registry;
pub mod schema;
pub mod selector;
pub mod serviceaccount_admission;
pub mod serviceaccounts;
pub mod status;
pub mod store;
pub mod strategic;
pub mod tcp;
pub mod timing;
pub mod untouched;
pub mod validate;
pub mod versions;
pub mod watch;
pub mod watch_stream;
pub mod wire;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::clock::SimClock;
use crate::clock_skew::{ClockSkew, PartyClock};
use crate::faults::{ApiVerb, FaultPlan};
use crate::record::Recorder;
use crate::schedule::{Scheduler, SchedulerSlot};
use crate::seed::{Component, Seed};

pub use crate::actor::ActorService;
pub use crd::{Crd, CrdError, CrdSet};
pub use events::{
    ApiFault, AuditEntry, BodyHashes, CacheRead, Collected, Committed, DiscoveryServed, FaultEffect,
    SeatWait, WatchItem, WatchOpened, WatchSent,
};
pub use http::{ACTOR_HEADER, ApiService, ResponseBody};
pub use registry::{Registry, ResourceId, ResourceType};
pub use store::{Change, EventType};

/// A uniform range of simulated milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LagRange {
    /// Shortest.
    pub min_ms: u64,
    /// Longest.
    pub max_ms: u64,
}

impl LagRange {
    /// Exactly `ms`.
    pub const fn fixed(ms: u64) -> Self {
        LagRange { min_ms: ms, max_ms: ms }
    }

    /// Between `min_ms` and `max_ms` inclusive.
    pub const fn between(min_ms: u64, max_ms: u64) -> Self {
        LagRange { min_ms, max_ms }
    }
}

/// Watch delivery lag: a default and overrides by resource plural (`pods`, `ephemeralrunners`…).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchLag {
    /// Lag for resources without an override.
    pub default: LagRange,
    /// Lag by resource plural.
    #[serde(default)]
    pub per_resource: BTreeMap<String, LagRange>,
}

impl WatchLag {
    /// The lag range of `plural`.
    pub fn for_resource(&self, plural: &str) -> LagRange {
        self.per_resource.get(plural).copied().unwrap_or(self.default)
    }
}

/// How the fake API server behaves; every field has a documented default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApiServerConfig {
    /// Watch delivery lag, per watch, on top of the watch cache's (default: 0–20 ms for every resource).
    pub watch_lag: WatchLag,
    /// How long a committed change takes to reach its resource's watch cache, drawn per change
    /// (default: 0–10 ms for every resource). Lists at resourceVersion `0` see the cache as it is;
    /// watches deliver a change no earlier than its cache has it.
    pub watch_cache_lag: WatchLag,
    /// Time each request takes to serve, drawn per request (default 1–4 ms) and split at a uniformly
    /// drawn point into the part before the request reaches the store and the part after (see
    /// [`timing`]). Real servers take milliseconds; a zero here lets a client loop (say, re-watching a
    /// stream that ends at once) without simulated time ever advancing.
    pub request_latency: LagRange,
    /// Changes retained per resource for watch resumption (default 1000); older resumes get 410.
    pub history_capacity: usize,
    /// Bookmark period for watches that allow them, in sim ms (default 60 000).
    pub bookmark_interval_ms: u64,
    /// Delay before the garbage collector acts on a change (default 10–200 ms).
    pub gc_delay: LagRange,
    /// Delay before the service-account and resource-quota controllers act on a change (default
    /// 5–50 ms).
    pub controller_delay: LagRange,
    /// Paged-list snapshots kept for continue tokens (default 64).
    pub list_snapshots: usize,
    /// Namespaces that exist from the start (default: default, kube-system, kube-public, kube-node-lease).
    pub namespaces: Vec<String>,
    /// A watch whose backlog (changes its watch cache has that it has not delivered) grows past this
    /// many is closed, as kube-apiserver's cacher closes a watcher too slow to take its events; the
    /// client resumes from its last resourceVersion. `None` (the default): buffers never fill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_watcher_backlog: Option<usize>,
    /// A watch whose client has left this many events unread (it stopped reading: a paused process)
    /// is closed as the cacher closes a watcher it cannot dispatch to (`watch_stream`). `None` (the
    /// default): a client may leave any number unread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread_watch_events: Option<usize>,
    /// The watch cache keeps its changes for a time as well as by count, as kube-apiserver's does: a
    /// watch resuming from a resourceVersion older than its window gets 410 Expired. `None` (the
    /// default): resumes reach back over the store's history (`history_capacity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_cache_window: Option<WatchCacheWindow>,
    /// How far the server's wall clock reads from true time: its creation and deletion timestamps and
    /// its quota's clock read it. Absent (the default): true time.
    #[serde(default, skip_serializing_if = "ClockSkew::is_none")]
    pub clock: ClockSkew,
    /// Priority and fairness under the cluster's other tenants ([`load`]): requests wait for a seat,
    /// are served more slowly while seats are taken, and are rejected 429 when the queue is full or
    /// they wait too long. `None` (the default): every request is served at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<load::LoadConfig>,
}

/// The window of changes a watch cache keeps for watches to resume over: every change of the last
/// `fresh_ms`, and at least the last `lower_bound` of them (kube-apiserver's `eventFreshDuration`, 75
/// s, and its default lower bound of 100 events; `watch_cache.go`). Simplified: the cacher's capacity
/// grows and shrinks by halves; here a change leaves the window once it is both older than
/// `fresh_ms` and beyond the `lower_bound` newest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchCacheWindow {
    /// How long a change stays resumable, in sim ms.
    pub fresh_ms: u64,
    /// How many of the newest changes stay resumable however old.
    pub lower_bound: usize,
}

impl WatchCacheWindow {
    /// kube-apiserver's: 75 s, and at least 100 changes.
    pub const KUBE_APISERVER: WatchCacheWindow = WatchCacheWindow { fresh_ms: 75_000, lower_bound: 100 };
}

impl Default for ApiServerConfig {
    fn default() -> Self {
        ApiServerConfig {
            watch_lag: WatchLag { default: LagRange::between(0, 20), per_resource: BTreeMap::new() },
            watch_cache_lag: WatchLag { default: LagRange::between(0, 10), per_resource: BTreeMap::new() },
            request_latency: LagRange::between(1, 4),
            history_capacity: 1000,
            bookmark_interval_ms: 60_000,
            gc_delay: LagRange::between(10, 200),
            controller_delay: LagRange::between(5, 50),
            list_snapshots: 64,
            namespaces: ["default", "kube-system", "kube-public", "kube-node-lease"]
                .map(String::from)
                .to_vec(),
            slow_watcher_backlog: None,
            unread_watch_events: None,
            watch_cache_window: None,
            clock: ClockSkew::NONE,
            load: None,
        }
    }
}

/// Request counters: `(verb, resource plural, HTTP code) → count`.
pub type RequestCounts = BTreeMap<(ApiVerb, String, u16), u64>;

/// The mutable state behind the lock.
pub struct State {
    /// Objects, versions, history, subscribers.
    pub store: store::Store,
    /// uids and generated names.
    rng: ChaCha8Rng,
    /// Per-request serving latency.
    latency_rng: ChaCha8Rng,
    /// Where in its serving time each request reaches the store.
    commit_point_rng: ChaCha8Rng,
    /// The fault layer.
    faults: faults::FaultInjector,
    /// Requests by verb, resource and code (the resource as its id: no plural copied a request).
    counts: BTreeMap<(ApiVerb, registry::ResourceId, u16), u64>,
    /// Next watch id (trace names watches `watch#N`).
    next_watch_id: u64,
    /// Paged-list snapshots.
    snapshots: list::ListSnapshots,
    /// Watch lag of the watches an actor opens, overriding `config.watch_lag` (see
    /// [`FakeApiServer::set_actor_watch_lag`]).
    actor_watch_lag: BTreeMap<String, LagRange>,
    /// The plan's perturbations and their counters.
    pub perturbations: crate::perturb::Perturbations,
}

impl State {
    /// The lag range of a watch on `plural` opened by `actor`.
    pub fn watch_lag(&self, config: &ApiServerConfig, actor: Option<&str>, plural: &str) -> LagRange {
        actor
            .and_then(|a| self.actor_watch_lag.get(a))
            .copied()
            .unwrap_or_else(|| config.watch_lag.for_resource(plural))
    }
}

/// What every part of the server shares.
pub struct Shared {
    /// The served kinds.
    pub registry: Registry,
    /// Simulated time.
    pub clock: SimClock,
    /// The run's record (its text form is the trace).
    pub record: Recorder,
    /// Behaviour settings.
    pub config: ApiServerConfig,
    /// The run's seed (per-watch lag streams derive from it).
    pub seed: Seed,
    /// The watch caches (locked after `state` when both are held).
    pub cache: Arc<cache::CacheHandle>,
    /// Signalled when a perturbation asks the world to crash and restart the controller.
    pub restart_requested: Arc<tokio::sync::Notify>,
    /// The run's schedule, at the points around each commit and each watch delivery.
    pub schedule: SchedulerSlot,
    /// Told of each named delete just before it is served (see [`delete_hook`]).
    pub delete_hook: delete_hook::DeleteHookSlot,
    /// The priority level every request but a watch takes a seat of, when `config.load` sets one.
    pub load: Option<load::LoadGate>,
    state: Mutex<State>,
}

impl Shared {
    /// Locks the state. Never held across an await.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The server's wall-clock time: what its timestamps say (true time plus its configured skew).
    pub fn wall_now(&self) -> jiff::Timestamp {
        PartyClock::new(self.clock, self.config.clock).now()
    }
}

/// A handle on one fake API server. Clones share it.
#[derive(Clone)]
pub struct FakeApiServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer").field("resource_version", &self.resource_version()).finish()
    }
}

impl FakeApiServer {
    /// Starts a server with the built-in kinds and the custom resources of `crds`, its configured
    /// namespaces (each with its `default` ServiceAccount), its garbage collector and its
    /// service-account and resource-quota controllers. Must be called inside the run's tokio runtime.
    pub fn new(
        seed: Seed,
        clock: SimClock,
        record: Recorder,
        config: ApiServerConfig,
        faults: &FaultPlan,
        crds: &CrdSet,
    ) -> Self {
        let registry = Registry::new(crds);
        let plurals: Vec<String> = registry.types().iter().map(|t| t.plural.clone()).collect();
        let caches = cache::WatchCaches::new(
            config.watch_cache_lag.clone(),
            plurals,
            seed.named_rng("apiserver/watch-cache"),
        )
        .with_window(config.watch_cache_window);
        let cache = cache::CacheHandle::new(caches);
        let state = State {
            store: store::Store::new(config.history_capacity, committed_sink(&registry, &record, &cache)),
            rng: seed.rng(Component::ApiServer),
            latency_rng: seed.named_rng("apiserver/latency"),
            commit_point_rng: seed.named_rng("apiserver/commit-point"),
            faults: faults::FaultInjector::new(faults.api.clone(), seed.rng(Component::ApiFaults)),
            counts: BTreeMap::new(),
            next_watch_id: 1,
            snapshots: list::ListSnapshots::new(config.list_snapshots),
            actor_watch_lag: BTreeMap::new(),
            perturbations: crate::perturb::Perturbations::new(&faults.perturbations),
        };
        let restart_requested = Arc::new(tokio::sync::Notify::new());
        let load = config.load.map(|l| load::LoadGate::new(l, seed.named_rng("apiserver/load"), clock));
        let shared = Arc::new(Shared {
            registry,
            clock,
            record,
            config,
            seed,
            cache,
            restart_requested,
            schedule: SchedulerSlot::default(),
            delete_hook: Default::default(),
            load,
            state: Mutex::new(state),
        });
        let server = FakeApiServer { shared };
        server.create_namespaces();
        gc::spawn(server.shared.clone());
        serviceaccounts::spawn(server.shared.clone());
        quota::spawn(server.shared.clone());
        server
    }

    fn create_namespaces(&self) {
        let ns_type = self.shared.registry.namespace_id();
        let mut st = self.shared.lock();
        for name in &self.shared.config.namespaces {
            let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            engine::create(&self.shared, &mut st, ns_type, None, ns)
                .expect("configured namespaces are valid");
        }
        for name in &self.shared.config.namespaces {
            serviceaccounts::ensure_default(&self.shared, &mut st, name);
        }
    }

    /// The tower service a `kube::Client` drives.
    pub fn service(&self) -> ApiService {
        ApiService::new(self.shared.clone())
    }

    /// A `kube::Client` on this server with default namespace `default`. Must be called inside the
    /// runtime that will drive it.
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.service(), "default")
    }

    /// The served kinds.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The latest committed resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().store.current_rv()
    }

    /// Every mutating request answered so far (any outcome), in order, as far as the record keeps
    /// [`AuditEntry`] events.
    pub fn audit(&self) -> Vec<AuditEntry> {
        let requests = self.shared.record.events_of::<AuditEntry>();
        requests.into_iter().map(|(_, r)| r).filter(|r| r.verb.is_mutating()).collect()
    }

    /// Every read so far, in order, as far as the record keeps [`reads::ReadEntry`] events (see
    /// [`reads`]).
    pub fn reads(&self) -> Vec<reads::ReadEntry> {
        self.shared.record.events_of::<reads::ReadEntry>().into_iter().map(|(_, r)| r).collect()
    }

    /// A `kube::Client` whose requests are attributed to `actor` in the trace and the audit log.
    pub fn client_as(&self, actor: &str) -> kube::Client {
        kube::Client::new(ActorService::new(self.service(), actor), "default")
    }

    /// Gives every watch `actor` opens from now on the delivery lag `lag`, whatever the resource: the
    /// link between one client and the server (the kubelet's pod watch lags on its own).
    pub fn set_actor_watch_lag(&self, actor: &str, lag: LagRange) {
        self.shared.lock().actor_watch_lag.insert(actor.to_string(), lag);
    }

    /// Signalled when a perturbation of the plan asks for the controller to be crashed and restarted
    /// (right after its n-th write).
    pub fn restart_requests(&self) -> Arc<tokio::sync::Notify> {
        self.shared.restart_requested.clone()
    }

    /// Calls `hook` with the actor, resource plural and name of each named delete just before it is
    /// served (a delayed-assignment perturbation's trigger).
    pub fn on_delete(&self, hook: delete_hook::DeleteHook) {
        self.shared.delete_hook.set(hook);
    }

    /// Orders this server's same-instant work by the run's `scheduler` (set once, before the first
    /// request; `fifo` until then).
    pub fn set_scheduler(&self, scheduler: Scheduler) {
        self.shared.schedule.set(scheduler);
    }

    /// Requests served so far, by verb, resource and code.
    pub fn request_counts(&self) -> RequestCounts {
        let counts = self.shared.lock().counts.clone();
        let plural = |resource| self.shared.registry.get(resource).plural.clone();
        counts.into_iter().map(|((verb, resource, code), n)| ((verb, plural(resource), code), n)).collect()
    }

    /// The stored object, for oracles and tests (bypasses the API: no counters, no faults).
    pub fn object(&self, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        let resource = self.shared.registry.find_plural(plural)?;
        let key = store::StoreKey { resource, namespace: namespace.into(), name: name.into() };
        self.shared.lock().store.get(&key).map(|o| (**o).clone())
    }

    /// Every stored object of `plural`, ordered by namespace and name.
    pub fn objects(&self, plural: &str) -> Vec<Value> {
        self.stored(plural).into_iter().map(|o| (*o).clone()).collect()
    }

    /// [`objects`](Self::objects) as the store holds them, shared rather than copied (for a look that
    /// keeps none of them).
    pub fn stored(&self, plural: &str) -> Vec<Arc<Value>> {
        let Some(resource) = self.shared.registry.find_plural(plural) else { return Vec::new() };
        self.shared.lock().store.list(resource, None).into_iter().map(|(_, o)| o.clone()).collect()
    }

    /// A stream of every committed change (all kinds), for world models and oracles.
    pub fn changes(&self) -> futures::channel::mpsc::UnboundedReceiver<Arc<Change>> {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        self.shared.lock().store.subscribe(None, None, tx);
        rx
    }

    /// The run's record.
    pub fn record(&self) -> &Recorder {
        &self.shared.record
    }
}

/// The store's commit hook: each committed change goes on its way to its watch cache, and into the
/// record as [`events::Committed`] when the record keeps changes of its kind.
fn committed_sink(
    registry: &Registry,
    record: &Recorder,
    cache: &Arc<cache::CacheHandle>,
) -> store::CommitSink {
    let plurals: Vec<String> = registry.types().iter().map(|t| t.plural.clone()).collect();
    let record = record.clone();
    let cache = cache.clone();
    Box::new(move |change: &Arc<Change>| {
        cache.observe(change, record.clock().elapsed_ms());
        let resource = plurals.get(change.key.resource).cloned().unwrap_or_default();
        if record.wants::<events::Committed>(Some(&resource)) {
            // The record keeps every version for the run's length; its encoding only the watches need.
            record.emit(events::Committed { resource, change: Arc::new(change.without_encoding()) });
        }
    })
}
