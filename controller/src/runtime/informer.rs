//! An informer: kube's `watcher` feeding the ordered cache (`Store`) and fanning events out to
//! subscribers.
//!
//! The watcher lists, then watches, and relists whenever the watch cannot resume (for example after a
//! `410 Expired`). Every list (`Init`, `InitApply`…, `InitDone`) is buffered and applied at once at
//! `InitDone`, then diffed against the previous cache: a listed object already cached comes out as
//! [`InformerEvent::Updated`] (even when unchanged: dropping no-op updates is the predicates' job), a new
//! one as [`InformerEvent::Added`], and a cached object the list no longer holds as
//! [`InformerEvent::Deleted`]. Watch events are applied one by one. The cache is always updated before
//! subscribers hear of the change, as in client-go.
//!
//! Watch errors are logged at warn and followed by a deterministic exponential backoff
//! ([`WatchBackoff`], 800 ms doubling to 30 s, reset by the next success, no jitter) slept with
//! `tokio::time`, so a failing API server never causes a busy loop (which would hang a paused-time
//! simulation).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use kube::runtime::watcher;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, watch};

use super::object_key::ObjectKey;
use super::store::Store;

/// What an informer can watch: a kube resource with a static type.
pub trait WatchedResource:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

impl<K> WatchedResource for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// A change to the cache, as subscribers see it.
#[derive(Debug)]
pub enum InformerEvent<K> {
    /// An object appeared (a watch ADDED, a list entry not cached before, or a replay for a late
    /// subscriber).
    Added(Arc<K>),
    /// A cached object was seen again: a watch MODIFIED, or a relist entry already cached.
    Updated {
        /// The object as cached before.
        old: Arc<K>,
        /// The object as cached now.
        new: Arc<K>,
    },
    /// An object went away: a watch DELETED (carrying the object's final state), or a cached object
    /// missing from a relist (carrying the cached object).
    Deleted(Arc<K>),
}

impl<K> Clone for InformerEvent<K> {
    fn clone(&self) -> Self {
        match self {
            InformerEvent::Added(object) => InformerEvent::Added(Arc::clone(object)),
            InformerEvent::Updated { old, new } => {
                InformerEvent::Updated { old: Arc::clone(old), new: Arc::clone(new) }
            }
            InformerEvent::Deleted(object) => InformerEvent::Deleted(Arc::clone(object)),
        }
    }
}

/// The wait after consecutive watch errors: `initial`, doubling per error, at most `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchBackoff {
    /// The wait after the first error.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for WatchBackoff {
    /// client-go's reflector backoff without its jitter: 800 ms doubling to 30 s.
    fn default() -> Self {
        WatchBackoff { initial: Duration::from_millis(800), max: Duration::from_secs(30) }
    }
}

impl WatchBackoff {
    /// The wait after an error, given the wait after the previous error in the same run of errors.
    pub fn next(&self, previous: Option<Duration>) -> Duration {
        match previous {
            None => self.initial.min(self.max),
            Some(previous) => previous.saturating_mul(2).min(self.max),
        }
    }
}

/// Why an informer stopped.
#[derive(Debug, thiserror::Error)]
pub enum InformerError {
    /// `run` was called on an informer that is already running (one watch per cache).
    #[error("informer for {kind} is already running")]
    AlreadyRunning {
        /// The watched kind.
        kind: String,
    },
    /// The watcher stream ended, which kube's watcher never does on its own.
    #[error("watch stream for {kind} ended")]
    StreamEnded {
        /// The watched kind.
        kind: String,
    },
}

/// Where the informer is in the watcher's list/watch cycle.
enum ListState<K> {
    /// Applying watch events one by one. Entered at `InitDone`; also the state before the first list
    /// (the watcher always starts with `Init`).
    Watching,
    /// Between `Init` and `InitDone`: the objects listed so far, applied together at `InitDone`.
    Listing(BTreeMap<ObjectKey, Arc<K>>),
}

/// The parts shared by every clone of an informer.
struct Shared<K> {
    store: Store<K>,
    /// Subscribers in registration order. The lock also serialises cache writes with deliveries.
    subscribers: Mutex<Vec<mpsc::UnboundedSender<InformerEvent<K>>>>,
    synced: watch::Sender<bool>,
    running: AtomicBool,
}

/// A shared informer for one resource type. Clones share the cache and subscribers; exactly one clone
/// is [`run`](Informer::run) (the [`Manager`](super::manager::Manager) does that).
pub struct Informer<K> {
    shared: Arc<Shared<K>>,
    api: Api<K>,
    config: watcher::Config,
    backoff: WatchBackoff,
}

impl<K: Clone> Clone for Informer<K> {
    fn clone(&self) -> Self {
        Informer {
            shared: Arc::clone(&self.shared),
            api: self.api.clone(),
            config: self.config.clone(),
            backoff: self.backoff,
        }
    }
}

impl<K> std::fmt::Debug for Informer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer").field("config", &self.config).finish_non_exhaustive()
    }
}

impl<K: WatchedResource> Informer<K> {
    /// An informer over `api` (`Api::all` or `Api::namespaced`: the caller picks the scope) with
    /// `config` (selectors, page size, timeouts) and the default backoff.
    pub fn new(api: Api<K>, config: watcher::Config) -> Self {
        let shared = Shared {
            store: Store::default(),
            subscribers: Mutex::new(Vec::new()),
            synced: watch::Sender::new(false),
            running: AtomicBool::new(false),
        };
        Informer { shared: Arc::new(shared), api, config, backoff: WatchBackoff::default() }
    }

    /// Replaces the backoff after watch errors.
    #[must_use]
    pub fn with_backoff(mut self, backoff: WatchBackoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// A read handle on the cache.
    pub fn store(&self) -> Store<K> {
        self.shared.store.clone()
    }

    /// A channel of every change from now on. A subscriber joining after objects were cached first
    /// receives an `Added` for each of them (in key order), as a late event handler does in client-go.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<InformerEvent<K>> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut subscribers = self.subscribers();
        for object in self.shared.store.list() {
            // The receiver is alive: it is still in our hands.
            let _ = sender.send(InformerEvent::Added(object));
        }
        subscribers.push(sender);
        receiver
    }

    /// Whether the first list has been applied to the cache.
    pub fn has_synced(&self) -> bool {
        *self.shared.synced.borrow()
    }

    /// A signal that turns `true` once the first list has been applied to the cache.
    pub(crate) fn synced_signal(&self) -> watch::Receiver<bool> {
        self.shared.synced.subscribe()
    }

    /// Resolves once the first list has been applied to the cache.
    pub async fn wait_for_sync(&self) {
        let mut synced = self.shared.synced.subscribe();
        // The sender lives in `shared`, which we hold, so the channel cannot close under us.
        let _ = synced.wait_for(|synced| *synced).await;
    }

    /// Lists and watches until dropped, keeping the cache current and informing subscribers.
    ///
    /// # Errors
    /// [`InformerError::AlreadyRunning`] if another clone is already running;
    /// [`InformerError::StreamEnded`] if the watcher stream ends (it does not, by design).
    pub async fn run(self) -> Result<Infallible, InformerError> {
        if self.shared.running.swap(true, Ordering::SeqCst) {
            return Err(InformerError::AlreadyRunning { kind: kind::<K>() });
        }
        let events = watcher(self.api.clone(), self.config.clone());
        futures::pin_mut!(events);
        let mut state = ListState::Watching;
        let mut last_wait = None;
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    // `Init` comes before the list request, so it proves nothing; anything after does.
                    if !matches!(event, watcher::Event::Init) {
                        last_wait = None;
                    }
                    self.apply(&mut state, event);
                }
                Err(error) => {
                    let wait = self.backoff.next(last_wait);
                    last_wait = Some(wait);
                    tracing::warn!(
                        kind = %kind::<K>(), error = %error, retry_in_ms = wait.as_millis(),
                        "watch failed; retrying after backoff"
                    );
                    tokio::time::sleep(wait).await;
                }
            }
        }
        Err(InformerError::StreamEnded { kind: kind::<K>() })
    }

    fn apply(&self, state: &mut ListState<K>, event: watcher::Event<K>) {
        match event {
            watcher::Event::Init => *state = ListState::Listing(BTreeMap::new()),
            watcher::Event::InitApply(object) => match state {
                ListState::Listing(listed) => {
                    listed.insert(ObjectKey::from_resource(&object), Arc::new(object));
                }
                ListState::Watching => self.apply_object(object),
            },
            watcher::Event::InitDone => {
                let listed = match std::mem::replace(state, ListState::Watching) {
                    ListState::Listing(listed) => listed,
                    ListState::Watching => BTreeMap::new(),
                };
                self.apply_list(listed);
                self.shared.synced.send_replace(true);
            }
            watcher::Event::Apply(object) => self.apply_object(object),
            watcher::Event::Delete(object) => self.apply_delete(object),
        }
    }

    fn apply_object(&self, object: K) {
        let new = Arc::new(object);
        let mut subscribers = self.subscribers();
        let event = match self.shared.store.insert(Arc::clone(&new)) {
            Some(old) => InformerEvent::Updated { old, new },
            None => InformerEvent::Added(new),
        };
        deliver(&mut subscribers, &[event]);
    }

    fn apply_delete(&self, object: K) {
        let mut subscribers = self.subscribers();
        self.shared.store.remove(&ObjectKey::from_resource(&object));
        deliver(&mut subscribers, &[InformerEvent::Deleted(Arc::new(object))]);
    }

    /// Replaces the cache with a complete list and delivers the difference: listed objects first (in key
    /// order), then the cached objects the list no longer holds (in key order).
    fn apply_list(&self, listed: BTreeMap<ObjectKey, Arc<K>>) {
        let mut subscribers = self.subscribers();
        let mut previous = self.shared.store.replace(listed.clone());
        let mut events: Vec<InformerEvent<K>> = listed
            .into_iter()
            .map(|(key, new)| match previous.remove(&key) {
                Some(old) => InformerEvent::Updated { old, new },
                None => InformerEvent::Added(new),
            })
            .collect();
        events.extend(previous.into_values().map(InformerEvent::Deleted));
        deliver(&mut subscribers, &events);
    }

    fn subscribers(&self) -> MutexGuard<'_, Vec<mpsc::UnboundedSender<InformerEvent<K>>>> {
        self.shared.subscribers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Sends `events` to every subscriber in registration order, forgetting subscribers that hung up.
fn deliver<K>(subscribers: &mut Vec<mpsc::UnboundedSender<InformerEvent<K>>>, events: &[InformerEvent<K>]) {
    subscribers.retain(|subscriber| events.iter().all(|event| subscriber.send(event.clone()).is_ok()));
}

fn kind<K: Resource<DynamicType = ()>>() -> String {
    K::kind(&()).into_owned()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use tokio::time::{sleep, timeout};

    use super::*;
    use crate::runtime::testing::{ScriptedApi, config_map, config_map_list, status, status_body};

    fn informer(api: &ScriptedApi) -> Informer<ConfigMap> {
        Informer::new(Api::namespaced(api.client(), "default"), watcher::Config::default())
    }

    fn version(object: &ConfigMap) -> String {
        let meta = object.meta();
        format!("{}@{}", meta.name.as_deref().unwrap_or(""), meta.resource_version.as_deref().unwrap_or(""))
    }

    fn describe(event: &InformerEvent<ConfigMap>) -> String {
        match event {
            InformerEvent::Added(object) => format!("added {}", version(object)),
            InformerEvent::Updated { old, new } => format!("updated {}->{}", version(old), version(new)),
            InformerEvent::Deleted(object) => format!("deleted {}", version(object)),
        }
    }

    fn drain(events: &mut mpsc::UnboundedReceiver<InformerEvent<ConfigMap>>) -> Vec<String> {
        std::iter::from_fn(|| events.try_recv().ok()).map(|event| describe(&event)).collect()
    }

    fn cached(informer: &Informer<ConfigMap>) -> Vec<String> {
        informer.store().list().iter().map(|object| version(object)).collect()
    }

    fn millis(api: &ScriptedApi) -> Vec<(u128, bool)> {
        api.seen().iter().map(|request| (request.at.as_millis(), request.is_watch())).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_list_fills_the_cache_arrives_as_adds_and_marks_the_informer_synced() {
        let api = ScriptedApi::new();
        api.push(config_map_list("10", vec![config_map("b", "2"), config_map("a", "1")]));
        let informer = informer(&api);
        let mut events = informer.subscribe();
        assert!(!informer.has_synced());
        tokio::spawn(informer.clone().run());
        timeout(Duration::from_secs(60), informer.wait_for_sync()).await.expect("synced");
        sleep(Duration::from_secs(1)).await;

        assert!(informer.has_synced());
        assert_eq!(cached(&informer), ["a@1", "b@2"]);
        assert_eq!(drain(&mut events), ["added a@1", "added b@2"]);
        let seen = api.seen();
        assert_eq!(seen.len(), 2);
        assert!(!seen[0].is_watch());
        assert!(seen[1].is_watch() && seen[1].line.contains("resourceVersion=10"), "{}", seen[1].line);
    }

    #[tokio::test(start_paused = true)]
    async fn a_relist_is_diffed_against_the_cache() {
        let api = ScriptedApi::new();
        api.push(config_map_list(
            "10",
            vec![config_map("a", "1"), config_map("b", "2"), config_map("c", "3")],
        ));
        api.push_watch(&[
            ("MODIFIED", config_map("a", "11")),
            ("ERROR", status_body(410, "Expired", "too old resource version: 10 (11)")),
        ]);
        api.push(config_map_list(
            "20",
            vec![config_map("a", "11"), config_map("b", "15"), config_map("d", "16")],
        ));
        let informer = informer(&api);
        let mut events = informer.subscribe();
        tokio::spawn(informer.clone().run());
        sleep(Duration::from_secs(5)).await;

        assert_eq!(
            drain(&mut events),
            [
                "added a@1",
                "added b@2",
                "added c@3",
                "updated a@1->a@11",
                "updated a@11->a@11",
                "updated b@2->b@15",
                "added d@16",
                "deleted c@3",
            ]
        );
        assert_eq!(cached(&informer), ["a@11", "b@15", "d@16"]);
        // The relist waits out the first backoff step after the 410.
        assert_eq!(millis(&api), [(0, false), (0, true), (800, false), (800, true)]);
    }

    #[tokio::test(start_paused = true)]
    async fn watch_events_reach_every_subscriber_in_order_after_the_cache_changed() {
        let api = ScriptedApi::new();
        api.push(config_map_list("1", vec![config_map("a", "1")]));
        let feed = api.push_open_watch();
        let informer = informer(&api);
        let mut first = informer.subscribe();
        let mut second = informer.subscribe();
        tokio::spawn(informer.clone().run());
        timeout(Duration::from_secs(60), informer.wait_for_sync()).await.expect("synced");

        feed.send("ADDED", config_map("b", "2"));
        feed.send("MODIFIED", config_map("a", "3"));
        feed.send("DELETED", config_map("b", "4"));
        sleep(Duration::from_secs(1)).await;

        let expected = ["added a@1", "added b@2", "updated a@1->a@3", "deleted b@4"];
        assert_eq!(drain(&mut first), expected);
        assert_eq!(drain(&mut second), expected);
        assert_eq!(cached(&informer), ["a@3"]);
    }

    #[tokio::test(start_paused = true)]
    async fn errors_back_off_exponentially_without_jitter_and_success_resets_the_backoff() {
        let api = ScriptedApi::new();
        for _ in 0..3 {
            api.push(status(500, "InternalError", "etcd is sad"));
        }
        api.push(config_map_list("5", vec![config_map("a", "1")]));
        api.push(status(500, "InternalError", "watch refused"));
        let informer = informer(&api);
        tokio::spawn(informer.clone().run());
        sleep(Duration::from_secs(60)).await;

        assert_eq!(
            millis(&api),
            [(0, false), (800, false), (2400, false), (5600, false), (5600, true), (6400, true),]
        );
        assert!(informer.has_synced());
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_subscriber_is_first_replayed_the_cache() {
        let api = ScriptedApi::new();
        api.push(config_map_list("10", vec![config_map("b", "2"), config_map("a", "1")]));
        let informer = informer(&api);
        tokio::spawn(informer.clone().run());
        timeout(Duration::from_secs(60), informer.wait_for_sync()).await.expect("synced");
        let mut late = informer.subscribe();
        assert_eq!(drain(&mut late), ["added a@1", "added b@2"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_second_run_of_the_same_informer_is_refused() {
        let api = ScriptedApi::new();
        let informer = informer(&api);
        tokio::spawn(informer.clone().run());
        tokio::task::yield_now().await;
        let second = timeout(Duration::from_secs(1), informer.clone().run()).await.expect("returns at once");
        assert!(matches!(second, Err(InformerError::AlreadyRunning { .. })));
    }

    #[test]
    fn backoff_doubles_from_800ms_to_a_30s_cap() {
        let backoff = WatchBackoff::default();
        let mut previous = None;
        let waits: Vec<u128> = (0..8)
            .map(|_| {
                let wait = backoff.next(previous);
                previous = Some(wait);
                wait.as_millis()
            })
            .collect();
        assert_eq!(waits, [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
    }
}
