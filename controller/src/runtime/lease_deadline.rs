//! [`LeaseDeadline`]: until when a leader's leadership is known good, on its process's monotonic
//! clock; the elector sets it at each renewal, and the guards of its Kubernetes and GitHub clients
//! (`ops::lease_guard`) refuse writes past it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::Method;
use tokio::time::Instant;

/// Until when this process's leadership is known good; shared by the elector and the guard.
#[derive(Debug, Clone, Default)]
pub struct LeaseDeadline(Arc<Mutex<Option<Instant>>>);

impl LeaseDeadline {
    /// Records a renewal (or acquisition) whose attempt began at `attempt_began`: writes are allowed
    /// for `renew_deadline` from then.
    pub fn renewed(&self, attempt_began: Instant, renew_deadline: Duration) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(attempt_began + renew_deadline);
    }

    /// How far past the deadline a request by `method` is, if it is a write (every method but GET,
    /// HEAD and OPTIONS) sent now; `None` when it may go.
    pub fn refuses(&self, method: &Method) -> Option<Duration> {
        let writes = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        writes.then(|| self.overdue()).flatten()
    }

    /// How far past the deadline the process's clock is now; `None` while writes are allowed.
    pub fn overdue(&self) -> Option<Duration> {
        let until = (*self.0.lock().unwrap_or_else(PoisonError::into_inner))?;
        let now = Instant::now(); // allow-nondeterminism: tokio's monotonic clock, the elector's own
        (now > until).then(|| now - until)
    }
}

/// A write refused because the leader's renew deadline had passed.
#[derive(Debug, thiserror::Error)]
#[error(
    "write refused: the Lease was last renewed over the renew deadline ago ({overdue:?} past it); another process may lead"
)]
pub struct LeaseDeadlinePassed {
    /// How far past the deadline.
    pub overdue: Duration,
}
