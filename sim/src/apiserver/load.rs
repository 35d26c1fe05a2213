//! Load: kube-apiserver's priority and fairness (APF) as the one priority level the world's clients
//! share with the cluster's other tenants (issue 42, item 7).
//!
//! **Production.** APF gives each priority level a number of seats (its share of the server's
//! `--max-requests-inflight` plus `--max-mutating-requests-inflight`). A request that finds no free seat
//! waits in a queue; one whose queue is full, or that waits past its limit (a quarter of the request
//! timeout, 15 s by default), is rejected: 429, `Retry-After: 1`, and the plain-text body "Too many
//! requests, please try again later." (`filters/maxinflight.go`'s `tooManyRequests`, which APF's filter
//! calls). A busy server also serves more slowly.
//!
//! **The world.** [`LoadConfig`]: `seats` and `queue_length` for the level, `max_wait_ms`, and the other
//! tenants as bursts that hold some of the seats for a while at seeded times ([`TenantBursts`], drawn
//! from the `apiserver-load` stream in order, whatever asks when), until an optional end. A request
//! dropped while it waits (its process killed) leaves the queue. A request of the world's clients
//! takes a seat for its whole serving time; while `k` of the `seats` are taken its serving time is
//! stretched by `1 + (k - 1) / seats`. Simplified: one queue for every client (no fair queuing between
//! flows, no shuffle sharding), every request is one seat wide, a watch takes no seat (APF holds one
//! only while a watch initializes), and the tenants' own requests neither queue nor are refused.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::LagRange;
use super::timing::Serving;
use crate::clock::SimClock;

/// The text APF answers a rejected request with (`http.Error` adds the newline).
pub const REJECTED_TEXT: &str = "Too many requests, please try again later.\n";
/// The `Retry-After` of a rejection, in seconds (`maxinflight.go`'s `retryAfter`).
pub const REJECTED_RETRY_AFTER_SECONDS: u32 = 1;

/// One priority level's capacity and the other tenants that use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadConfig {
    /// Requests the level executes at once.
    pub seats: u32,
    /// Requests that may wait for a seat; one more is rejected at once.
    pub queue_length: u32,
    /// How long a request may wait for a seat before it is rejected, in sim ms.
    pub max_wait_ms: u64,
    /// The other tenants.
    pub tenants: TenantBursts,
}

/// The other tenants of the level: quiet for `gap_ms`, then a burst holding 1 to `max_busy_seats`
/// seats for `length_ms`, again and again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantBursts {
    /// Quiet time before each burst.
    pub gap_ms: LagRange,
    /// How long a burst lasts.
    pub length_ms: LagRange,
    /// The most seats a burst holds.
    pub max_busy_seats: u32,
    /// No burst starts at or after this sim ms (the swarm's heal); absent: they go on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
}

/// Why a request was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The queue was full when it came.
    QueueFull,
    /// It waited `max_wait_ms` without a seat.
    WaitedTooLong,
}

impl Rejection {
    /// How the trace names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::QueueFull => "queue-full",
            Rejection::WaitedTooLong => "waited-too-long",
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Burst {
    start_ms: u64,
    end_ms: u64,
    seats: u32,
}

#[derive(Debug)]
struct Waiter {
    id: u64,
    notify: Arc<tokio::sync::Notify>,
}

#[derive(Debug)]
struct Level {
    config: LoadConfig,
    rng: ChaCha8Rng,
    /// Bursts drawn so far that have not ended before the last time asked (in order).
    bursts: VecDeque<Burst>,
    executing: u32,
    queue: VecDeque<Waiter>,
    granted: Vec<u64>,
    next_id: u64,
}

impl Level {
    /// Draws bursts until one starts after `now_ms`, and forgets those that ended before it.
    fn advance(&mut self, now_ms: u64) {
        while self.bursts.back().is_none_or(|b| b.start_ms <= now_ms) {
            let from = self.bursts.back().map_or(0, |b| b.end_ms);
            let t = self.config.tenants;
            let start_ms = from + self.rng.random_range(t.gap_ms.min_ms..=t.gap_ms.max_ms);
            let end_ms = start_ms + self.rng.random_range(t.length_ms.min_ms..=t.length_ms.max_ms);
            let seats = self.rng.random_range(1..=t.max_busy_seats.max(1));
            let seats = if t.until_ms.is_some_and(|until| start_ms >= until) { 0 } else { seats };
            self.bursts.push_back(Burst { start_ms, end_ms, seats });
        }
        while self.bursts.front().is_some_and(|b| b.end_ms <= now_ms) {
            self.bursts.pop_front();
        }
    }

    /// Seats the tenants hold at `now_ms` (after [`Level::advance`]).
    fn tenant_seats(&self, now_ms: u64) -> u32 {
        self.bursts.iter().filter(|b| b.start_ms <= now_ms && now_ms < b.end_ms).map(|b| b.seats).sum()
    }

    /// When the tenants' seats next change after `now_ms`.
    fn next_change_ms(&self, now_ms: u64) -> u64 {
        let edges = self.bursts.iter().flat_map(|b| [b.start_ms, b.end_ms]);
        edges.filter(|&e| e > now_ms).min().unwrap_or(u64::MAX)
    }

    fn free(&self, now_ms: u64) -> u32 {
        self.config.seats.saturating_sub(self.tenant_seats(now_ms) + self.executing)
    }

    /// Seats the head of the queue while any is free.
    fn dispatch(&mut self, now_ms: u64) {
        self.advance(now_ms);
        while self.free(now_ms) > 0 {
            let Some(head) = self.queue.pop_front() else { break };
            self.executing += 1;
            self.granted.push(head.id);
            head.notify.notify_one();
        }
    }

    fn take_grant(&mut self, id: u64) -> bool {
        let found = self.granted.iter().position(|g| *g == id);
        found.map(|i| self.granted.swap_remove(i)).is_some()
    }
}

/// A priority level shared by every request of one API server. Clones share it.
#[derive(Debug, Clone)]
pub struct LoadGate {
    level: Arc<Mutex<Level>>,
    clock: SimClock,
}

/// A seat held by a request; given back when dropped.
#[derive(Debug)]
pub struct Seat {
    gate: LoadGate,
    /// How long the request waited for it, in sim ms.
    pub waited_ms: u64,
    /// Seats taken, this one included, when it was given.
    pub taken: u32,
    seats: u32,
}

impl LoadGate {
    /// A level configured by `config`, its tenants drawn from `rng`.
    pub fn new(config: LoadConfig, rng: ChaCha8Rng, clock: SimClock) -> Self {
        let level = Level {
            config,
            rng,
            bursts: VecDeque::new(),
            executing: 0,
            queue: VecDeque::new(),
            granted: Vec::new(),
            next_id: 0,
        };
        LoadGate { level: Arc::new(Mutex::new(level)), clock }
    }

    fn lock(&self) -> MutexGuard<'_, Level> {
        self.level.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for a seat, or is rejected.
    pub async fn enter(&self) -> Result<Seat, Rejection> {
        let start_ms = self.clock.elapsed_ms();
        let (id, notify, deadline_ms) = {
            let mut level = self.lock();
            level.advance(start_ms);
            if level.queue.is_empty() && level.free(start_ms) > 0 {
                level.executing += 1;
                return Ok(self.seat(&level, start_ms, start_ms));
            }
            if level.queue.len() >= level.config.queue_length as usize {
                return Err(Rejection::QueueFull);
            }
            let id = level.next_id;
            level.next_id += 1;
            let notify = Arc::new(tokio::sync::Notify::new());
            level.queue.push_back(Waiter { id, notify: notify.clone() });
            (id, notify, start_ms + level.config.max_wait_ms)
        };
        let mut ticket = Ticket { gate: self, id, settled: false };
        loop {
            let now_ms = self.clock.elapsed_ms();
            let wake_ms = {
                let mut level = self.lock();
                level.dispatch(now_ms);
                if level.take_grant(id) {
                    ticket.settled = true;
                    return Ok(self.seat(&level, start_ms, now_ms));
                }
                if now_ms >= deadline_ms {
                    level.queue.retain(|w| w.id != id);
                    ticket.settled = true;
                    return Err(Rejection::WaitedTooLong);
                }
                level.next_change_ms(now_ms).min(deadline_ms)
            };
            let sleep = tokio::time::sleep(Duration::from_millis(wake_ms - now_ms));
            tokio::select! {
                () = notify.notified() => {}
                () = sleep => {}
            }
        }
    }

    fn seat(&self, level: &Level, start_ms: u64, now_ms: u64) -> Seat {
        Seat {
            gate: self.clone(),
            waited_ms: now_ms - start_ms,
            taken: level.tenant_seats(now_ms) + level.executing,
            seats: level.config.seats,
        }
    }
}

/// A request's place in the queue. A request dropped while it waits (its client gave up, its process
/// was killed) leaves the queue, and gives back a seat granted to it that it never took.
struct Ticket<'a> {
    gate: &'a LoadGate,
    id: u64,
    settled: bool,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let now_ms = self.gate.clock.elapsed_ms();
        let mut level = self.gate.lock();
        if level.take_grant(self.id) {
            level.executing -= 1;
            level.dispatch(now_ms);
        } else {
            level.queue.retain(|w| w.id != self.id);
        }
    }
}

impl Seat {
    /// `serving` as a server this busy takes: stretched by `1 + (taken - 1) / seats`.
    pub fn stretch(&self, serving: Serving) -> Serving {
        let (num, den) = (u64::from(self.seats + self.taken.saturating_sub(1)), u64::from(self.seats.max(1)));
        let scale = |d: Duration| Duration::from_millis(d.as_millis() as u64 * num / den);
        Serving { before_commit: scale(serving.before_commit), after_commit: scale(serving.after_commit) }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let now_ms = self.gate.clock.elapsed_ms();
        let mut level = self.gate.lock();
        level.executing -= 1;
        level.dispatch(now_ms);
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn gate(seats: u32, queue_length: u32, tenants: TenantBursts) -> LoadGate {
        let config = LoadConfig { seats, queue_length, max_wait_ms: 15_000, tenants };
        LoadGate::new(config, ChaCha8Rng::seed_from_u64(7), SimClock::start())
    }

    /// Tenants that never come (a first burst after a year).
    const NO_TENANTS: TenantBursts = TenantBursts {
        gap_ms: LagRange::fixed(365 * 24 * 3_600_000),
        length_ms: LagRange::fixed(1),
        max_busy_seats: 1,
        until_ms: None,
    };

    #[tokio::test(start_paused = true)]
    async fn requests_beyond_the_seats_queue_and_beyond_the_queue_are_rejected() {
        let gate = gate(2, 1, NO_TENANTS);
        let (a, b) = (gate.enter().await.unwrap(), gate.enter().await.unwrap());
        assert_eq!((a.waited_ms, b.taken), (0, 2));
        let queued = tokio::spawn({
            let gate = gate.clone();
            async move { gate.enter().await.map(|s| s.waited_ms) }
        });
        tokio::task::yield_now().await;
        assert_eq!(gate.enter().await.unwrap_err(), Rejection::QueueFull);
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(a);
        assert_eq!(queued.await.unwrap(), Ok(300), "seated when a seat came free");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_waiting_past_its_limit_is_rejected() {
        let gate = gate(1, 5, NO_TENANTS);
        let _held = gate.enter().await.unwrap();
        let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the test
        assert_eq!(gate.enter().await.unwrap_err(), Rejection::WaitedTooLong);
        assert_eq!(start.elapsed(), Duration::from_millis(15_000));
    }

    #[tokio::test(start_paused = true)]
    async fn tenants_take_seats_in_bursts_and_give_them_back() {
        let tenants = TenantBursts {
            gap_ms: LagRange::fixed(1_000),
            length_ms: LagRange::fixed(2_000),
            max_busy_seats: 1,
            until_ms: None,
        };
        let gate = gate(1, 5, tenants);
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let seat = gate.enter().await.unwrap();
        assert_eq!(seat.waited_ms, 1_500, "the burst of 1,000–3,000 ms held the only seat");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_dropped_while_it_waits_leaves_no_seat_taken() {
        let gate = gate(1, 5, NO_TENANTS);
        let held = gate.enter().await.unwrap();
        let waiting = tokio::spawn({
            let gate = gate.clone();
            async move { gate.enter().await.map(|s| s.waited_ms) }
        });
        tokio::task::yield_now().await;
        drop(held); // the seat goes to the waiting request…
        waiting.abort(); // …which is dropped before it takes it
        let _ = waiting.await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(gate.enter().await.unwrap().waited_ms, 0, "the seat came back");
    }

    #[test]
    fn serving_stretches_with_the_seats_taken() {
        let gate = gate(4, 0, NO_TENANTS);
        let seat = Seat { gate, waited_ms: 0, taken: 3, seats: 4 };
        let serving =
            Serving { before_commit: Duration::from_millis(8), after_commit: Duration::from_millis(4) };
        let stretched = seat.stretch(serving);
        std::mem::forget(seat);
        assert_eq!((stretched.before_commit.as_millis(), stretched.after_commit.as_millis()), (12, 6));
    }
}
