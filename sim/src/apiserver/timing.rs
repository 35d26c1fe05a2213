//! Serving latency around the commit.
//!
//! A request spends part of its serving time before it reaches the store (decoding, admission, the
//! trip to etcd) and part after (the trip back, encoding, the network to the client). A write is
//! therefore committed, and its watchers may hear of it, before the writer gets its answer. Per request
//! the total is drawn uniformly from [`ApiServerConfig::request_latency`](super::ApiServerConfig) (in
//! whole milliseconds, from the same stream and with the same draw as before the split existed), then
//! the commit point uniformly in `[0, total]` from a stream of its own: the part before is
//! `U{0..=total}` ms and the part after is the rest. Reads are split the same way (the read happens at
//! the split point). Simplification: both parts come from one range; kube-apiserver's real split
//! depends on etcd and the network.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::LagRange;

/// One request's serving time, split at the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Serving {
    /// From receiving the request to reaching the store.
    pub before_commit: Duration,
    /// From the store to the client holding the answer.
    pub after_commit: Duration,
}

impl Serving {
    /// Draws a request's total serving time from `range` with `total_rng`, and its commit point with
    /// `split_rng`.
    pub fn draw(range: LagRange, total_rng: &mut ChaCha8Rng, split_rng: &mut ChaCha8Rng) -> Self {
        if range.max_ms == 0 {
            return Serving::default();
        }
        let total = total_rng.random_range(range.min_ms..=range.max_ms);
        let before = split_rng.random_range(0..=total);
        Serving {
            before_commit: Duration::from_millis(before),
            after_commit: Duration::from_millis(total - before),
        }
    }

    /// The whole serving time.
    pub fn total(&self) -> Duration {
        self.before_commit + self.after_commit
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn the_parts_add_up_to_a_total_inside_the_range_and_both_vary() {
        let (mut total, mut split) = (ChaCha8Rng::seed_from_u64(3), ChaCha8Rng::seed_from_u64(4));
        let draws: Vec<Serving> =
            (0..200).map(|_| Serving::draw(LagRange::between(1, 4), &mut total, &mut split)).collect();
        assert!(draws.iter().all(|s| (1..=4).contains(&s.total().as_millis())));
        assert!(draws.iter().any(|s| s.before_commit.is_zero()));
        assert!(draws.iter().any(|s| s.after_commit.is_zero()));
        assert!(draws.iter().any(|s| !s.before_commit.is_zero() && !s.after_commit.is_zero()));
    }

    #[test]
    fn a_zero_range_takes_no_time_and_draws_nothing() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut untouched = rng.clone();
        assert_eq!(Serving::draw(LagRange::fixed(0), &mut rng.clone(), &mut rng), Serving::default());
        assert_eq!(rng.random::<u64>(), untouched.random::<u64>());
    }
}
