//! Simulated time: a fixed epoch plus the elapsed time of tokio's paused clock.
//!
//! Every run executes on a current-thread tokio runtime started with paused time, so `tokio::time`
//! advances only when every task is idle, straight to the next timer. [`SimClock`] turns that elapsed
//! time into wall-clock timestamps for objects and, through the world, for the controller's clock seam.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tokio::time::{Instant, sleep_until};

/// The wall-clock instant every simulation starts at (2026-01-01T00:00:00Z).
pub const DEFAULT_EPOCH_SECONDS: i64 = 1_767_225_600;

/// Sleeps until `deadline`, or forever when there is none. The timer is made when first polled: a
/// `select!` evaluates a disabled branch's future on every turn of its loop, and a `Sleep` made there
/// takes the runtime's handle for nothing. (A timer never polled is never registered, so whether one
/// is made changes no wake-up.)
pub async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The simulated clock of one run. Cheap to copy; all copies agree.
#[derive(Debug, Clone, Copy)]
pub struct SimClock {
    epoch: Timestamp,
    source: Source,
}

/// Where elapsed time is read.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// The run's one paused tokio runtime, from this instant.
    Tokio(Instant),
    /// Turmoil's simulated time (the turmoil network backend: one runtime per host, each with its own
    /// tokio instants, stepped in lockstep).
    Turmoil,
}

impl SimClock {
    /// Starts a clock at [`DEFAULT_EPOCH_SECONDS`]. Must be called inside the run's runtime, whose
    /// paused tokio clock it reads.
    pub fn start() -> Self {
        Self::start_at(Timestamp::from_second(DEFAULT_EPOCH_SECONDS).expect("epoch is in range"))
    }

    /// Starts a clock whose "now" is `epoch`.
    pub fn start_at(epoch: Timestamp) -> Self {
        SimClock { epoch, source: Source::Tokio(Instant::now()) } // allow-nondeterminism: tokio clock, paused in every run
    }

    /// A clock at [`DEFAULT_EPOCH_SECONDS`] reading turmoil's simulated time since the simulation
    /// began; read outside a turmoil host (which has no time), it says zero.
    pub fn turmoil() -> Self {
        let epoch = Timestamp::from_second(DEFAULT_EPOCH_SECONDS).expect("epoch is in range");
        SimClock { epoch, source: Source::Turmoil }
    }

    /// Simulated time since the run began.
    pub fn elapsed(&self) -> Duration {
        match self.source {
            Source::Tokio(start) => Instant::now().saturating_duration_since(start), // allow-nondeterminism: tokio clock, paused in every run
            Source::Turmoil => turmoil::sim_elapsed().unwrap_or_default(),
        }
    }

    /// Simulated milliseconds since the run began: the stamp on every trace line.
    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The simulated wall-clock time: the epoch plus the elapsed time.
    pub fn now(&self) -> Timestamp {
        let elapsed = SignedDuration::try_from(self.elapsed()).unwrap_or(SignedDuration::MAX);
        self.epoch.saturating_add(elapsed).expect("saturating add of a non-calendar span")
    }

    /// The epoch this clock started at.
    pub fn epoch(&self) -> Timestamp {
        self.epoch
    }

    /// The tokio instant corresponding to `elapsed` after the start, for timers.
    /// Under turmoil, in the runtime of the calling host.
    pub fn instant_at(&self, elapsed: Duration) -> Instant {
        match self.source {
            Source::Tokio(start) => start + elapsed,
            Source::Turmoil => {
                let now = Instant::now(); // allow-nondeterminism: tokio clock, paused in every host
                let current = self.elapsed();
                match elapsed.checked_sub(current) {
                    Some(ahead) => now + ahead,
                    None => now.checked_sub(current - elapsed).unwrap_or(now),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn now_is_epoch_plus_paused_elapsed_time() {
        let clock = SimClock::start();
        assert_eq!(clock.now().as_second(), DEFAULT_EPOCH_SECONDS);
        tokio::time::sleep(Duration::from_secs(90)).await;
        assert_eq!(clock.elapsed_ms(), 90_000);
        assert_eq!(clock.now().as_second(), DEFAULT_EPOCH_SECONDS + 90);
    }
}
