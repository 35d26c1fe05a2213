//! The listener's message session (ARC-MODEL §4.1, §6.5): creating it, the queue calls made with its
//! token, the refresh on an expired token, and deleting it at the end.
//!
//! [`SessionState`] is the lifecycle as a pure state machine; [`MessageSession`] drives it with the
//! GitHub calls. A queue call (GetMessage, DeleteMessage, AcquireJobs) that answers 401 moves the
//! session to [`SessionState::Expired`]; the session is refreshed (PATCH) and the call is made once
//! more, whatever it answers then (ARC #2837, #3529). A 409 on create means another listener holds
//! the session: \[SS\] gives up at once, ARC 0.13 retried every 30 s up to 10 attempts
//! ([`SessionConflictPolicy`]).

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::error::ListenerError;
use crate::github::ActionsClient;
use crate::github::ActionsError;
use crate::github::wire::{RunnerScaleSetMessage, RunnerScaleSetSession, RunnerScaleSetStatistic};

/// What the listener does when CreateMessageSession answers 409 (another session is open).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionConflictPolicy {
    /// \[SS\]: fail at once; the pod exits and is recreated by the AutoscalingListener controller.
    #[default]
    Exit,
    /// ARC 0.13: try again after `interval`, up to `attempts` creates in all, then fail.
    Retry {
        /// Creates in all, the first included (ARC 0.13: 10).
        attempts: u32,
        /// Wait between creates (ARC 0.13: 30 s).
        interval: Duration,
    },
}

impl SessionConflictPolicy {
    /// ARC 0.13's policy: 10 creates, 30 s apart.
    pub const ARC_0_13: SessionConflictPolicy =
        SessionConflictPolicy::Retry { attempts: 10, interval: Duration::from_secs(30) };
}

/// Where the message session is in its life.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionState {
    /// No session yet. Entered at start; left for [`SessionState::Open`] when a create succeeds, or
    /// for [`SessionState::Closed`] when it fails for good. `conflicts` counts the 409s so far.
    Creating {
        /// 409 answers so far.
        conflicts: u32,
    },
    /// The session is open and its queue token is believed valid. Left for
    /// [`SessionState::Expired`] when a queue call answers 401, or [`SessionState::Closed`] on close.
    Open(RunnerScaleSetSession),
    /// A queue call answered 401: the token expired. Left for [`SessionState::Open`] when the
    /// refresh succeeds; a failed refresh stays here (the session may still exist and is deleted
    /// on close).
    Expired(RunnerScaleSetSession),
    /// Deleted, or never opened. Final.
    Closed,
}

/// What to do after a create attempt.
#[derive(Debug)]
pub enum CreateOutcome {
    /// The session is open.
    Opened,
    /// Another listener holds the session; try again after this long.
    RetryAfter(Duration),
    /// Give up.
    Failed(ListenerError),
}

/// The message-queue URL and token a queue call needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueAccess {
    /// Where to long-poll.
    pub url: String,
    /// The queue token.
    pub token: String,
}

impl SessionState {
    /// Applies the result of CreateMessageSession for `scale_set_id` under `policy`.
    pub fn on_create(
        &mut self,
        scale_set_id: i64,
        result: Result<RunnerScaleSetSession, ActionsError>,
        policy: SessionConflictPolicy,
    ) -> CreateOutcome {
        let conflicts = match self {
            SessionState::Creating { conflicts } => *conflicts,
            _ => return CreateOutcome::Failed(ListenerError::NoSession),
        };
        let error = match result {
            Ok(session) => {
                *self = SessionState::Open(session);
                return CreateOutcome::Opened;
            }
            Err(error) => error,
        };
        if !error.is_session_conflict() {
            *self = SessionState::Closed;
            return CreateOutcome::Failed(ListenerError::CreateSession(error));
        }
        let attempts = conflicts + 1;
        match policy {
            SessionConflictPolicy::Retry { attempts: allowed, interval } if attempts < allowed => {
                *self = SessionState::Creating { conflicts: attempts };
                CreateOutcome::RetryAfter(interval)
            }
            _ => {
                *self = SessionState::Closed;
                CreateOutcome::Failed(ListenerError::SessionConflict {
                    scale_set_id,
                    attempts,
                    source: error,
                })
            }
        }
    }

    /// A queue call answered 401: Open → Expired. Returns whether a refresh is due.
    pub fn on_token_expired(&mut self) -> bool {
        match std::mem::replace(self, SessionState::Closed) {
            SessionState::Open(session) => {
                *self = SessionState::Expired(session);
                true
            }
            other => {
                *self = other;
                false
            }
        }
    }

    /// The refresh succeeded: Expired → Open with the refreshed session.
    pub fn on_refreshed(&mut self, refreshed: RunnerScaleSetSession) {
        if matches!(self, SessionState::Expired(_)) {
            *self = SessionState::Open(refreshed);
        }
    }

    /// The session id to refresh or delete, while there is a session.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            SessionState::Open(s) | SessionState::Expired(s) => Some(&s.session_id),
            _ => None,
        }
    }

    /// What queue calls need, while the session is open.
    pub fn queue_access(&self) -> Option<QueueAccess> {
        match self {
            SessionState::Open(s) => Some(QueueAccess {
                url: s.message_queue_url.clone(),
                token: s.message_queue_access_token.clone(),
            }),
            _ => None,
        }
    }

    /// Moves to Closed; returns the session id to delete, if a session was open.
    pub fn close(&mut self) -> Option<String> {
        match std::mem::replace(self, SessionState::Closed) {
            SessionState::Open(s) | SessionState::Expired(s) => Some(s.session_id),
            _ => None,
        }
    }
}

/// How opening ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// The session is open.
    Opened,
    /// Cancelled while waiting to retry a conflicting create.
    Cancelled,
}

/// One listener's message session at the Actions service.
#[derive(Debug)]
pub struct MessageSession {
    client: ActionsClient,
    scale_set_id: i64,
    owner: String,
    state: SessionState,
}

impl MessageSession {
    /// A session of scale set `scale_set_id` for `owner` (ARC: the listener pod's hostname), not yet
    /// created.
    pub fn new(client: ActionsClient, scale_set_id: i64, owner: impl Into<String>) -> Self {
        let state = SessionState::Creating { conflicts: 0 };
        MessageSession { client, scale_set_id, owner: owner.into(), state }
    }

    /// The lifecycle state.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// Creates the session, retrying conflicts as `policy` allows; a retry wait ends early on
    /// `cancel`.
    pub async fn open(
        &mut self,
        policy: SessionConflictPolicy,
        cancel: &CancellationToken,
    ) -> Result<Opening, ListenerError> {
        loop {
            tracing::info!(scale_set_id = self.scale_set_id, owner = %self.owner, "creating the message session");
            let result = self.client.create_message_session(self.scale_set_id, &self.owner).await;
            match self.state.on_create(self.scale_set_id, result, policy) {
                CreateOutcome::Opened => {
                    tracing::info!(session_id = self.state.session_id(), "message session created");
                    return Ok(Opening::Opened);
                }
                CreateOutcome::Failed(error) => return Err(error),
                CreateOutcome::RetryAfter(wait) => {
                    tracing::info!(?wait, "another listener holds the message session; retrying");
                    tokio::select! {
                        biased;
                        () = cancel.cancelled() => return Ok(Opening::Cancelled),
                        () = tokio::time::sleep(wait) => {}
                    }
                }
            }
        }
    }

    /// The statistics the open session came with.
    pub fn statistics(&self) -> Option<RunnerScaleSetStatistic> {
        match &self.state {
            SessionState::Open(s) | SessionState::Expired(s) => s.statistics,
            _ => None,
        }
    }

    /// The scale set's statistics as GetRunnerScaleSet answers them now (`None`: it answered none).
    pub async fn scale_set_statistics(&self) -> Result<Option<RunnerScaleSetStatistic>, ActionsError> {
        Ok(self.client.get_runner_scale_set_by_id(self.scale_set_id).await?.statistics)
    }

    /// The request ids of the jobs offered to the scale set that nobody has acquired.
    pub async fn acquirable_jobs(&self) -> Result<Vec<i64>, ActionsError> {
        self.client.get_acquirable_jobs(self.scale_set_id).await
    }

    /// Long-polls for the next message after `last_message_id`; `None` is the 202 "nothing came".
    pub async fn get_message(
        &mut self,
        last_message_id: i64,
        max_capacity: u32,
    ) -> Result<Option<RunnerScaleSetMessage>, ListenerError> {
        self.queue_call(|client, access| async move {
            client.get_message(&access.url, &access.token, last_message_id, max_capacity).await
        })
        .await
    }

    /// Acknowledges message `message_id`.
    pub async fn delete_message(&mut self, message_id: i64) -> Result<(), ListenerError> {
        self.queue_call(|client, access| async move {
            client.delete_message(&access.url, &access.token, message_id).await
        })
        .await
    }

    /// Acquires the jobs `request_ids`; returns those acquired.
    pub async fn acquire_jobs(&mut self, request_ids: &[i64]) -> Result<Vec<i64>, ListenerError> {
        let scale_set_id = self.scale_set_id;
        self.queue_call(|client, access| {
            let ids = request_ids.to_vec();
            async move { client.acquire_jobs(scale_set_id, &access.token, &ids).await }
        })
        .await
    }

    /// Runs a queue call; on an expired token, refreshes the session and runs it once more.
    async fn queue_call<T, F, Fut>(&mut self, call: F) -> Result<T, ListenerError>
    where
        F: Fn(ActionsClient, QueueAccess) -> Fut,
        Fut: Future<Output = Result<T, ActionsError>>,
    {
        let access = self.state.queue_access().ok_or(ListenerError::NoSession)?;
        match call(self.client.clone(), access).await {
            Err(error) if error.is_queue_token_expired() && self.state.on_token_expired() => {
                tracing::info!(%error, "message queue token expired; refreshing the session");
                self.refresh().await?;
                let access = self.state.queue_access().ok_or(ListenerError::NoSession)?;
                call(self.client.clone(), access).await.map_err(ListenerError::Queue)
            }
            result => result.map_err(ListenerError::Queue),
        }
    }

    async fn refresh(&mut self) -> Result<(), ListenerError> {
        let session_id = self.state.session_id().ok_or(ListenerError::NoSession)?.to_string();
        let refreshed = self
            .client
            .refresh_message_session(self.scale_set_id, &session_id)
            .await
            .map_err(ListenerError::RefreshSession)?;
        self.state.on_refreshed(refreshed);
        tracing::info!(session_id, "message session refreshed");
        Ok(())
    }

    /// Deletes the session, best effort, giving up after `timeout`; failures are logged.
    pub async fn close(&mut self, timeout: Duration) {
        let Some(session_id) = self.state.close() else { return };
        tracing::info!(session_id, "deleting the message session");
        let delete = self.client.delete_message_session(self.scale_set_id, &session_id);
        match tokio::time::timeout(timeout, delete).await {
            Ok(Ok(())) => tracing::info!(session_id, "message session deleted"),
            Ok(Err(error)) => tracing::error!(session_id, %error, "failed to delete the message session"),
            Err(_) => tracing::error!(session_id, ?timeout, "deleting the message session timed out"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::Operation;

    fn session(id: &str, token: &str) -> RunnerScaleSetSession {
        RunnerScaleSetSession {
            session_id: id.into(),
            message_queue_url: "https://broker/q".into(),
            message_queue_access_token: token.into(),
            ..RunnerScaleSetSession::default()
        }
    }

    fn conflict() -> ActionsError {
        ActionsError::SessionConflict { operation: Operation::CreateSession, message: "taken".into() }
    }

    fn creating() -> SessionState {
        SessionState::Creating { conflicts: 0 }
    }

    #[test]
    fn a_successful_create_opens_the_session_with_its_queue_access() {
        let mut state = creating();
        let outcome = state.on_create(7, Ok(session("s1", "t1")), SessionConflictPolicy::Exit);
        assert!(matches!(outcome, CreateOutcome::Opened));
        assert_eq!(state.session_id(), Some("s1"));
        assert_eq!(
            state.queue_access(),
            Some(QueueAccess { url: "https://broker/q".into(), token: "t1".into() })
        );
    }

    #[test]
    fn a_conflict_fails_at_once_under_the_exit_policy() {
        let mut state = creating();
        let outcome = state.on_create(7, Err(conflict()), SessionConflictPolicy::Exit);
        assert!(matches!(
            outcome,
            CreateOutcome::Failed(ListenerError::SessionConflict { scale_set_id: 7, attempts: 1, .. })
        ));
        assert_eq!(state, SessionState::Closed);
    }

    #[test]
    fn conflicts_are_retried_every_interval_until_the_attempts_run_out() {
        let mut state = creating();
        let policy = SessionConflictPolicy::ARC_0_13;
        for conflicts in 1..10 {
            let outcome = state.on_create(7, Err(conflict()), policy);
            assert!(matches!(outcome, CreateOutcome::RetryAfter(d) if d == Duration::from_secs(30)));
            assert_eq!(state, SessionState::Creating { conflicts });
        }
        let last = state.on_create(7, Err(conflict()), policy);
        assert!(matches!(last, CreateOutcome::Failed(ListenerError::SessionConflict { attempts: 10, .. })));
        assert_eq!(state, SessionState::Closed);
    }

    #[test]
    fn a_create_that_succeeds_after_conflicts_opens_the_session() {
        let mut state = creating();
        let policy = SessionConflictPolicy::ARC_0_13;
        assert!(matches!(state.on_create(7, Err(conflict()), policy), CreateOutcome::RetryAfter(_)));
        assert!(matches!(state.on_create(7, Ok(session("s", "t")), policy), CreateOutcome::Opened));
        assert_eq!(state.session_id(), Some("s"));
    }

    #[test]
    fn other_create_errors_are_never_retried() {
        let mut state = creating();
        let error = ActionsError::Http {
            operation: Operation::CreateSession,
            status: 500,
            exception: None,
            message: "boom".into(),
        };
        let outcome = state.on_create(7, Err(error), SessionConflictPolicy::ARC_0_13);
        assert!(matches!(outcome, CreateOutcome::Failed(ListenerError::CreateSession(_))));
        assert_eq!(state, SessionState::Closed);
    }

    #[test]
    fn an_expired_token_blocks_queue_calls_until_the_refresh_brings_a_new_one() {
        let mut state = SessionState::Open(session("s", "old"));
        assert!(state.on_token_expired());
        assert_eq!(state.queue_access(), None, "no queue call with an expired token");
        assert_eq!(state.session_id(), Some("s"), "the session is still there to refresh");
        state.on_refreshed(session("s", "new"));
        assert_eq!(state.queue_access().map(|a| a.token), Some("new".into()));
    }

    #[test]
    fn a_second_expiry_while_already_expired_asks_for_no_second_refresh() {
        let mut state = SessionState::Expired(session("s", "old"));
        assert!(!state.on_token_expired());
        assert!(matches!(state, SessionState::Expired(_)));
        let mut closed = SessionState::Closed;
        assert!(!closed.on_token_expired());
        assert_eq!(closed, SessionState::Closed);
    }

    #[test]
    fn closing_yields_the_session_to_delete_once_and_only_if_one_was_open() {
        let mut open = SessionState::Open(session("s", "t"));
        assert_eq!(open.close(), Some("s".into()));
        assert_eq!(open.close(), None);
        let mut expired = SessionState::Expired(session("e", "t"));
        assert_eq!(expired.close(), Some("e".into()), "an expired session is deleted too");
        let mut never = creating();
        assert_eq!(never.close(), None);
        assert_eq!(never, SessionState::Closed);
    }

    #[test]
    fn a_create_result_outside_creating_is_refused() {
        let mut state = SessionState::Open(session("s", "t"));
        let outcome = state.on_create(7, Ok(session("x", "y")), SessionConflictPolicy::Exit);
        assert!(matches!(outcome, CreateOutcome::Failed(ListenerError::NoSession)));
        assert_eq!(state.session_id(), Some("s"));
    }
}
