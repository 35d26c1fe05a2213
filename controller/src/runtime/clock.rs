//! The clock seam: every wall-clock reading the controller makes goes through [`Clock`].
//!
//! Production uses [`SystemClock`]. A simulation passes its own implementation (arcsim's `SimClock`:
//! a fixed epoch plus tokio's paused elapsed time), so the same controller code sees simulated time
//! without knowing it. Waiting is done with `tokio::time`, which the simulation pauses and advances.

use std::sync::Arc;

use jiff::Timestamp;

/// A source of "now" for timestamps the controller writes or compares (failure backoff, token expiry,
/// registration-check intervals).
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// A shareable clock handle, as the controller's contexts hold it.
pub type SharedClock = Arc<dyn Clock>;

/// The real system clock, for production.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        #[allow(clippy::disallowed_methods)] // the one sanctioned wall-clock read: this is the clock seam
        Timestamp::now() // allow-nondeterminism: production clock seam
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_clock_moves_forward() {
        let clock = SystemClock;
        let a = clock.now();
        let b = clock.now();
        assert!(b >= a);
    }
}
