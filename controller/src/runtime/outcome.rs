//! What a reconcile returns and what the controller does with it (ARC-MODEL §1.1, "Result handling").
//!
//! | reconcile returns        | the key is …                                               | `result` label  |
//! |--------------------------|------------------------------------------------------------|-----------------|
//! | `Ok(RequeueAfter(d > 0))`| forgotten by the rate limiter, then added again after `d`  | `requeue_after` |
//! | `Ok(Requeue)`            | added through the rate limiter                             | `requeue`       |
//! | `Err(e)`                 | logged as "Reconciler error", added through the rate limiter | `error`       |
//! | `Ok(Done)`               | forgotten by the rate limiter                              | `success`       |
//!
//! As in controller-runtime, `RequeueAfter(0)` counts as `Done`. Errors also count in
//! `controller_runtime_reconcile_errors_total{controller, reason}`, with the reason the error gives
//! through [`ReconcileError`].

use std::time::Duration;

use super::metrics::{Metrics, RECONCILE_ERRORS_TOTAL, RECONCILE_TOTAL};
use super::object_key::ObjectKey;
use super::workqueue::WorkQueue;

/// A successful reconcile's request to the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing more to do until the next event.
    Done,
    /// Reconcile again after this delay (the rate limiter's memory of failures is cleared).
    RequeueAfter(Duration),
    /// Reconcile again after the rate limiter's backoff.
    Requeue,
}

/// A reconcile error that can say, in one short word, why it happened (`AlreadyExists`, `Conflict`, …):
/// the `reason` label of the error counter.
pub trait ReconcileError: std::error::Error + Send + Sync + 'static {
    /// A short, stable reason for metrics.
    fn reason(&self) -> &'static str;
}

/// The `result` label of `controller_runtime_reconcile_total`.
pub(crate) mod result_label {
    /// The reconcile succeeded and asked for nothing.
    pub(crate) const SUCCESS: &str = "success";
    /// The reconcile asked for a rate-limited requeue.
    pub(crate) const REQUEUE: &str = "requeue";
    /// The reconcile asked for a requeue after a delay.
    pub(crate) const REQUEUE_AFTER: &str = "requeue_after";
    /// The reconcile failed.
    pub(crate) const ERROR: &str = "error";
}

/// Applies a reconcile's result to `queue` and the metrics, as controller-runtime's `reconcileHandler`.
pub(crate) fn handle_result(
    controller: &str,
    key: &ObjectKey,
    result: Result<Outcome, &dyn ReconcileError>,
    queue: &WorkQueue<ObjectKey>,
    metrics: &Metrics,
) {
    let label = match result {
        Err(error) => {
            tracing::error!(controller, key = %key, error = %error, reason = error.reason(), "Reconciler error");
            metrics.inc(RECONCILE_ERRORS_TOTAL, &[("controller", controller), ("reason", error.reason())]);
            queue.add_rate_limited(key.clone());
            result_label::ERROR
        }
        Ok(Outcome::RequeueAfter(delay)) if !delay.is_zero() => {
            queue.forget(key);
            queue.add_after(key.clone(), delay);
            result_label::REQUEUE_AFTER
        }
        Ok(Outcome::Requeue) => {
            queue.add_rate_limited(key.clone());
            result_label::REQUEUE
        }
        Ok(Outcome::Done | Outcome::RequeueAfter(_)) => {
            queue.forget(key);
            result_label::SUCCESS
        }
    };
    metrics.inc(RECONCILE_TOTAL, &[("controller", controller), ("result", label)]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::metrics::WORKQUEUE_RETRIES_TOTAL;
    use crate::runtime::rate_limiter::typed_rate_limiter;

    #[derive(Debug, thiserror::Error)]
    #[error("pods \"x\" already exists")]
    struct AlreadyExists;

    impl ReconcileError for AlreadyExists {
        fn reason(&self) -> &'static str {
            "AlreadyExists"
        }
    }

    fn setup() -> (WorkQueue<ObjectKey>, Metrics, ObjectKey) {
        let metrics = Metrics::new();
        (WorkQueue::new("c", &metrics, typed_rate_limiter()), metrics, ObjectKey::new("ns", "x"))
    }

    fn total(metrics: &Metrics, result: &str) -> i64 {
        metrics.get(RECONCILE_TOTAL, &[("controller", "c"), ("result", result)])
    }

    #[test]
    fn an_error_is_counted_with_its_reason_and_retried_through_the_rate_limiter() {
        let (queue, metrics, key) = setup();
        handle_result("c", &key, Err(&AlreadyExists), &queue, &metrics);
        assert_eq!(total(&metrics, result_label::ERROR), 1);
        assert_eq!(
            metrics.get(RECONCILE_ERRORS_TOTAL, &[("controller", "c"), ("reason", "AlreadyExists")]),
            1
        );
        assert_eq!(metrics.get(WORKQUEUE_RETRIES_TOTAL, &[("name", "c")]), 1);
        assert_eq!(queue.num_requeues(&key), 1);
        assert_eq!(queue.parked_len(), 1);
    }

    #[test]
    fn requeue_goes_through_the_rate_limiter() {
        let (queue, metrics, key) = setup();
        handle_result("c", &key, Ok(Outcome::Requeue), &queue, &metrics);
        handle_result("c", &key, Ok(Outcome::Requeue), &queue, &metrics);
        assert_eq!(total(&metrics, result_label::REQUEUE), 2);
        assert_eq!(queue.num_requeues(&key), 2);
    }

    #[test]
    fn requeue_after_forgets_the_backoff_and_parks_the_key() {
        let (queue, metrics, key) = setup();
        handle_result("c", &key, Ok(Outcome::Requeue), &queue, &metrics);
        handle_result("c", &key, Ok(Outcome::RequeueAfter(Duration::from_secs(60))), &queue, &metrics);
        assert_eq!(total(&metrics, result_label::REQUEUE_AFTER), 1);
        assert_eq!(queue.num_requeues(&key), 0);
        assert_eq!(queue.parked_len(), 1);
    }

    #[test]
    fn done_and_a_zero_delay_forget_the_key_without_requeueing() {
        let (queue, metrics, key) = setup();
        queue.add_rate_limited(key.clone());
        handle_result("c", &key, Ok(Outcome::Done), &queue, &metrics);
        assert_eq!(queue.num_requeues(&key), 0);
        queue.add_rate_limited(key.clone());
        handle_result("c", &key, Ok(Outcome::RequeueAfter(Duration::ZERO)), &queue, &metrics);
        assert_eq!(queue.num_requeues(&key), 0);
        assert_eq!(total(&metrics, result_label::SUCCESS), 2);
        assert_eq!(queue.len(), 0);
    }
}
