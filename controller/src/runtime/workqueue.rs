//! A rate-limited, delaying work queue with client-go's semantics.
//!
//! - An item is queued at most once however often it is added (it sits in the *dirty* set while queued).
//! - An item handed out by [`WorkQueue::get`] is *processing* until [`WorkQueue::done`]; it is never
//!   handed to a second worker meanwhile. An add during processing marks it dirty, and `done` queues it
//!   again.
//! - [`WorkQueue::add_after`] parks an item until a deadline; if the item is already parked, the earlier
//!   deadline wins, like client-go's waiting heap. Parked items move into the queue in deadline order
//!   (ties in the order they were parked) the moment any queue operation sees them due, and a worker
//!   waiting in `get` sleeps until the earliest deadline, so no timer task is needed.
//! - The queue is FIFO and every collection is ordered, so a run is reproducible.
//!
//! Time is `tokio::time`, so in a paused runtime deadlines pass exactly when the test says.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, sleep_until};

use super::metrics::{Metrics, WORKQUEUE_ADDS_TOTAL, WORKQUEUE_DEPTH, WORKQUEUE_RETRIES_TOTAL};
use super::rate_limiter::{RateLimiter, default_controller_rate_limiter};

/// The queue's bookkeeping, all under one lock.
struct QueueState<T> {
    /// Items ready to hand out, in order.
    queue: VecDeque<T>,
    /// Items that need processing: queued, or added again while processing.
    dirty: BTreeSet<T>,
    /// Items handed out and not yet `done`.
    processing: BTreeSet<T>,
    /// Parked items and their (deadline, sequence) slot in `parked_order`.
    parked: BTreeMap<T, (Instant, u64)>,
    /// Parked items by deadline, then by the order they were parked.
    parked_order: BTreeMap<(Instant, u64), T>,
    /// Sequence for the next parked item.
    next_parked_seq: u64,
    /// Set by `shut_down`: adds are ignored and `get` returns `None` once the queue is empty.
    shutting_down: bool,
}

impl<T> Default for QueueState<T> {
    fn default() -> Self {
        QueueState {
            queue: VecDeque::new(),
            dirty: BTreeSet::new(),
            processing: BTreeSet::new(),
            parked: BTreeMap::new(),
            parked_order: BTreeMap::new(),
            next_parked_seq: 0,
            shutting_down: false,
        }
    }
}

struct Shared<T> {
    name: String,
    metrics: Metrics,
    rate_limiter: Box<dyn RateLimiter<T>>,
    state: Mutex<QueueState<T>>,
    /// Woken whenever something may have become ready (an add, a `done`, an earlier deadline, shutdown).
    changed: Notify,
}

/// A handle on a work queue. Clones share the queue.
pub struct WorkQueue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for WorkQueue<T> {
    fn clone(&self) -> Self {
        WorkQueue { shared: Arc::clone(&self.shared) }
    }
}

impl<T> std::fmt::Debug for WorkQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkQueue").field("name", &self.shared.name).finish_non_exhaustive()
    }
}

impl<T: Ord + Clone + Send + 'static> WorkQueue<T> {
    /// A queue named `name` (the `name` label of its metrics) retrying through `rate_limiter`.
    pub fn new(name: &str, metrics: &Metrics, rate_limiter: impl RateLimiter<T> + 'static) -> Self {
        let shared = Shared {
            name: name.to_string(),
            metrics: metrics.clone(),
            rate_limiter: Box::new(rate_limiter),
            state: Mutex::new(QueueState::default()),
            changed: Notify::new(),
        };
        WorkQueue { shared: Arc::new(shared) }
    }

    /// A queue with controller-runtime's default rate limiter.
    pub fn with_default_rate_limiter(name: &str, metrics: &Metrics) -> Self {
        Self::new(name, metrics, default_controller_rate_limiter())
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Queues `item` unless it is already queued; while it is processing, marks it to be queued again
    /// at `done`. Ignored after shutdown.
    pub fn add(&self, item: T) {
        let mut state = self.lock();
        self.promote_due(&mut state, Instant::now()); // allow-nondeterminism: tokio clock, paused in the sim
        self.add_locked(&mut state, item);
    }

    /// Queues `item` once `delay` has passed (at once for a zero delay). An item already parked keeps
    /// the earlier of its two deadlines. Ignored after shutdown. Counted in `workqueue_retries_total`,
    /// as client-go's delaying queue counts every `AddAfter`.
    pub fn add_after(&self, item: T, delay: Duration) {
        let now = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        let mut state = self.lock();
        self.promote_due(&mut state, now);
        if state.shutting_down {
            return;
        }
        self.shared.metrics.inc(WORKQUEUE_RETRIES_TOTAL, &[("name", &self.shared.name)]);
        if delay.is_zero() {
            self.add_locked(&mut state, item);
            return;
        }
        let deadline = now + delay;
        if let Some(&(parked_deadline, seq)) = state.parked.get(&item) {
            if parked_deadline <= deadline {
                return;
            }
            state.parked_order.remove(&(parked_deadline, seq));
        }
        let seq = state.next_parked_seq;
        state.next_parked_seq += 1;
        state.parked.insert(item.clone(), (deadline, seq));
        state.parked_order.insert((deadline, seq), item);
        drop(state);
        // A worker may be sleeping until a later deadline.
        self.shared.changed.notify_waiters();
    }

    /// Queues `item` after the rate limiter's wait for it.
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.shared.rate_limiter.when(&item);
        self.add_after(item, delay);
    }

    /// Clears the rate limiter's failure count for `item`.
    pub fn forget(&self, item: &T) {
        self.shared.rate_limiter.forget(item);
    }

    /// How many rate-limited retries are counted for `item` since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.shared.rate_limiter.num_requeues(item)
    }

    /// Waits for the next item and marks it processing; the caller must call [`WorkQueue::done`] with it.
    /// Returns `None` once the queue is shut down and empty.
    pub async fn get(&self) -> Option<T> {
        loop {
            // Created before looking, so a change made after the look still wakes us.
            let changed = self.shared.changed.notified();
            let next_deadline = {
                let mut state = self.lock();
                self.promote_due(&mut state, Instant::now()); // allow-nondeterminism: tokio clock, paused in the sim
                if let Some(item) = state.queue.pop_front() {
                    state.dirty.remove(&item);
                    state.processing.insert(item.clone());
                    self.publish_depth(&state);
                    return Some(item);
                }
                if state.shutting_down {
                    return None;
                }
                state.parked_order.keys().next().map(|&(deadline, _)| deadline)
            };
            match next_deadline {
                Some(deadline) => tokio::select! {
                    biased;
                    () = changed => {}
                    () = sleep_until(deadline) => {}
                },
                None => changed.await,
            }
        }
    }

    /// Ends processing of `item`; queues it again if it was added meanwhile.
    pub fn done(&self, item: &T) {
        let mut state = self.lock();
        state.processing.remove(item);
        if state.dirty.contains(item) {
            state.queue.push_back(item.clone());
            self.publish_depth(&state);
            drop(state);
            self.shared.changed.notify_waiters();
        }
    }

    /// Stops the queue: later adds are ignored, parked items are dropped, and `get` returns `None` once
    /// the items already queued are handed out.
    pub fn shut_down(&self) {
        let mut state = self.lock();
        state.shutting_down = true;
        state.parked.clear();
        state.parked_order.clear();
        drop(state);
        self.shared.changed.notify_waiters();
    }

    /// Whether [`WorkQueue::shut_down`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.lock().shutting_down
    }

    /// How many items are queued and ready (not counting parked or processing ones).
    pub fn len(&self) -> usize {
        let mut state = self.lock();
        self.promote_due(&mut state, Instant::now()); // allow-nondeterminism: tokio clock, paused in the sim
        state.queue.len()
    }

    /// Whether no item is ready.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many items wait for a deadline.
    pub fn parked_len(&self) -> usize {
        self.lock().parked.len()
    }

    fn add_locked(&self, state: &mut QueueState<T>, item: T) {
        if state.shutting_down || state.dirty.contains(&item) {
            return;
        }
        self.shared.metrics.inc(WORKQUEUE_ADDS_TOTAL, &[("name", &self.shared.name)]);
        state.dirty.insert(item.clone());
        if state.processing.contains(&item) {
            return;
        }
        state.queue.push_back(item);
        self.publish_depth(state);
        self.shared.changed.notify_waiters();
    }

    /// Moves every parked item whose deadline has passed into the queue, earliest first.
    fn promote_due(&self, state: &mut QueueState<T>, now: Instant) {
        while let Some(entry) = state.parked_order.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let item = entry.remove();
            state.parked.remove(&item);
            self.add_locked(state, item);
        }
    }

    fn publish_depth(&self, state: &QueueState<T>) {
        let depth = i64::try_from(state.queue.len()).unwrap_or(i64::MAX);
        self.shared.metrics.set(WORKQUEUE_DEPTH, &[("name", &self.shared.name)], depth);
    }

    fn lock(&self) -> MutexGuard<'_, QueueState<T>> {
        self.shared.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::timeout;

    use super::*;
    use crate::runtime::rate_limiter::typed_rate_limiter;

    fn queue() -> (WorkQueue<&'static str>, Metrics) {
        let metrics = Metrics::new();
        (WorkQueue::new("q", &metrics, typed_rate_limiter()), metrics)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[tokio::test(start_paused = true)]
    async fn an_item_added_twice_is_queued_once() {
        let (q, metrics) = queue();
        q.add("a");
        q.add("b");
        q.add("a");
        assert_eq!(q.len(), 2);
        assert_eq!(metrics.get(WORKQUEUE_ADDS_TOTAL, &[("name", "q")]), 2);
        assert_eq!(metrics.get(WORKQUEUE_DEPTH, &[("name", "q")]), 2);
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(q.get().await, Some("b"));
        assert_eq!(metrics.get(WORKQUEUE_DEPTH, &[("name", "q")]), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn an_item_being_processed_is_not_handed_out_again_until_done() {
        let (q, _) = queue();
        q.add("a");
        assert_eq!(q.get().await, Some("a"));
        q.add("a");
        q.add("a");
        assert_eq!(q.len(), 0, "a processing item is only marked dirty");
        let second_worker = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(!second_worker.is_finished(), "no second worker may get `a` while it is processing");
        q.done(&"a");
        assert_eq!(second_worker.await.ok().flatten(), Some("a"));
        q.done(&"a");
        assert_eq!(q.len(), 0, "done without a further add does not requeue");
    }

    #[tokio::test(start_paused = true)]
    async fn parked_items_come_out_in_deadline_order_at_their_deadlines() {
        let (q, _) = queue();
        let start = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        q.add_after("a", ms(30));
        q.add_after("b", ms(10));
        q.add_after("c", ms(20));
        q.add_after("d", ms(20));
        assert_eq!(q.len(), 0);
        let mut seen = Vec::new();
        for _ in 0..4 {
            let item = q.get().await.expect("an item");
            seen.push((item, start.elapsed()));
        }
        assert_eq!(seen, [("b", ms(10)), ("c", ms(20)), ("d", ms(20)), ("a", ms(30))]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_earliest_pending_deadline_wins() {
        let (q, metrics) = queue();
        let start = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        q.add_after("a", ms(50));
        q.add_after("a", ms(10));
        q.add_after("a", ms(40));
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(start.elapsed(), ms(10));
        q.done(&"a");
        assert_eq!(q.parked_len(), 0);
        assert!(timeout(Duration::from_secs(60), q.get()).await.is_err(), "no second copy at 40 or 50 ms");
        assert_eq!(metrics.get(WORKQUEUE_RETRIES_TOTAL, &[("name", "q")]), 3, "every add_after counts");
    }

    #[tokio::test(start_paused = true)]
    async fn a_parked_item_already_queued_is_not_queued_twice() {
        let (q, metrics) = queue();
        q.add("a");
        q.add_after("a", ms(5));
        tokio::time::advance(ms(5)).await;
        assert_eq!(q.len(), 1);
        assert_eq!(metrics.get(WORKQUEUE_ADDS_TOTAL, &[("name", "q")]), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn rate_limited_adds_back_off_and_forget_resets_the_backoff() {
        let (q, metrics) = queue();
        let start = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        let mut delays = Vec::new();
        for _ in 0..3 {
            let before = start.elapsed();
            q.add_rate_limited("a");
            assert_eq!(q.get().await, Some("a"));
            q.done(&"a");
            delays.push(start.elapsed() - before);
        }
        assert_eq!(delays, [ms(5), ms(10), ms(20)]);
        assert_eq!(q.num_requeues(&"a"), 3);
        assert_eq!(metrics.get(WORKQUEUE_RETRIES_TOTAL, &[("name", "q")]), 3);
        q.forget(&"a");
        assert_eq!(q.num_requeues(&"a"), 0);
        let before = start.elapsed();
        q.add_rate_limited("a");
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(start.elapsed() - before, ms(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_worker_wakes_for_an_add_from_elsewhere() {
        let (q, _) = queue();
        let worker = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::time::sleep(ms(100)).await;
        q.add("late");
        assert_eq!(worker.await.ok().flatten(), Some("late"));
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_drains_what_is_queued_then_ends_every_worker() {
        let (q, _) = queue();
        q.add("a");
        q.add_after("parked", ms(10));
        let idle_worker = tokio::spawn({
            let q = q.clone();
            async move {
                let first = q.get().await;
                let second = q.get().await;
                (first, second)
            }
        });
        tokio::task::yield_now().await;
        q.shut_down();
        q.add("b");
        assert_eq!(idle_worker.await.ok(), Some((Some("a"), None)));
        assert!(q.is_shutting_down());
        assert_eq!(q.get().await, None);
        assert_eq!(q.parked_len(), 0);
    }
}
