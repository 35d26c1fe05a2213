//! How long a workqueue waits before handing an item back after a failure: client-go's rate limiters,
//! as controller-runtime configures them by default.
//!
//! - [`ItemExponentialFailureRateLimiter`]: per item, `base * 2^failures`, capped (5 ms doubling to 1000 s).
//! - [`BucketRateLimiter`]: one token bucket for all items (10 qps, burst 100). Each call reserves a token
//!   and returns how long until that token exists, as `rate.Limiter.Reserve().Delay()` does in Go.
//! - [`MaxOfRateLimiter`]: the longest wait of several limiters.
//!
//! [`default_controller_rate_limiter`] is the max of the first two; `typed_rate_limiter` (tests only) is the first
//! alone (ARC's `--workqueue-rate-limiter=typed_rate_limiter`). Time is `tokio::time::Instant`, so the
//! bucket refills in paused time exactly as it would in real time.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// Decides how long to wait before an item is retried, and remembers failures per item.
pub trait RateLimiter<T>: Send + Sync {
    /// The wait before `item` may be processed again; counts one more failure for it.
    fn when(&self, item: &T) -> Duration;
    /// Forgets `item`'s failures (it succeeded).
    fn forget(&self, item: &T);
    /// How many failures are counted for `item`.
    fn num_requeues(&self, item: &T) -> u32;
}

/// Per-item exponential backoff: the n-th failure in a row (from 0) waits `base * 2^n`, at most `max`.
#[derive(Debug)]
pub(crate) struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: Mutex<BTreeMap<T, u32>>,
}

impl<T: Ord> ItemExponentialFailureRateLimiter<T> {
    /// A limiter starting at `base` and capped at `max`.
    pub(crate) fn new(base: Duration, max: Duration) -> Self {
        ItemExponentialFailureRateLimiter { base, max, failures: Mutex::new(BTreeMap::new()) }
    }

    fn failures(&self) -> MutexGuard<'_, BTreeMap<T, u32>> {
        self.failures.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: Ord + Clone + Send> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exponent = {
            let mut failures = self.failures();
            let count = failures.entry(item.clone()).or_insert(0);
            let exponent = *count;
            *count = count.saturating_add(1);
            exponent
        };
        // 2^32 and beyond overflow the multiplier; the cap is long reached by then.
        let Some(multiplier) = 1u32.checked_shl(exponent) else {
            return self.max;
        };
        self.base.checked_mul(multiplier).map_or(self.max, |backoff| backoff.min(self.max))
    }

    fn forget(&self, item: &T) {
        self.failures().remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures().get(item).copied().unwrap_or(0)
    }
}

/// The bucket's level at the last reservation.
#[derive(Debug)]
struct Bucket {
    /// Tokens available at `last`; negative when reservations ran ahead of the refill.
    tokens: f64,
    /// When the bucket was last advanced; `None` until the first reservation (the bucket starts full).
    last: Option<Instant>,
}

/// A token bucket shared by all items: `qps` tokens a second, at most `burst` saved up.
#[derive(Debug)]
pub(crate) struct BucketRateLimiter {
    qps: f64,
    burst: f64,
    bucket: Mutex<Bucket>,
}

impl BucketRateLimiter {
    /// A full bucket refilling at `qps` tokens a second and holding at most `burst`.
    pub(crate) fn new(qps: f64, burst: u32) -> Self {
        BucketRateLimiter {
            qps,
            burst: f64::from(burst),
            bucket: Mutex::new(Bucket { tokens: 0.0, last: None }),
        }
    }

    /// Reserves one token now and returns the wait until it is available (`Reserve().Delay()`).
    fn reserve(&self) -> Duration {
        let now = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        let mut bucket = self.bucket.lock().unwrap_or_else(PoisonError::into_inner);
        let refilled = match bucket.last {
            None => self.burst,
            Some(last) => {
                let elapsed = now.saturating_duration_since(last).as_secs_f64();
                (bucket.tokens + elapsed * self.qps).min(self.burst)
            }
        };
        bucket.tokens = refilled - 1.0;
        bucket.last = Some(now);
        if bucket.tokens >= 0.0 || self.qps <= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(-bucket.tokens / self.qps)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }

    fn forget(&self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// The longest wait of several limiters; failures are counted and forgotten in all of them.
pub(crate) struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOfRateLimiter<T> {
    /// Combines `limiters`.
    pub(crate) fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> std::fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaxOfRateLimiter").field("limiters", &self.limiters.len()).finish()
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        // Every limiter is asked (each records the failure or reserves its token), then the longest wins.
        self.limiters.iter().map(|limiter| limiter.when(item)).fold(Duration::ZERO, Duration::max)
    }

    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters.iter().map(|limiter| limiter.num_requeues(item)).max().unwrap_or(0)
    }
}

/// Per-item backoff start in controller-runtime's default limiter.
pub(crate) const DEFAULT_ITEM_BASE_DELAY: Duration = Duration::from_millis(5);
/// Per-item backoff cap in controller-runtime's default limiter.
pub(crate) const DEFAULT_ITEM_MAX_DELAY: Duration = Duration::from_secs(1000);
/// Refill rate of the default shared bucket.
pub(crate) const DEFAULT_BUCKET_QPS: f64 = 10.0;
/// Size of the default shared bucket.
pub(crate) const DEFAULT_BUCKET_BURST: u32 = 100;

/// controller-runtime's default: the max of per-item exponential (5 ms doubling to 1000 s) and a shared
/// bucket of 10 qps with burst 100.
pub(crate) fn default_controller_rate_limiter<T: Ord + Clone + Send + 'static>() -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(DEFAULT_ITEM_BASE_DELAY, DEFAULT_ITEM_MAX_DELAY)),
        Box::new(BucketRateLimiter::new(DEFAULT_BUCKET_QPS, DEFAULT_BUCKET_BURST)),
    ])
}

/// ARC's `typed_rate_limiter`: the per-item exponential backoff alone (5 ms doubling to 1000 s). The
/// controller runs the default limiter; the queue tests use this one for its exact delays.
#[cfg(test)]
pub(crate) fn typed_rate_limiter<T: Ord + Clone + Send>() -> ItemExponentialFailureRateLimiter<T> {
    ItemExponentialFailureRateLimiter::new(DEFAULT_ITEM_BASE_DELAY, DEFAULT_ITEM_MAX_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn per_item_backoff_doubles_from_5ms_and_caps_at_1000s() {
        let limiter = typed_rate_limiter::<&str>();
        let delays: Vec<Duration> = (0..5).map(|_| limiter.when(&"a")).collect();
        assert_eq!(delays, [ms(5), ms(10), ms(20), ms(40), ms(80)]);
        assert_eq!(limiter.num_requeues(&"a"), 5);
        // 5 ms * 2^17 = 655.36 s is the last uncapped step; 2^18 would be 1310.72 s.
        let more: Vec<Duration> = (5..20).map(|_| limiter.when(&"a")).collect();
        assert_eq!(more[12], ms(655_360));
        assert_eq!(more[13], Duration::from_secs(1000));
        assert_eq!(more[14], Duration::from_secs(1000));
        for _ in 0..100 {
            limiter.when(&"a");
        }
        assert_eq!(limiter.when(&"a"), Duration::from_secs(1000));
    }

    #[test]
    fn per_item_backoff_is_per_item_and_forget_resets_it() {
        let limiter = typed_rate_limiter::<&str>();
        limiter.when(&"a");
        limiter.when(&"a");
        assert_eq!(limiter.when(&"b"), ms(5));
        limiter.forget(&"a");
        assert_eq!(limiter.num_requeues(&"a"), 0);
        assert_eq!(limiter.when(&"a"), ms(5));
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_allows_a_burst_of_100_then_spaces_calls_by_100ms() {
        let limiter = BucketRateLimiter::new(10.0, 100);
        for call in 0..100 {
            assert_eq!(RateLimiter::<()>::when(&limiter, &()), Duration::ZERO, "call {call}");
        }
        assert_eq!(RateLimiter::<()>::when(&limiter, &()), ms(100));
        assert_eq!(RateLimiter::<()>::when(&limiter, &()), ms(200));
        // Half a second refills five tokens; the bucket stood at -2, so the next reservation leaves it at
        // +2 and is free, and the fourth after that waits 100 ms again.
        tokio::time::advance(ms(500)).await;
        for _ in 0..3 {
            assert_eq!(RateLimiter::<()>::when(&limiter, &()), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<()>::when(&limiter, &()), ms(100));
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_never_saves_more_than_the_burst() {
        let limiter = BucketRateLimiter::new(10.0, 100);
        RateLimiter::<()>::when(&limiter, &());
        tokio::time::advance(Duration::from_secs(3600)).await;
        for _ in 0..100 {
            assert_eq!(RateLimiter::<()>::when(&limiter, &()), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<()>::when(&limiter, &()), ms(100));
    }

    #[tokio::test(start_paused = true)]
    async fn default_limiter_takes_the_longer_of_item_backoff_and_bucket() {
        let limiter = default_controller_rate_limiter::<u32>();
        assert_eq!(limiter.when(&0), ms(5));
        assert_eq!(limiter.when(&0), ms(10));
        // 98 more items drain the bucket (100 reservations so far).
        for item in 1..99 {
            assert_eq!(limiter.when(&item), ms(5));
        }
        // The 101st reservation waits 100 ms for its token, longer than item 200's first 5 ms.
        assert_eq!(limiter.when(&200), ms(100));
        assert_eq!(limiter.when(&0), ms(200));
        assert_eq!(limiter.num_requeues(&0), 3);
        limiter.forget(&0);
        assert_eq!(limiter.num_requeues(&0), 0);
    }
}
