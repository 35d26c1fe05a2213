//! How long a runner goes on after its registration is removed while it polls for jobs, when the
//! service fails that poll with "Registration … was not found" (assumption
//! `removed-runner-poll=registration-not-found`). To actions/runner (v2.336.0) that is an error like
//! any other: `BrokerServer.GetRunnerMessageAsync` tries each poll 5 times, 5–15 s apart
//! (`RunnerService.RetryRequest`); `BrokerMessageListener.GetNextMessageAsync` waits 15–30 s after
//! each of the first five failed polls and 30–60 s after the next, and rethrows the tenth, so the
//! listener exits 2; `run-helper.sh` waits 5 s and `run.sh` starts it again; its CreateSession fails
//! (`invalid_client`, "the runner registration has been deleted"), it exits 1, which `run-helper.sh`
//! turns into 0. About 6.6 to 16.5 minutes in all. Simplified: each wait is uniform over its range
//! (the runner's `BackoffTimerHelper` also spreads it around the previous one).

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Polls that fail in a row before the listener gives up (`maxRetryCount`).
const FAILED_POLLS: u32 = 10;
/// Tries of one poll (`RetryRequest`'s `maxAttempts`).
const TRIES_PER_POLL: u32 = 5;
/// From the listener's exit 2 to its restart (`run-helper.sh`'s `safe_sleep.sh 5`).
const RELAUNCH_MS: u64 = 5_000;

/// From the first failed poll to the container's exit 0, drawn from `rng`.
pub fn retrying_for(rng: &mut ChaCha8Rng) -> Duration {
    let mut ms = RELAUNCH_MS;
    for poll in 1..=FAILED_POLLS {
        for _ in 1..TRIES_PER_POLL {
            ms += rng.random_range(5_000..=15_000);
        }
        ms += match poll {
            1..=5 => rng.random_range(15_000..=30_000),
            FAILED_POLLS => 0,
            _ => rng.random_range(30_000..=60_000),
        };
    }
    Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn a_runner_retries_between_six_and_a_half_and_seventeen_minutes() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let draws: Vec<u64> = (0..200).map(|_| retrying_for(&mut rng).as_millis() as u64).collect();
        // 10 polls × 4 waits of 5–15 s, 5 waits of 15–30 s, 4 of 30–60 s, and the 5 s relaunch.
        assert!(draws.iter().all(|ms| (400_000..=995_000).contains(ms)), "{draws:?}");
        let mean = draws.iter().sum::<u64>() / 200;
        assert!((650_000..=740_000).contains(&mean), "mean {mean} ms (695 s expected)");
    }
}
