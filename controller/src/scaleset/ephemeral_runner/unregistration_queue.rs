//! [`UnregistrationQueue`]: #4664's background deregistration (`releases.deregister_in_background`,
//! 0.15.0). A deleting runner whose pod is gone or stopped loses its registration finalizer at once
//! and its runner id is queued here; a worker of the controller's process asks the service to remove
//! it, again every 30 s while the service answers `JobStillRunning`, and counts 404 as done. Any other
//! error drops the request ("leaving the runner for the service to clean up"), and so does a restart of
//! the process: the queue is in memory. A request already queued for the same runner and id is
//! dropped. Rests on the PR's commits `72706a73` and `67af96c3` and their tests as read in the
//! public thread of #4664; the 0.15.0 tag is not in the public snapshot, so the merged code is unread.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::github::ActionsClient;
use crate::runtime::object_key::ObjectKey;

/// How long a queued removal waits after `JobStillRunning` (#4664: `unregistrationRetryDelay`).
pub(super) const UNREGISTRATION_RETRY_DELAY: Duration = Duration::from_secs(30);

/// One runner to remove from the service.
pub(super) struct Unregistration {
    /// The client of the runner's scale set.
    pub client: ActionsClient,
    /// The EphemeralRunner it was.
    pub key: ObjectKey,
    /// Its runner id (never 0).
    pub runner_id: i64,
}

/// A runner and id a request is queued for.
type Claim = (ObjectKey, i64);

/// The queue's sending side; clones share it.
#[derive(Clone)]
pub(super) struct UnregistrationQueue {
    sender: mpsc::UnboundedSender<Unregistration>,
    claimed: Arc<Mutex<BTreeSet<Claim>>>,
}

impl std::fmt::Debug for UnregistrationQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnregistrationQueue").finish_non_exhaustive()
    }
}

impl UnregistrationQueue {
    /// A queue and the worker that serves it, to run as a task of the controller's process.
    pub(super) fn new() -> (UnregistrationQueue, BoxFuture<'static, ()>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let claimed = Arc::new(Mutex::new(BTreeSet::new()));
        let queue = UnregistrationQueue { sender, claimed: Arc::clone(&claimed) };
        (queue, serve(receiver, claimed).boxed())
    }

    /// Queues `request`, unless one for the same runner and id is queued already.
    pub(super) fn push(&self, request: Unregistration) {
        let claim = (request.key.clone(), request.runner_id);
        if !self.claimed.lock().unwrap_or_else(|p| p.into_inner()).insert(claim) {
            tracing::debug!(runner = %request.key, runner_id = request.runner_id, "Unregistration already queued");
            return;
        }
        if self.sender.send(request).is_err() {
            tracing::warn!(
                "The unregistration queue has stopped; leaving the runner for the service to clean up"
            );
        }
    }
}

/// Serves every request as it comes, each in a task of its own, until the queue is dropped; the
/// requests' tasks end with this one.
async fn serve(mut receiver: mpsc::UnboundedReceiver<Unregistration>, claimed: Arc<Mutex<BTreeSet<Claim>>>) {
    let mut removals = JoinSet::new();
    loop {
        tokio::select! {
            request = receiver.recv() => match request {
                Some(request) => {
                    removals.spawn(remove(request, Arc::clone(&claimed)));
                }
                None => break,
            },
            Some(_) = removals.join_next(), if !removals.is_empty() => {}
        }
    }
}

/// Removes one runner, retrying while its job still runs; then releases its claim.
async fn remove(request: Unregistration, claimed: Arc<Mutex<BTreeSet<Claim>>>) {
    let Unregistration { client, key, runner_id } = &request;
    loop {
        match client.remove_runner(*runner_id).await {
            Ok(()) => tracing::info!(runner = %key, runner_id, "Removed runner from the service"),
            Err(error) if error.is_job_still_running() => {
                tracing::info!(runner = %key, runner_id, "Runner's job still runs; retrying its removal in 30s");
                tokio::time::sleep(UNREGISTRATION_RETRY_DELAY).await;
                continue;
            }
            Err(error) if error.status() == Some(404) => {
                tracing::info!(runner = %key, runner_id, "Runner already removed from the service")
            }
            Err(error) => tracing::warn!(
                runner = %key, runner_id, %error,
                "Failed to remove runner; leaving the runner for the service to clean up"
            ),
        }
        break;
    }
    claimed.lock().unwrap_or_else(|p| p.into_inner()).remove(&(key.clone(), *runner_id));
}
