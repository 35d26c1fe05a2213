//! A queue of work due after a seeded delay, for the fake's kube-controller-manager controllers (the
//! service-account and resource-quota controllers): work already queued is not queued twice, due work
//! comes out in (due time, arrival) order, and delays come from the controller's own seed stream.

use std::collections::BTreeMap;
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

use super::LagRange;

/// Work items keyed by when they are due.
pub struct DelayQueue<W> {
    queue: BTreeMap<(Instant, u64), W>,
    seq: u64,
    rng: ChaCha8Rng,
    delay: LagRange,
}

impl<W: PartialEq> DelayQueue<W> {
    /// An empty queue drawing delays in `delay` from `rng`.
    pub fn new(rng: ChaCha8Rng, delay: LagRange) -> Self {
        DelayQueue { queue: BTreeMap::new(), seq: 0, rng, delay }
    }

    /// Queues `work` after a seeded delay, unless it is already queued.
    pub fn enqueue(&mut self, work: W) {
        if self.queue.values().any(|w| *w == work) {
            return;
        }
        let range = self.delay;
        let ms = if range.max_ms == 0 { 0 } else { self.rng.random_range(range.min_ms..=range.max_ms) };
        self.seq += 1;
        let due = Instant::now() + Duration::from_millis(ms); // allow-nondeterminism: tokio clock, paused in the sim
        self.queue.insert((due, self.seq), work);
    }

    /// When the next work is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.queue.keys().next().map(|(due, _)| *due)
    }

    /// Takes the work due first.
    pub fn pop(&mut self) -> Option<W> {
        self.queue.pop_first().map(|(_, w)| w)
    }
}
