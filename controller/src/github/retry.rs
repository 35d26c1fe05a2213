//! The HTTP retry policy: ARC's client sits on hashicorp's `retryablehttp`, and this is its default
//! policy without the randomness.
//!
//! A request is retried, up to [`RetryPolicy::max_retries`] times, when it got no answer (transport
//! error or timeout), a 429, or a 5xx other than 501. 4xx answers are final. The wait before retry `n`
//! (counting from 0) is `wait_min · 2ⁿ` capped at `wait_max`, except that a 429 or 503 carrying
//! `Retry-After: <seconds>` waits exactly that long. There is no jitter, so a simulated run stays
//! reproducible; waits go through `tokio::time`.

use std::time::Duration;

/// How the client retries one HTTP request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (retryablehttp default: 4).
    pub max_retries: u32,
    /// Wait before the first retry (retryablehttp default: 1 s).
    pub wait_min: Duration,
    /// Longest computed wait (ARC: 30 s).
    pub wait_max: Duration,
    /// Per-attempt timeout; must exceed the long poll (ARC: 5 min).
    pub request_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            wait_min: Duration::from_secs(1),
            wait_max: Duration::from_secs(30),
            request_timeout: Duration::from_secs(300),
        }
    }
}

/// What one attempt produced, as far as retrying is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// An answer with this status and, if present and numeric, its `Retry-After` seconds.
    Answered {
        /// Status code.
        status: u16,
        /// `Retry-After`, in seconds.
        retry_after_seconds: Option<u64>,
    },
    /// No answer: transport error or timeout.
    NoAnswer,
}

impl RetryPolicy {
    /// No retries at all (for tests of single attempts).
    pub fn none() -> Self {
        RetryPolicy { max_retries: 0, ..RetryPolicy::default() }
    }

    /// Whether a status is worth another attempt: 429, and 5xx except 501.
    pub fn is_retryable_status(status: u16) -> bool {
        status == 429 || (500..=599).contains(&status) && status != 501
    }

    /// The wait before retry number `retry` (0-based) after `outcome`, or `None` when the outcome is
    /// final or the retries are used up.
    pub fn wait_before_retry(&self, retry: u32, outcome: AttemptOutcome) -> Option<Duration> {
        if retry >= self.max_retries {
            return None;
        }
        match outcome {
            AttemptOutcome::NoAnswer => Some(self.backoff(retry)),
            AttemptOutcome::Answered { status, .. } if !Self::is_retryable_status(status) => None,
            AttemptOutcome::Answered { status: 429 | 503, retry_after_seconds: Some(seconds) } => {
                Some(Duration::from_secs(seconds))
            }
            AttemptOutcome::Answered { .. } => Some(self.backoff(retry)),
        }
    }

    /// `wait_min · 2^retry`, capped at `wait_max`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry).unwrap_or(u32::MAX);
        self.wait_min.checked_mul(factor).map_or(self.wait_max, |wait| wait.min(self.wait_max))
    }
}

pub(super) use crate::runtime::retry_after::retry_after_seconds;

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(status: u16) -> AttemptOutcome {
        AttemptOutcome::Answered { status, retry_after_seconds: None }
    }

    #[test]
    fn backoff_doubles_from_one_second_and_caps_at_thirty() {
        let policy = RetryPolicy { max_retries: 10, ..RetryPolicy::default() };
        let waits: Vec<u64> =
            (0..7).map(|n| policy.wait_before_retry(n, answered(500)).unwrap().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        assert_eq!(policy.backoff(40), Duration::from_secs(30));
    }

    #[test]
    fn only_transport_errors_429_and_5xx_but_501_are_retried_and_only_four_times() {
        let policy = RetryPolicy::default();
        for status in [429, 500, 502, 503, 504] {
            assert!(policy.wait_before_retry(0, answered(status)).is_some(), "{status}");
        }
        for status in [200, 204, 400, 401, 404, 409, 422, 501] {
            assert_eq!(policy.wait_before_retry(0, answered(status)), None, "{status}");
        }
        assert!(policy.wait_before_retry(3, AttemptOutcome::NoAnswer).is_some());
        assert_eq!(policy.wait_before_retry(4, AttemptOutcome::NoAnswer), None);
    }

    #[test]
    fn retry_after_is_honoured_on_429_and_503_only() {
        let policy = RetryPolicy::default();
        let with = |status| AttemptOutcome::Answered { status, retry_after_seconds: Some(7) };
        assert_eq!(policy.wait_before_retry(0, with(429)), Some(Duration::from_secs(7)));
        assert_eq!(policy.wait_before_retry(2, with(503)), Some(Duration::from_secs(7)));
        assert_eq!(policy.wait_before_retry(2, with(500)), Some(Duration::from_secs(4)));
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::RETRY_AFTER, "12".parse().unwrap());
        assert_eq!(retry_after_seconds(&headers), Some(12));
        headers.insert(http::header::RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after_seconds(&headers), None);
    }
}
