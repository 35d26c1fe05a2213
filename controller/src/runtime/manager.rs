//! The manager: owns the shared pieces (client, metrics, clock, cancellation) and runs every informer
//! and controller on the current tokio runtime.
//!
//! Informers are shared per type, as controller-runtime shares caches: the first registration of a type
//! creates it, later ones get the same informer. [`Manager::start`] spawns each informer and each
//! controller task (in registration order) on a [`JoinSet`]; anything registered after `start` is spawned
//! at once. Cancelling the token stops every task at its next poll, dropping in-flight reconciles: a
//! crash-like stop, which is what a simulated controller restart needs. Dropping the manager aborts the
//! tasks too.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::runtime::watcher;
use kube::{Api, Client};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::api::KubeApi;
use super::clock::SharedClock;
use super::controller::{Controller, Reconciler};
use super::informer::{Informer, WatchedResource};
use super::metrics::Metrics;
use super::tasks::{AsIs, SharedTaskWrap};

/// Runs informers and controllers together and stops them together.
pub struct Manager {
    client: Client,
    metrics: Metrics,
    clock: SharedClock,
    cancel: CancellationToken,
    /// One informer per resource type (a boxed `Informer<K>`, keyed by `K`'s `TypeId`).
    informers: BTreeMap<TypeId, Box<dyn Any + Send + Sync>>,
    /// Every informer's sync signal, in registration order.
    synced: Vec<watch::Receiver<bool>>,
    /// Tasks registered before `start`, in registration order.
    pending: Vec<BoxFuture<'static, ()>>,
    tasks: JoinSet<()>,
    /// How each task is run (as it is, unless the process was given a wrap).
    wrap: SharedTaskWrap,
    started: bool,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("informers", &self.informers.len())
            .field("started", &self.started)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager over `client`, counting in `metrics`, reading time from `clock`, with a fresh
    /// cancellation token.
    pub fn new(client: Client, metrics: Metrics, clock: SharedClock) -> Self {
        Manager {
            client,
            metrics,
            clock,
            cancel: CancellationToken::new(),
            informers: BTreeMap::new(),
            synced: Vec::new(),
            pending: Vec::new(),
            tasks: JoinSet::new(),
            wrap: AsIs::shared(),
            started: false,
        }
    }

    /// The manager, running each task through `wrap` (the process's [`Inputs::tasks`](crate::Inputs)).
    pub fn wrapping_tasks(mut self, wrap: SharedTaskWrap) -> Self {
        self.wrap = wrap;
        self
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The shared metrics registry.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The clock.
    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    /// The counted door for writes and uncached reads, over the manager's client and metrics.
    pub fn api(&self) -> KubeApi {
        KubeApi::new(self.client.clone(), &self.metrics)
    }

    /// The token whose cancellation stops everything the manager runs.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The shared informer for `K`. The first call for a type creates it over `api` and `config`
    /// (`Api::all` or `Api::namespaced` sets the scope); later calls return that same informer and
    /// ignore their arguments.
    pub fn informer<K: WatchedResource>(&mut self, api: Api<K>, config: watcher::Config) -> Informer<K> {
        let existing = self.informers.get(&TypeId::of::<K>());
        if let Some(informer) = existing.and_then(|informer| informer.downcast_ref::<Informer<K>>()) {
            return informer.clone();
        }
        let informer = Informer::new(api, config);
        self.informers.insert(TypeId::of::<K>(), Box::new(informer.clone()));
        self.synced.push(informer.synced_signal());
        let runner = informer.clone();
        self.add_task(
            async move {
                // `run` only ever returns an error: it watches until dropped.
                let Err(error) = runner.run().await;
                tracing::error!(error = %error, "informer stopped");
            }
            .boxed(),
        );
        informer
    }

    /// Adds a controller; it runs from [`Manager::start`] (or at once, if already started).
    pub fn add_controller<R: Reconciler>(&mut self, controller: Controller<R>) {
        for task in controller.into_tasks() {
            self.add_task(task);
        }
    }

    /// Spawns every registered informer and controller on the current runtime. Must be called inside a
    /// tokio runtime; a second call does nothing.
    pub fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        for task in std::mem::take(&mut self.pending) {
            self.spawn(task);
        }
    }

    /// Waits until every registered informer has applied its first list. Returns `false` if the manager
    /// was cancelled first.
    pub async fn wait_for_cache_sync(&self) -> bool {
        self.cache_sync().await
    }

    /// [`Manager::wait_for_cache_sync`] as a future that borrows nothing from the manager, so a task
    /// that must be `Send` can await it.
    pub fn cache_sync(&self) -> impl Future<Output = bool> + Send + 'static {
        let (signals, cancel) = (self.synced.clone(), self.cancel.clone());
        async move {
            let all_synced = async {
                for mut signal in signals {
                    if signal.wait_for(|synced| *synced).await.is_err() {
                        return false;
                    }
                }
                true
            };
            tokio::select! {
                biased;
                () = cancel.cancelled() => false,
                synced = all_synced => synced,
            }
        }
    }

    /// Cancels the token and waits until every task has stopped.
    pub async fn shutdown(&mut self) {
        self.cancel.cancel();
        while let Some(joined) = self.tasks.join_next().await {
            if let Err(error) = joined {
                tracing::error!(error = %error, "manager task failed");
            }
        }
    }

    /// Adds a task that runs from [`Manager::start`] (or at once, if already started) until the
    /// manager shuts down, as informers and controllers do.
    pub fn add_task(&mut self, task: BoxFuture<'static, ()>) {
        if self.started {
            self.spawn(task);
        } else {
            self.pending.push(task);
        }
    }

    fn spawn(&mut self, task: BoxFuture<'static, ()>) {
        let cancel = self.cancel.clone();
        self.tasks.spawn(
            self.wrap.wrap(
                async move {
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => {}
                        () = task => {}
                    }
                }
                .boxed(),
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use jiff::Timestamp;
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use tokio::time::{Instant, sleep, timeout};

    use super::*;
    use crate::runtime::clock::Clock;
    use crate::runtime::object_key::ObjectKey;
    use crate::runtime::outcome::{Outcome, ReconcileError};
    use crate::runtime::testing::{ScriptedApi, config_map, config_map_list};

    struct EpochClock;

    impl Clock for EpochClock {
        fn now(&self) -> Timestamp {
            Timestamp::UNIX_EPOCH
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("never")]
    struct Never;

    impl ReconcileError for Never {
        fn reason(&self) -> &'static str {
            "Never"
        }
    }

    /// Counts reconciles started and finished; each takes ten seconds.
    #[derive(Default)]
    struct Slow {
        started: AtomicUsize,
        finished: AtomicUsize,
    }

    impl Reconciler for Slow {
        type Error = Never;

        async fn reconcile(&self, _key: &ObjectKey) -> Result<Outcome, Never> {
            self.started.fetch_add(1, Ordering::SeqCst);
            sleep(Duration::from_secs(10)).await;
            self.finished.fetch_add(1, Ordering::SeqCst);
            Ok(Outcome::Done)
        }
    }

    fn manager(api: &ScriptedApi) -> Manager {
        Manager::new(api.client(), Metrics::new(), Arc::new(EpochClock))
    }

    #[tokio::test(start_paused = true)]
    async fn one_informer_is_shared_per_type() {
        let api = ScriptedApi::new();
        api.push(config_map_list("1", vec![config_map("a", "1")]));
        let mut manager = manager(&api);
        let first =
            manager.informer(Api::<ConfigMap>::all(manager.client().clone()), watcher::Config::default());
        let second = manager.informer(
            Api::<ConfigMap>::namespaced(manager.client().clone(), "x"),
            watcher::Config::default(),
        );
        manager.start();
        assert!(timeout(Duration::from_secs(60), manager.wait_for_cache_sync()).await.expect("in time"));
        assert_eq!(first.store().len(), 1);
        assert_eq!(second.store().len(), 1, "the second handle reads the same cache");
        let lists = api.seen().iter().filter(|request| !request.is_watch()).count();
        assert_eq!(lists, 1, "only one list for the type");
    }

    #[tokio::test(start_paused = true)]
    async fn cancelling_stops_everything_promptly_and_drops_in_flight_reconciles() {
        let api = ScriptedApi::new();
        api.push(config_map_list("1", vec![config_map("a", "1")]));
        let mut manager = manager(&api);
        let informer =
            manager.informer(Api::<ConfigMap>::all(manager.client().clone()), watcher::Config::default());
        let reconciler = Arc::new(Slow::default());
        let controller =
            Controller::new("c", Arc::clone(&reconciler), manager.metrics()).for_resource(&informer);
        manager.add_controller(controller);
        manager.start();
        assert!(manager.wait_for_cache_sync().await);
        sleep(Duration::from_secs(1)).await;
        assert_eq!(reconciler.started.load(Ordering::SeqCst), 1);

        let stop = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        manager.shutdown().await;
        assert_eq!(stop.elapsed(), Duration::ZERO, "no waiting for the reconcile to finish");
        sleep(Duration::from_secs(60)).await;
        assert_eq!(reconciler.finished.load(Ordering::SeqCst), 0, "the in-flight reconcile was dropped");
    }

    #[tokio::test(start_paused = true)]
    async fn cache_sync_gives_up_when_cancelled() {
        let api = ScriptedApi::new();
        let mut manager = manager(&api);
        manager.informer(Api::<ConfigMap>::all(manager.client().clone()), watcher::Config::default());
        manager.start();
        let token = manager.cancellation_token();
        tokio::spawn(async move {
            sleep(Duration::from_secs(5)).await;
            token.cancel();
        });
        let started = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        assert!(!manager.wait_for_cache_sync().await);
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn informers_registered_after_start_run_at_once() {
        let api = ScriptedApi::new();
        api.push(config_map_list("1", vec![]));
        let _config_map_watch = api.push_open_watch();
        api.push(crate::runtime::testing::Reply::Json(
            200,
            serde_json::json!({"apiVersion": "v1", "kind": "SecretList", "metadata": {"resourceVersion": "1"}, "items": []}),
        ));
        let mut manager = manager(&api);
        manager.informer(Api::<ConfigMap>::all(manager.client().clone()), watcher::Config::default());
        manager.start();
        sleep(Duration::from_secs(1)).await;
        let late = manager.informer(Api::<Secret>::all(manager.client().clone()), watcher::Config::default());
        assert!(timeout(Duration::from_secs(60), manager.wait_for_cache_sync()).await.expect("in time"));
        assert!(late.has_synced());
    }
}
