//! [`RateLimitMemory`]: when GitHub last refused the legacy controller a call for its rate limit.
//! GitHub's primary limit is an hourly budget, so for an hour after a refusal the controller counts
//! itself rationed: it then acts on what the cluster shows where that is enough to be safe
//! (`fixes.recreate_crashed_runner_with_stale_token`), rather than wait for calls it may not get.

use std::sync::Mutex;
use std::time::Duration;

use jiff::Timestamp;

/// How long after a refusal the controller counts itself rationed: GitHub's hourly window.
pub(super) const RATIONED_FOR: Duration = Duration::from_secs(3_600);

/// The last rate-limit refusal, shared by every reconcile of the process.
#[derive(Debug, Default)]
pub struct RateLimitMemory {
    last_refusal: Mutex<Option<Timestamp>>,
}

impl RateLimitMemory {
    /// Notes a refusal at `at`.
    pub fn refused(&self, at: Timestamp) {
        *self.last_refusal.lock().unwrap_or_else(|p| p.into_inner()) = Some(at);
    }

    /// Whether a refusal came within [`RATIONED_FOR`] before `now`.
    pub fn rationed(&self, now: Timestamp) -> bool {
        let last = *self.last_refusal.lock().unwrap_or_else(|p| p.into_inner());
        last.is_some_and(|at| now >= at && now.duration_since(at).unsigned_abs() < RATIONED_FOR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rationed_for_an_hour_after_the_last_refusal() {
        let memory = RateLimitMemory::default();
        let start = Timestamp::UNIX_EPOCH;
        assert!(!memory.rationed(start), "never refused");
        memory.refused(start);
        assert!(memory.rationed(start + jiff::SignedDuration::from_mins(59)));
        assert!(!memory.rationed(start + jiff::SignedDuration::from_mins(60)));
    }
}
