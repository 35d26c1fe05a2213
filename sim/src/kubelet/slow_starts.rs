//! Slow starts (issue 42, item 3; docs/windows.md): image pulls with a long tail, pulls that fail
//! (`ErrImagePull`, then `ImagePullBackOff` until the kubelet's image backoff lets it pull again), and
//! a runner's boot between its container starting and its session at GitHub (actions/runner's .NET
//! start, `config.sh` for a legacy runner, CreateSession). Off unless a world asks for it
//! ([`super::KubeletConfig::slow_starts`]); each pod draws its plan from a stream of its own
//! (`kubelet/pod/<uid>/start`), so a world with it on draws everything else as it did without.
//!
//! Simplified: every pod's first start draws its pull as a node without the image would (the one
//! node keeps no image cache; a restart in the same pod never pulls again); the boot is one seeded
//! wait, not calls over the fake GitHub's HTTP interface with their latency and faults.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::apiserver::LagRange;

/// The kubelet's image pull backoff: 10 s, doubling per failed pull, at most 300 s (`backOffPeriod`
/// and `MaxContainerBackOff` of pkg/kubelet).
pub const PULL_BACKOFF_INITIAL_MS: u64 = 10_000;
/// The cap of [`PULL_BACKOFF_INITIAL_MS`]'s doubling.
pub const PULL_BACKOFF_MAX_MS: u64 = 300_000;

/// How slowly the node's pods start. Percentages are of pods; durations are drawn per pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlowStarts {
    /// Percent of pods whose image pull is slow (a cold node, a throttled registry).
    pub slow_pull_percent: u8,
    /// How long a slow pull takes, on top of the usual start delay: drawn log-uniformly over the
    /// range, so most are near its low end and a few near its high end.
    pub slow_pull: LagRange,
    /// Percent of pods whose pull fails before it succeeds (`ErrImagePull`: a registry's 429 or 5xx).
    pub failed_pull_percent: u8,
    /// How many pulls fail in a row for such a pod, at most (1 to this, uniformly).
    pub max_failed_pulls: u32,
    /// How long a failed pull takes before the kubelet reports it.
    pub failed_pull: LagRange,
    /// A runner's boot: from its container running to its session at GitHub (uniform).
    pub runner_boot: LagRange,
}

/// What one pod's first start goes through before its container can run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PullPlan {
    /// Each failed pull: how long it took, then the backoff before the next try.
    pub failures: Vec<FailedPull>,
    /// The successful pull's extra time (zero unless slow).
    pub pull: Duration,
}

/// One failed pull.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailedPull {
    /// From the try to `ErrImagePull`.
    pub pulling: Duration,
    /// From `ErrImagePull` to the next try (`ImagePullBackOff` meanwhile).
    pub backoff: Duration,
}

impl SlowStarts {
    /// The pull plan of one pod, from its own stream `rng`.
    pub fn pull_plan(&self, rng: &mut ChaCha8Rng) -> PullPlan {
        let failing = rng.random_range(0..100u8) < self.failed_pull_percent;
        let count = if failing { rng.random_range(1..=self.max_failed_pulls.max(1)) } else { 0 };
        let failures = (0..count)
            .map(|n| FailedPull { pulling: super::draw(rng, self.failed_pull), backoff: pull_backoff(n) })
            .collect();
        let slow = rng.random_range(0..100u8) < self.slow_pull_percent;
        let pull = if slow { log_uniform(rng, self.slow_pull) } else { Duration::ZERO };
        PullPlan { failures, pull }
    }

    /// One runner process's boot, from the pod's stream `rng`.
    pub fn boot(&self, rng: &mut ChaCha8Rng) -> Duration {
        super::draw(rng, self.runner_boot)
    }
}

/// The image backoff after failed pull `n` (0-based): 10 s, 20 s, 40 s, … at most 300 s.
pub fn pull_backoff(n: u32) -> Duration {
    Duration::from_millis(PULL_BACKOFF_INITIAL_MS.saturating_mul(1 << n.min(16)).min(PULL_BACKOFF_MAX_MS))
}

/// A duration drawn log-uniformly over `range` (its low end at least 1 ms).
fn log_uniform(rng: &mut ChaCha8Rng, range: LagRange) -> Duration {
    let (low, high) = (range.min_ms.max(1) as f64, range.max_ms.max(range.min_ms).max(1) as f64);
    let exponent = rng.random_range(low.ln()..=high.ln());
    Duration::from_millis(exponent.exp().round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn slow() -> SlowStarts {
        SlowStarts {
            slow_pull_percent: 50,
            slow_pull: LagRange::between(10_000, 240_000),
            failed_pull_percent: 20,
            max_failed_pulls: 3,
            failed_pull: LagRange::between(1_000, 30_000),
            runner_boot: LagRange::between(2_000, 20_000),
        }
    }

    #[test]
    fn the_backoff_doubles_from_ten_seconds_to_five_minutes() {
        let secs: Vec<u64> = (0..7).map(|n| pull_backoff(n).as_secs()).collect();
        assert_eq!(secs, [10, 20, 40, 80, 160, 300, 300]);
        assert_eq!(pull_backoff(40).as_secs(), 300);
    }

    #[test]
    fn plans_keep_to_their_ranges_and_shares() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let plans: Vec<PullPlan> = (0..2_000).map(|_| slow().pull_plan(&mut rng)).collect();
        let slow_pulls: Vec<u64> =
            plans.iter().filter(|p| !p.pull.is_zero()).map(|p| p.pull.as_millis() as u64).collect();
        let failing = plans.iter().filter(|p| !p.failures.is_empty()).count();
        assert!((900..1_100).contains(&slow_pulls.len()), "{} slow", slow_pulls.len());
        assert!((320..480).contains(&failing), "{failing} failing");
        assert!(slow_pulls.iter().all(|ms| (10_000..=240_000).contains(ms)));
        assert!(plans.iter().all(|p| p.failures.len() <= 3));
        let under_a_minute = slow_pulls.iter().filter(|ms| **ms < 60_000).count();
        // log-uniform over 10–240 s: ln(6)/ln(24) ≈ 56% of slow pulls take under a minute
        assert!((500..625).contains(&(under_a_minute * 1_000 / slow_pulls.len())), "{under_a_minute}");
    }

    #[test]
    fn the_same_stream_draws_the_same_plan() {
        let draw = || slow().pull_plan(&mut ChaCha8Rng::seed_from_u64(42));
        assert_eq!(draw(), draw());
    }
}
