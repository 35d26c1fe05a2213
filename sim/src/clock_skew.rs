//! A party's own clock: [`ClockSkew`] is how far one party's wall clock (the API server's, the node's,
//! a controller process's) reads from the world's true time, as a fixed offset plus a drift that grows
//! with the run; [`PartyClock`] is the simulated clock read through it. Every expiry check and every
//! timestamp a party writes reads its own clock, so skew between parties moves the moments their
//! decisions disagree, as it does between production's machines.
//!
//! Only wall-clock readings are skewed: timers and timeouts run on the shared simulated time, as a
//! process's monotonic clock does (a simplification: a drifting node's timers drift too).

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::clock::SimClock;

/// How far a party's wall clock reads from true time: `offset_ms` at the start, plus `drift_ppm`
/// millionths of the time elapsed since (positive: ahead, or running fast).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClockSkew {
    /// Milliseconds ahead of true time at the start (negative: behind).
    pub offset_ms: i64,
    /// Parts per million the clock gains (negative: loses) as time passes.
    pub drift_ppm: i64,
}

impl ClockSkew {
    /// A clock that reads true time.
    pub const NONE: ClockSkew = ClockSkew { offset_ms: 0, drift_ppm: 0 };

    /// Whether this clock reads true time (serde skips such a skew).
    pub fn is_none(&self) -> bool {
        *self == Self::NONE
    }

    /// Milliseconds this clock reads ahead of true time once `elapsed_ms` have passed.
    pub fn ahead_ms(&self, elapsed_ms: u64) -> i64 {
        let elapsed = i64::try_from(elapsed_ms).unwrap_or(i64::MAX);
        self.offset_ms.saturating_add(elapsed.saturating_mul(self.drift_ppm) / 1_000_000)
    }
}

impl std::fmt::Display for ClockSkew {
    /// `+2.300 s +50 ppm` (the drift left out when there is none).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.offset_ms < 0 { '-' } else { '+' };
        let ms = self.offset_ms.unsigned_abs();
        write!(f, "{sign}{}.{:03} s", ms / 1000, ms % 1000)?;
        if self.drift_ppm != 0 {
            write!(f, " {:+} ppm", self.drift_ppm)?;
        }
        Ok(())
    }
}

/// The simulated clock as one party reads it.
#[derive(Debug, Clone, Copy)]
pub struct PartyClock {
    clock: SimClock,
    skew: ClockSkew,
}

impl PartyClock {
    /// `clock` read through `skew`.
    pub fn new(clock: SimClock, skew: ClockSkew) -> Self {
        PartyClock { clock, skew }
    }

    /// The party's wall-clock time now: true time plus its skew.
    pub fn now(&self) -> Timestamp {
        let ahead = SignedDuration::from_millis(self.skew.ahead_ms(self.clock.elapsed_ms()));
        let now = self.clock.now();
        now.checked_add(ahead).unwrap_or(now)
    }
}

impl From<SimClock> for PartyClock {
    /// A party whose clock reads true time.
    fn from(clock: SimClock) -> Self {
        PartyClock::new(clock, ClockSkew::NONE)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::clock::DEFAULT_EPOCH_SECONDS;

    #[tokio::test(start_paused = true)]
    async fn a_party_clock_reads_true_time_plus_its_offset_and_drift() {
        let clock = SimClock::start();
        let behind = PartyClock::new(clock, ClockSkew { offset_ms: -2_000, drift_ppm: 100 });
        let exact = PartyClock::new(clock, ClockSkew::NONE);
        assert_eq!(behind.now().as_millisecond(), DEFAULT_EPOCH_SECONDS * 1000 - 2_000);
        tokio::time::sleep(Duration::from_secs(10_000)).await;
        // 10,000 s at +100 ppm gains 1 s: 2 s behind at the start, 1 s behind now.
        assert_eq!(behind.now().as_millisecond(), (DEFAULT_EPOCH_SECONDS + 10_000) * 1000 - 1_000);
        assert_eq!(exact.now(), clock.now());
    }

    #[test]
    fn the_skew_prints_signed_and_reads_back() {
        let skew = ClockSkew { offset_ms: 1_500, drift_ppm: -20 };
        assert_eq!(skew.to_string(), "+1.500 s -20 ppm");
        assert_eq!(ClockSkew { offset_ms: -12, drift_ppm: 0 }.to_string(), "-0.012 s", "no drift, none told");
        let json = serde_json::to_string(&skew).unwrap();
        assert_eq!(serde_json::from_str::<ClockSkew>(&json).unwrap(), skew);
        assert!(ClockSkew::NONE.is_none() && !skew.is_none());
    }
}
