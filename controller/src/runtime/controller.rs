//! A controller: one workqueue, N workers running a [`Reconciler`], and the event sources that fill the
//! queue (controller-runtime's `For`, `Owns` and `Watches`).
//!
//! Every source drops updates whose resourceVersion did not change (the global
//! `ResourceVersionChangedPredicate` of ARC-MODEL §1.1), then applies its own optional
//! [`UpdatePredicate`]; creates and deletes always pass. An update enqueues the keys mapped from both
//! the old and the new object, as controller-runtime's handlers do, in key order. Workers start once
//! every source's informer has synced; the queue guarantees one key is never reconciled by two workers
//! at once. A reconcile is traced in a debug span with the controller and key; its result is handled by
//! [`outcome`](super::outcome). A panicking reconcile is recovered and counted as an error with reason
//! `Panic` (controller-runtime's `RecoverPanic`), so one bad object cannot kill a worker.

use std::collections::BTreeSet;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::{mpsc, watch};
use tracing::Instrument;

use super::controller_ref::{controller_of, refers_to};
use super::informer::{Informer, InformerEvent, WatchedResource};
use super::metrics::{ACTIVE_WORKERS, Metrics};
use super::object_key::ObjectKey;
use super::outcome::{Outcome, ReconcileError, handle_result};
use super::predicate::{UpdatePredicate, resource_version_changed};
use super::rate_limiter::RateLimiter;
use super::workqueue::WorkQueue;

/// The logic a controller runs for one key. The key is all it gets: it reads current state from caches
/// and the API server, so a reconcile is level-based and may run any number of times.
pub trait Reconciler: Send + Sync + 'static {
    /// What a failed reconcile returns.
    type Error: ReconcileError;

    /// Brings the object under `key` towards its desired state.
    fn reconcile(&self, key: &ObjectKey) -> impl Future<Output = Result<Outcome, Self::Error>> + Send;
}

/// A reconcile that panicked, as an error.
#[derive(Debug, thiserror::Error)]
#[error("reconcile panicked: {message}")]
pub(crate) struct ReconcilePanic {
    /// The panic's message, when it was a string.
    pub message: String,
}

impl ReconcileError for ReconcilePanic {
    fn reason(&self) -> &'static str {
        "Panic"
    }
}

impl ReconcilePanic {
    fn from_payload(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|message| (*message).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".to_string());
        ReconcilePanic { message }
    }
}

/// Maps an object to the keys its events enqueue.
type KeyMapper<K> = Arc<dyn Fn(&K) -> Vec<ObjectKey> + Send + Sync>;

/// A subscribed source, waiting for the queue it will feed.
type PendingSource = Box<dyn FnOnce(WorkQueue<ObjectKey>, Metrics) -> BoxFuture<'static, ()> + Send>;

/// A controller under construction, then (through [`Controller::run`] or the manager) running.
pub struct Controller<R> {
    name: String,
    reconciler: Arc<R>,
    max_concurrent_reconciles: usize,
    queue: WorkQueue<ObjectKey>,
    metrics: Metrics,
    sources: Vec<PendingSource>,
    synced: Vec<watch::Receiver<bool>>,
}

impl<R> std::fmt::Debug for Controller<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("max_concurrent_reconciles", &self.max_concurrent_reconciles)
            .field("sources", &self.sources.len())
            .finish_non_exhaustive()
    }
}

impl<R: Reconciler> Controller<R> {
    /// A controller called `name` (its metric label and queue name) with one worker and
    /// controller-runtime's default rate limiter.
    pub fn new(name: &str, reconciler: Arc<R>, metrics: &Metrics) -> Self {
        Controller {
            name: name.to_string(),
            reconciler,
            max_concurrent_reconciles: 1,
            queue: WorkQueue::with_default_rate_limiter(name, metrics),
            metrics: metrics.clone(),
            sources: Vec::new(),
            synced: Vec::new(),
        }
    }

    /// Runs `workers` reconciles at once (at least one): `MaxConcurrentReconciles`.
    #[must_use]
    pub fn with_max_concurrent_reconciles(mut self, workers: usize) -> Self {
        self.max_concurrent_reconciles = workers.max(1);
        self
    }

    /// Retries through `rate_limiter` instead of the default. Replaces the queue, so call it before
    /// taking [`Controller::queue`] handles.
    #[must_use]
    pub fn with_rate_limiter(mut self, rate_limiter: impl RateLimiter<ObjectKey> + 'static) -> Self {
        self.queue = WorkQueue::new(&self.name, &self.metrics, rate_limiter);
        self
    }

    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A handle on the controller's queue.
    pub fn queue(&self) -> WorkQueue<ObjectKey> {
        self.queue.clone()
    }

    /// `For(K)`: every event on a `K` enqueues that object's own key.
    #[must_use]
    pub fn for_resource<K: WatchedResource>(self, informer: &Informer<K>) -> Self {
        let own_key: KeyMapper<K> = Arc::new(|object: &K| vec![ObjectKey::from_resource(object)]);
        self.source(informer, own_key, None)
    }

    /// `Owns(K)`: an event on a `K` enqueues its controller owner, when the ownerReference marked
    /// `controller: true` has this apiVersion and kind. Updates must also pass `predicate`, if given.
    #[must_use]
    pub fn owns<K: WatchedResource>(
        self,
        informer: &Informer<K>,
        owner_api_version: &str,
        owner_kind: &str,
        predicate: Option<UpdatePredicate<K>>,
    ) -> Self {
        let (api_version, kind) = (owner_api_version.to_string(), owner_kind.to_string());
        let owner_key: KeyMapper<K> = Arc::new(move |object: &K| {
            controller_of(object)
                .filter(|owner| refers_to(owner, &api_version, &kind))
                .map(|owner| {
                    ObjectKey::new(object.meta().namespace.clone().unwrap_or_default(), owner.name.clone())
                })
                .into_iter()
                .collect()
        });
        self.source(informer, owner_key, predicate)
    }

    /// `Watches(Z, mapper)`: an event on a `Z` enqueues the keys `mapper` returns. Updates must also pass
    /// `predicate`, if given.
    #[must_use]
    pub fn watches<Z: WatchedResource>(
        self,
        informer: &Informer<Z>,
        mapper: impl Fn(&Z) -> Vec<ObjectKey> + Send + Sync + 'static,
        predicate: Option<UpdatePredicate<Z>>,
    ) -> Self {
        self.source(informer, Arc::new(mapper), predicate)
    }

    fn source<K: WatchedResource>(
        mut self,
        informer: &Informer<K>,
        keys_of: KeyMapper<K>,
        predicate: Option<UpdatePredicate<K>>,
    ) -> Self {
        let events = informer.subscribe();
        self.synced.push(informer.synced_signal());
        self.sources.push(Box::new(move |queue, metrics| {
            forward_events(events, keys_of, predicate, queue, metrics).boxed()
        }));
        self
    }

    /// Every task the running controller needs: one per source, then one per worker. The manager spawns
    /// each on its own; [`Controller::run`] drives them together.
    pub(crate) fn into_tasks(self) -> Vec<BoxFuture<'static, ()>> {
        let mut tasks: Vec<BoxFuture<'static, ()>> = Vec::new();
        for source in self.sources {
            tasks.push(source(self.queue.clone(), self.metrics.clone()));
        }
        let worker = Arc::new(Worker {
            name: self.name,
            reconciler: self.reconciler,
            queue: self.queue,
            metrics: self.metrics,
        });
        for _ in 0..self.max_concurrent_reconciles {
            let (worker, synced) = (Arc::clone(&worker), self.synced.clone());
            tasks.push(async move { worker.run(synced).await }.boxed());
        }
        tasks
    }

    /// Runs the controller (sources and workers) on the current task until the future is dropped.
    pub async fn run(self) {
        futures::future::join_all(self.into_tasks()).await;
    }
}

/// Turns one informer's events into queue adds.
async fn forward_events<K: WatchedResource>(
    mut events: mpsc::UnboundedReceiver<InformerEvent<K>>,
    keys_of: KeyMapper<K>,
    predicate: Option<UpdatePredicate<K>>,
    queue: WorkQueue<ObjectKey>,
    metrics: Metrics,
) {
    let resource_version_changed = resource_version_changed::<K>();
    while let Some(event) = events.recv().await {
        let keys: BTreeSet<ObjectKey> = match &event {
            InformerEvent::Added(object) | InformerEvent::Deleted(object) => {
                keys_of(object).into_iter().collect()
            }
            InformerEvent::Updated { old, new } => {
                if !resource_version_changed.filter(old, new, &metrics) {
                    continue;
                }
                if predicate.as_ref().is_some_and(|predicate| !predicate.filter(old, new, &metrics)) {
                    continue;
                }
                keys_of(old).into_iter().chain(keys_of(new)).collect()
            }
        };
        for key in keys {
            queue.add(key);
        }
    }
}

/// What every worker of one controller shares.
/// Counts a reconcile in `controller_runtime_active_workers` for as long as it runs, including when it
/// is dropped mid-flight (a crash-like stop): the count then says how many reconciles were cut short.
struct ActiveWorker {
    metrics: Metrics,
    controller: String,
}

impl ActiveWorker {
    fn start(metrics: &Metrics, controller: &str) -> Self {
        metrics.add(ACTIVE_WORKERS, &[("controller", controller)], 1);
        ActiveWorker { metrics: metrics.clone(), controller: controller.to_string() }
    }
}

impl Drop for ActiveWorker {
    fn drop(&mut self) {
        self.metrics.add(ACTIVE_WORKERS, &[("controller", &self.controller)], -1);
    }
}

struct Worker<R> {
    name: String,
    reconciler: Arc<R>,
    queue: WorkQueue<ObjectKey>,
    metrics: Metrics,
}

impl<R: Reconciler> Worker<R> {
    /// Waits for the caches, then reconciles keys until the queue shuts down.
    async fn run(&self, synced: Vec<watch::Receiver<bool>>) {
        for mut signal in synced {
            // An informer dropped before syncing will never sync; its controller cannot start.
            if signal.wait_for(|synced| *synced).await.is_err() {
                tracing::error!(controller = %self.name, "an informer went away before syncing; worker stops");
                return;
            }
        }
        while let Some(key) = self.queue.get().await {
            let active = ActiveWorker::start(&self.metrics, &self.name);
            self.reconcile(&key).await;
            drop(active);
            self.queue.done(&key);
        }
    }

    async fn reconcile(&self, key: &ObjectKey) {
        let span = tracing::debug_span!("reconcile", controller = %self.name, key = %key);
        let attempt = async {
            tracing::debug!("Reconciling");
            AssertUnwindSafe(self.reconciler.reconcile(key)).catch_unwind().await
        };
        match attempt.instrument(span).await {
            Ok(Ok(outcome)) => handle_result(&self.name, key, Ok(outcome), &self.queue, &self.metrics),
            Ok(Err(error)) => handle_result(&self.name, key, Err(&error), &self.queue, &self.metrics),
            Err(payload) => {
                let panic = ReconcilePanic::from_payload(payload.as_ref());
                handle_result(&self.name, key, Err(&panic), &self.queue, &self.metrics);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Api;
    use kube::runtime::watcher;
    use serde_json::{Value, json};
    use tokio::time::{Instant, sleep};

    use super::*;
    use crate::runtime::metrics::{PREDICATE_DROPPED_TOTAL, RECONCILE_ERRORS_TOTAL, RECONCILE_TOTAL};
    use crate::runtime::predicate::RESOURCE_VERSION_CHANGED;
    use crate::runtime::testing::{Reply, ScriptedApi, config_map_list};

    #[derive(Debug, thiserror::Error)]
    #[error("boom")]
    struct Boom;

    impl ReconcileError for Boom {
        fn reason(&self) -> &'static str {
            "Boom"
        }
    }

    /// What the fake reconciler does on one call.
    enum Step {
        Return(Result<Outcome, Boom>),
        Panic,
        Sleep(Duration),
    }

    /// A reconciler that follows a script (then returns `Done`) and records when it ran for which key.
    struct ScriptedReconciler {
        steps: Mutex<VecDeque<Step>>,
        calls: Mutex<Vec<(u128, String)>>,
        start: Instant,
        in_flight: AtomicUsize,
        most_in_flight: AtomicUsize,
    }

    impl ScriptedReconciler {
        fn new(steps: impl IntoIterator<Item = Step>) -> Arc<Self> {
            Arc::new(ScriptedReconciler {
                steps: Mutex::new(steps.into_iter().collect()),
                calls: Mutex::new(Vec::new()),
                start: Instant::now(), // allow-nondeterminism: tokio clock, paused in the sim
                in_flight: AtomicUsize::new(0),
                most_in_flight: AtomicUsize::new(0),
            })
        }

        fn calls(&self) -> Vec<(u128, String)> {
            self.calls.lock().expect("calls").clone()
        }

        fn keys(&self) -> Vec<String> {
            self.calls().into_iter().map(|(_, key)| key).collect()
        }
    }

    impl Reconciler for ScriptedReconciler {
        type Error = Boom;

        async fn reconcile(&self, key: &ObjectKey) -> Result<Outcome, Boom> {
            self.calls.lock().expect("calls").push((self.start.elapsed().as_millis(), key.to_string()));
            let step = self.steps.lock().expect("steps").pop_front();
            match step {
                None => Ok(Outcome::Done),
                Some(Step::Return(result)) => result,
                Some(Step::Panic) => panic!("reconciler bug"),
                Some(Step::Sleep(duration)) => {
                    let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    self.most_in_flight.fetch_max(now, Ordering::SeqCst);
                    sleep(duration).await;
                    self.in_flight.fetch_sub(1, Ordering::SeqCst);
                    Ok(Outcome::Done)
                }
            }
        }
    }

    fn total(metrics: &Metrics, result: &str) -> i64 {
        metrics.get(RECONCILE_TOTAL, &[("controller", "c"), ("result", result)])
    }

    #[tokio::test(start_paused = true)]
    async fn each_outcome_requeues_as_controller_runtime_does() {
        let metrics = Metrics::new();
        let reconciler = ScriptedReconciler::new([
            Step::Return(Err(Boom)),
            Step::Return(Err(Boom)),
            Step::Return(Ok(Outcome::Requeue)),
            Step::Return(Ok(Outcome::RequeueAfter(Duration::from_secs(30)))),
            Step::Return(Ok(Outcome::Done)),
        ]);
        let controller = Controller::new("c", Arc::clone(&reconciler), &metrics);
        let queue = controller.queue();
        queue.add(ObjectKey::new("ns", "a"));
        tokio::spawn(controller.run());
        sleep(Duration::from_secs(120)).await;

        // Errors and Requeue back off 5, 10, 20 ms; RequeueAfter forgets and waits exactly 30 s.
        let times: Vec<u128> = reconciler.calls().into_iter().map(|(at, _)| at).collect();
        assert_eq!(times, [0, 5, 15, 35, 30_035]);
        assert_eq!(total(&metrics, "error"), 2);
        assert_eq!(total(&metrics, "requeue"), 1);
        assert_eq!(total(&metrics, "requeue_after"), 1);
        assert_eq!(total(&metrics, "success"), 1);
        assert_eq!(metrics.get(RECONCILE_ERRORS_TOTAL, &[("controller", "c"), ("reason", "Boom")]), 2);
        assert_eq!(queue.num_requeues(&ObjectKey::new("ns", "a")), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_reconcile_is_an_error_and_the_worker_lives_on() {
        let metrics = Metrics::new();
        let reconciler = ScriptedReconciler::new([Step::Panic]);
        let controller = Controller::new("c", Arc::clone(&reconciler), &metrics);
        controller.queue().add(ObjectKey::new("ns", "a"));
        tokio::spawn(controller.run());
        sleep(Duration::from_secs(1)).await;

        assert_eq!(reconciler.calls(), [(0, "ns/a".to_string()), (5, "ns/a".to_string())]);
        assert_eq!(metrics.get(RECONCILE_ERRORS_TOTAL, &[("controller", "c"), ("reason", "Panic")]), 1);
        assert_eq!(total(&metrics, "success"), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn workers_run_up_to_max_concurrent_reconciles_at_once() {
        let metrics = Metrics::new();
        let reconciler = ScriptedReconciler::new((0..3).map(|_| Step::Sleep(Duration::from_secs(1))));
        let controller =
            Controller::new("c", Arc::clone(&reconciler), &metrics).with_max_concurrent_reconciles(2);
        for name in ["a", "b", "c"] {
            controller.queue().add(ObjectKey::new("ns", name));
        }
        tokio::spawn(controller.run());
        sleep(Duration::from_secs(5)).await;

        let expected = [(0, "ns/a"), (0, "ns/b"), (1000, "ns/c")].map(|(at, key)| (at, key.to_string()));
        assert_eq!(reconciler.calls(), expected);
        assert_eq!(reconciler.most_in_flight.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_added_while_reconciling_is_reconciled_again_afterwards_never_alongside() {
        let metrics = Metrics::new();
        let reconciler = ScriptedReconciler::new((0..2).map(|_| Step::Sleep(Duration::from_secs(1))));
        let controller =
            Controller::new("c", Arc::clone(&reconciler), &metrics).with_max_concurrent_reconciles(2);
        let queue = controller.queue();
        queue.add(ObjectKey::new("ns", "a"));
        tokio::spawn(controller.run());
        sleep(Duration::from_millis(500)).await;
        queue.add(ObjectKey::new("ns", "a"));
        sleep(Duration::from_secs(5)).await;

        assert_eq!(reconciler.calls(), [(0, "ns/a".to_string()), (1000, "ns/a".to_string())]);
        assert_eq!(reconciler.most_in_flight.load(Ordering::SeqCst), 1);
    }

    const OWNER_API: &str = "actions.github.com/v1alpha1";

    /// A ConfigMap in `default` with a resourceVersion, optional controller owner, labels and data.
    fn object(name: &str, version: &str, owner: Option<(&str, &str)>, labels: Value, data: Value) -> Value {
        let owners: Vec<Value> = owner
            .map(|(kind, owner)| {
                json!({"apiVersion": OWNER_API, "kind": kind, "name": owner, "uid": "u", "controller": true})
            })
            .into_iter()
            .collect();
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": name, "namespace": "default", "resourceVersion": version,
                "ownerReferences": owners, "labels": labels,
            },
            "data": data,
        })
    }

    fn informer(api: &ScriptedApi) -> Informer<ConfigMap> {
        Informer::new(Api::namespaced(api.client(), "default"), watcher::Config::default())
    }

    fn data_changed() -> UpdatePredicate<ConfigMap> {
        UpdatePredicate::new("data", |old: &ConfigMap, new: &ConfigMap| old.data != new.data)
    }

    #[tokio::test(start_paused = true)]
    async fn owns_enqueues_the_controller_owner_for_updates_that_pass_both_filters() {
        let api = ScriptedApi::new();
        let child = |version: &str, data: Value| {
            object("pod", version, Some(("EphemeralRunner", "er-1")), json!({}), data)
        };
        api.push(config_map_list(
            "1",
            vec![
                child("1", json!({"k": "a"})),
                object("stray", "1", Some(("EphemeralRunnerSet", "ers")), json!({}), json!({})),
            ],
        ));
        let feed = api.push_open_watch();
        let informer = informer(&api);
        let metrics = Metrics::new();
        let reconciler = ScriptedReconciler::new([]);
        let controller = Controller::new("c", Arc::clone(&reconciler), &metrics).owns(
            &informer,
            OWNER_API,
            "EphemeralRunner",
            Some(data_changed()),
        );
        tokio::spawn(informer.clone().run());
        tokio::spawn(controller.run());
        sleep(Duration::from_secs(1)).await;

        feed.send("MODIFIED", child("1", json!({"k": "a"})));
        sleep(Duration::from_secs(1)).await;
        feed.send("MODIFIED", child("2", json!({"k": "a"})));
        sleep(Duration::from_secs(1)).await;
        feed.send("MODIFIED", child("3", json!({"k": "b"})));
        sleep(Duration::from_secs(1)).await;
        feed.send("DELETED", child("4", json!({"k": "b"})));
        sleep(Duration::from_secs(1)).await;

        // The list, the data change and the delete; not the repeat nor the data-free update.
        assert_eq!(reconciler.keys(), ["default/er-1", "default/er-1", "default/er-1"]);
        assert_eq!(metrics.get(PREDICATE_DROPPED_TOTAL, &[("predicate", RESOURCE_VERSION_CHANGED)]), 1);
        assert_eq!(metrics.get(PREDICATE_DROPPED_TOTAL, &[("predicate", "data")]), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn watches_enqueue_what_the_old_and_new_objects_map_to_and_controllers_share_an_informer() {
        let api = ScriptedApi::new();
        let labelled =
            |version: &str, target: &str| object("cm", version, None, json!({"target": target}), json!({}));
        api.push(config_map_list("1", vec![labelled("1", "t1")]));
        let feed = api.push_open_watch();
        let informer = informer(&api);
        let metrics = Metrics::new();
        let mapped = ScriptedReconciler::new([]);
        let by_label = |cm: &ConfigMap| {
            let target = cm.metadata.labels.as_ref().and_then(|labels| labels.get("target"));
            target.map(|target| ObjectKey::new("default", target.clone())).into_iter().collect()
        };
        let watching = Controller::new("m", Arc::clone(&mapped), &metrics).watches(&informer, by_label, None);
        let own = ScriptedReconciler::new([]);
        let owning = Controller::new("o", Arc::clone(&own), &metrics).for_resource(&informer);
        tokio::spawn(informer.clone().run());
        tokio::spawn(watching.run());
        tokio::spawn(owning.run());
        sleep(Duration::from_secs(1)).await;

        feed.send("MODIFIED", labelled("2", "t2"));
        sleep(Duration::from_secs(1)).await;

        assert_eq!(mapped.keys(), ["default/t1", "default/t1", "default/t2"]);
        assert_eq!(own.keys(), ["default/cm", "default/cm"]);
    }

    #[tokio::test(start_paused = true)]
    async fn workers_wait_for_their_informers_to_sync() {
        let api = ScriptedApi::new();
        api.push(Reply::TransportFailure);
        api.push(config_map_list("1", vec![]));
        let informer = informer(&api);
        let reconciler = ScriptedReconciler::new([]);
        let controller =
            Controller::new("c", Arc::clone(&reconciler), &Metrics::new()).for_resource(&informer);
        controller.queue().add(ObjectKey::new("default", "early"));
        tokio::spawn(informer.clone().run());
        tokio::spawn(controller.run());
        sleep(Duration::from_secs(5)).await;

        // The first list fails; the retry 800 ms later syncs the cache, and only then do workers start.
        assert_eq!(reconciler.calls(), [(800, "default/early".to_string())]);
    }
}
