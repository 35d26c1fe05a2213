//! The in-process deterministic runtime: a current-thread tokio runtime with paused time (it jumps to
//! the next timer when every task waits) and tokio's own RNG drawn from the run's seed, so the same
//! seed wakes tasks in the same order in every process. Every in-process world runs on one of these
//! ([`run_seeded`]); a world on the turmoil network runs on turmoil's instead ([`crate::run_world_on_turmoil`]).

use std::future::Future;

use arc_sim::Seed;
use tokio::runtime::{Builder, RngSeed, Runtime};

/// A fresh deterministic runtime for the run of `seed`. Time only: an in-process world does no I/O,
/// and an I/O driver would poll epoll at every park.
pub fn seeded_runtime(seed: Seed) -> std::io::Result<Runtime> {
    Builder::new_current_thread().enable_time().start_paused(true).rng_seed(scheduler_seed(seed.0)).build()
}

/// Runs `body` to its end on a fresh [`seeded_runtime`] for `seed`.
pub fn run_seeded<F: Future>(seed: Seed, body: F) -> std::io::Result<F::Output> {
    Ok(seeded_runtime(seed)?.block_on(body))
}

/// tokio's own RNG (which `tokio::sync::watch` uses to spread receivers over its notifiers, deciding
/// the order they wake in, and unbiased `select!` its branch order) drawn from the run's seed:
/// otherwise tokio seeds it per process.
fn scheduler_seed(seed: u64) -> RngSeed {
    let mut bytes = b"tokio-scheduler:".to_vec();
    bytes.extend_from_slice(&seed.to_le_bytes());
    RngSeed::from_bytes(&bytes)
}

#[cfg(not(tokio_unstable))]
compile_error!(
    "arcsim seeds tokio's RNG from the run seed, which needs `--cfg tokio_unstable` (set in .cargo/config.toml); \
     a RUSTFLAGS environment variable replaces that file's flags, so add `--cfg tokio_unstable` to it"
);

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn time_is_paused_and_jumps_to_the_next_timer() {
        let slept = run_seeded(Seed(1), async {
            let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused here
            tokio::time::sleep(Duration::from_secs(3600)).await;
            start.elapsed()
        })
        .unwrap();
        assert_eq!(slept, Duration::from_secs(3600));
    }
}
