//! The watch cache: kube-apiserver's cacher, one per resource, following the store after a seeded delay.
//!
//! kube-apiserver serves most reads from a cache fed by a watch on etcd, not from etcd itself: lists
//! at resourceVersion `0` get whatever the cache holds now, lists with `resourceVersionMatch=NotOlderThan`
//! wait until the cache has reached the version asked for, and watches deliver a change only once the
//! cache has received it (`staging/src/k8s.io/apiserver/pkg/storage/cacher`). Here every committed
//! change reaches its resource's cache a seeded delay after the commit (drawn per change from
//! [`ApiServerConfig::watch_cache_lag`](super::ApiServerConfig::watch_cache_lag), and never before the
//! change before it, so each cache sees its resource's changes in order).
//!
//! A cache's resourceVersion is the newest version it has seen: its own resource's last change, or
//! any later version it has heard of (etcd's progress notifications; here, any change of any resource
//! that has reached its cache) as long as no change of its own resource at or below that version is
//! still on its way. Simplification: one progress stream for all caches.
//!
//! The caches live behind their own lock, fed by the store's commit hook under the server's state lock
//! (lock order: state, then cache; never the other way round).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use tokio::sync::Notify;

use super::registry::ResourceId;
use super::selector::Selectors;
use super::status::{self, ApiError};
use super::store::{Change, EventType, StoreKey};
use super::{LagRange, WatchCacheWindow, WatchLag};
use crate::clock::SimClock;

/// How long a read waits for the cache to reach the version it asked for (the cacher's
/// `blockTimeout`).
pub const BLOCK_TIMEOUT: Duration = Duration::from_secs(3);

/// A change on its way to its cache.
#[derive(Debug)]
struct Pending {
    visible_ms: u64,
    change: Arc<Change>,
}

/// The cache of one resource.
#[derive(Debug, Default)]
struct ResourceCache {
    objects: BTreeMap<StoreKey, Arc<Value>>,
    /// The resourceVersion of the last change applied.
    applied_rv: u64,
    /// Changes committed but not yet received, in resourceVersion order.
    pending: VecDeque<Pending>,
    /// When the newest pending change becomes visible (keeps the cache in order).
    last_visible_ms: u64,
    /// The changes a watch can resume over, `(rv, ms it reached the cache)`, when the cache keeps a
    /// window ([`WatchCacheWindow`]); `window_floor` is the resourceVersion evicted last.
    window: VecDeque<(u64, u64)>,
    window_floor: u64,
}

impl ResourceCache {
    /// Keeps `change` (reached at `at_ms`) in the window, then evicts what has aged out of it.
    fn keep(&mut self, change: &Change, at_ms: u64, window: &WatchCacheWindow) {
        self.window.push_back((change.rv, at_ms));
        while self.window.len() > window.lower_bound
            && self.window.front().is_some_and(|(_, ms)| ms + window.fresh_ms < at_ms)
        {
            let (rv, _) = self.window.pop_front().expect("a front");
            self.window_floor = rv;
        }
    }

    fn apply(&mut self, change: &Change) {
        match change.kind {
            EventType::Deleted => {
                self.objects.remove(&change.key);
            }
            // The key is copied only for an object the cache does not hold yet.
            EventType::Added | EventType::Modified => match self.objects.get_mut(&change.key) {
                Some(held) => *held = change.object.clone(),
                None => {
                    self.objects.insert(change.key.clone(), change.object.clone());
                }
            },
        }
        self.applied_rv = change.rv;
    }

    fn advance(&mut self, now_ms: u64, window: Option<&WatchCacheWindow>) {
        while self.pending.front().is_some_and(|p| p.visible_ms <= now_ms) {
            let p = self.pending.pop_front().expect("a front");
            self.apply(&p.change);
            if let Some(window) = window {
                self.keep(&p.change, p.visible_ms, window);
            }
        }
    }
}

/// What a cache hands out: its resourceVersion and the objects it holds (in store order).
#[derive(Debug, Clone)]
pub struct CacheView {
    /// The cache's resourceVersion.
    pub rv: u64,
    /// Its objects in the requested namespace, ordered by namespace and name.
    pub objects: Vec<Arc<Value>>,
    /// Changes of the requested scope committed to the store but not yet in the cache.
    pub behind: usize,
}

/// Every resource's watch cache.
pub struct WatchCaches {
    lag: WatchLag,
    plurals: Vec<String>,
    rng: ChaCha8Rng,
    caches: BTreeMap<ResourceId, ResourceCache>,
    /// Every change not yet visible to its cache: `(visible_ms, rv)`.
    in_flight: BTreeSet<(u64, u64)>,
    /// The newest resourceVersion any cache has received.
    progress_rv: u64,
    /// The window of changes a watch can resume over, if the caches keep one (otherwise resumes reach
    /// back as far as the store's history).
    window: Option<WatchCacheWindow>,
}

impl WatchCaches {
    /// Caches for the resources named `plurals` (indexed by [`ResourceId`]), lagging as `lag` says,
    /// with delays drawn from `rng`.
    pub fn new(lag: WatchLag, plurals: Vec<String>, rng: ChaCha8Rng) -> Self {
        WatchCaches {
            lag,
            plurals,
            rng,
            caches: BTreeMap::new(),
            in_flight: BTreeSet::new(),
            progress_rv: 0,
            window: None,
        }
    }

    /// These caches, keeping `window` of changes for watches to resume over.
    #[must_use]
    pub fn with_window(mut self, window: Option<WatchCacheWindow>) -> Self {
        self.window = window;
        self
    }

    /// The resourceVersion a watch of `resource` resuming from `rv` is too old for (410 Expired): the
    /// change evicted last from the cache's window, when `rv` is older (call
    /// [`advance`](Self::advance) first). `None` when the window reaches back to `rv`, or the caches
    /// keep none.
    pub fn expired_below(&self, resource: ResourceId, rv: u64) -> Option<u64> {
        self.window?;
        let floor = self.caches.get(&resource)?.window_floor;
        (rv < floor).then_some(floor)
    }

    /// A change committed at `now_ms`: it reaches its cache after a seeded delay.
    pub fn observe(&mut self, change: &Arc<Change>, now_ms: u64) {
        let range = self.lag_of(change.key.resource);
        let delay = draw(&mut self.rng, range);
        let cache = self.caches.entry(change.key.resource).or_default();
        let visible_ms = (now_ms + delay).max(cache.last_visible_ms);
        cache.last_visible_ms = visible_ms;
        cache.pending.push_back(Pending { visible_ms, change: change.clone() });
        self.in_flight.insert((visible_ms, change.rv));
        self.advance(now_ms);
    }

    /// Applies every change visible by `now_ms`. (`in_flight` holds every change some cache has
    /// pending, so when none of it is visible yet there is no cache to look at.)
    pub fn advance(&mut self, now_ms: u64) {
        let mut any_visible = false;
        while let Some(&(visible_ms, rv)) = self.in_flight.first() {
            if visible_ms > now_ms {
                break;
            }
            self.in_flight.pop_first();
            self.progress_rv = self.progress_rv.max(rv);
            any_visible = true;
        }
        debug_assert!(
            any_visible
                || self.caches.values().all(|c| c.pending.front().is_none_or(|p| p.visible_ms > now_ms)),
            "a change pending in a cache is in flight"
        );
        if any_visible {
            for cache in self.caches.values_mut() {
                cache.advance(now_ms, self.window.as_ref());
            }
        }
    }

    /// The resourceVersion of `resource`'s cache (call [`advance`](Self::advance) first).
    pub fn rv(&self, resource: ResourceId) -> u64 {
        let Some(cache) = self.caches.get(&resource) else { return self.progress_rv };
        let below_pending = cache.pending.front().map_or(u64::MAX, |p| p.change.rv - 1);
        cache.applied_rv.max(self.progress_rv.min(below_pending))
    }

    /// What `resource`'s cache holds at `now_ms` in `namespace` (all when `None`), and how many changes
    /// matching `selectors` there it has not received yet.
    pub fn view(
        &mut self,
        resource: ResourceId,
        namespace: Option<&str>,
        selectors: &Selectors,
        now_ms: u64,
    ) -> CacheView {
        self.advance(now_ms);
        let rv = self.rv(resource);
        let Some(cache) = self.caches.get(&resource) else {
            return CacheView { rv, objects: Vec::new(), behind: 0 };
        };
        let in_scope = |key: &StoreKey| namespace.is_none_or(|ns| key.namespace == ns);
        let objects = cache.objects.iter().filter(|(k, _)| in_scope(k)).map(|(_, o)| o.clone()).collect();
        let behind = cache
            .pending
            .iter()
            .filter(|p| in_scope(&p.change.key))
            .filter(|p| {
                selectors.matches(&p.change.object)
                    || p.change.old.as_deref().is_some_and(|old| selectors.matches(old))
            })
            .count();
        CacheView { rv, objects, behind }
    }

    /// When the change of `resource` at `rv` reaches the cache, if it has not yet.
    pub fn visible_at(&self, resource: ResourceId, rv: u64) -> Option<u64> {
        let cache = self.caches.get(&resource)?;
        let i = cache.pending.partition_point(|p| p.change.rv < rv);
        cache.pending.get(i).filter(|p| p.change.rv == rv).map(|p| p.visible_ms)
    }

    /// The next time any change reaches its cache, if one is on its way.
    pub fn next_visible_ms(&self) -> Option<u64> {
        self.in_flight.first().map(|(ms, _)| *ms)
    }

    fn lag_of(&self, resource: ResourceId) -> LagRange {
        self.plurals.get(resource).map_or(self.lag.default, |plural| self.lag.for_resource(plural))
    }
}

fn draw(rng: &mut ChaCha8Rng, range: LagRange) -> u64 {
    if range.max_ms == 0 { 0 } else { rng.random_range(range.min_ms..=range.max_ms.max(range.min_ms)) }
}

/// The caches and a wake-up for readers waiting on them; shared by the store's commit hook and the
/// request handlers.
pub struct CacheHandle {
    caches: Mutex<WatchCaches>,
    commits: Notify,
}

impl CacheHandle {
    /// Shares `caches`.
    pub fn new(caches: WatchCaches) -> Arc<Self> {
        Arc::new(CacheHandle { caches: Mutex::new(caches), commits: Notify::new() })
    }

    /// Locks the caches (after the state lock, if both are taken).
    pub fn lock(&self) -> MutexGuard<'_, WatchCaches> {
        self.caches.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Feeds a committed change and wakes the readers waiting for the cache to catch up.
    pub fn observe(&self, change: &Arc<Change>, now_ms: u64) {
        self.lock().observe(change, now_ms);
        self.commits.notify_waiters();
    }

    /// Resolves at the next commit.
    pub async fn next_commit(&self) {
        self.commits.notified().await;
    }
}

/// The cacher's `waitUntilFreshAndBlock`: resolves once `resource`'s cache has reached `min_rv` (at
/// once for 0), or after [`BLOCK_TIMEOUT`] of simulated time with 504 `Too large resource version`.
pub async fn wait_until_fresh(
    handle: &CacheHandle,
    clock: SimClock,
    resource: ResourceId,
    min_rv: u64,
) -> Result<(), ApiError> {
    let deadline = tokio::time::Instant::now() + BLOCK_TIMEOUT; // allow-nondeterminism: tokio clock, paused in the sim
    loop {
        let (rv, next_ms) = {
            let mut caches = handle.lock();
            caches.advance(clock.elapsed_ms());
            (caches.rv(resource), caches.next_visible_ms())
        };
        if rv >= min_rv {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            // allow-nondeterminism: tokio clock, paused in the sim
            return Err(status::too_large_resource_version(min_rv, rv));
        }
        let wake = next_ms.map_or(deadline, |ms| clock.instant_at(Duration::from_millis(ms)).min(deadline));
        tokio::select! {
            biased;
            () = tokio::time::sleep_until(wake) => {}
            () = handle.next_commit() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use serde_json::json;

    use super::*;

    fn change(rv: u64, resource: ResourceId, name: &str, kind: EventType) -> Arc<Change> {
        let key = StoreKey { resource, namespace: "ns".into(), name: name.into() };
        let object = Arc::new(json!({"metadata": {"name": name, "resourceVersion": rv.to_string()}}));
        Arc::new(Change { rv, kind, key, object, old: None, wire: Default::default() })
    }

    fn caches(min_ms: u64, max_ms: u64) -> WatchCaches {
        let lag = WatchLag { default: LagRange::between(min_ms, max_ms), per_resource: BTreeMap::new() };
        WatchCaches::new(lag, vec!["pods".into(), "secrets".into()], ChaCha8Rng::seed_from_u64(1))
    }

    fn names(view: &CacheView) -> Vec<String> {
        view.objects.iter().map(|o| o["metadata"]["name"].as_str().unwrap().to_string()).collect()
    }

    #[test]
    fn a_change_reaches_the_cache_after_its_delay() {
        let mut c = caches(100, 100);
        c.observe(&change(1, 0, "a", EventType::Added), 0);
        let all = Selectors::default();
        let early = c.view(0, None, &all, 99);
        assert_eq!((early.rv, names(&early), early.behind), (0, vec![], 1));
        let late = c.view(0, None, &all, 100);
        assert_eq!((late.rv, names(&late), late.behind), (1, vec!["a".to_string()], 0));
        c.observe(&change(2, 0, "a", EventType::Deleted), 200);
        assert_eq!(names(&c.view(0, None, &all, 299)), ["a"]);
        assert!(c.view(0, None, &all, 300).objects.is_empty());
    }

    #[test]
    fn changes_stay_in_order_and_other_resources_move_the_version_forward() {
        let mut c = caches(0, 50);
        for rv in 1..=20 {
            c.observe(&change(rv, (rv % 2) as usize, &format!("o{rv}"), EventType::Added), rv * 3);
        }
        let mut last = 0;
        for rv in (2..=20).step_by(2) {
            let at = c.visible_at(0, rv).unwrap_or(0);
            assert!(at >= last, "pods changes become visible in order");
            last = at;
        }
        c.advance(10_000);
        assert_eq!((c.rv(0), c.rv(1)), (20, 20), "progress carries both caches to the newest version");
        assert_eq!(c.next_visible_ms(), None);
    }

    #[test]
    fn progress_never_skips_a_change_still_on_its_way() {
        let mut c = caches(0, 0);
        c.lag.per_resource.insert("pods".into(), LagRange::fixed(1_000));
        c.observe(&change(1, 0, "slow", EventType::Added), 0);
        c.observe(&change(2, 1, "fast", EventType::Added), 0);
        c.advance(10);
        assert_eq!((c.rv(0), c.rv(1)), (0, 2));
        assert_eq!(c.visible_at(0, 1), Some(1_000));
        c.advance(1_000);
        assert_eq!(c.rv(0), 2);
    }
}
