//! Message sessions and the message queue (ARC-MODEL §6.5).
//!
//! One session per scale set: a second create is 409 unless the first has gone unpolled for
//! `session_idle_expiry_ms`, in which case it is dropped. Job messages accumulate per scale set and are
//! sealed into one message (monotonic id, statistics snapshot) when a listener polls. GetMessage
//! returns the oldest unacknowledged message with an id above `lastMessageId`; messages stay until
//! DeleteMessage acknowledges them, so a new session gets unacknowledged ones again. The long poll
//! waits in sim time and answers 202 after `long_poll_timeout_ms`; an expired or unknown queue token
//! is 401.

use std::time::Duration;

use http::HeaderMap;

use super::Shared;
use super::events::EventKind;
use super::messages::JobMessage;
use super::model::Session;
use super::reply::Reply;
use super::state::World;
use super::tokens;
use super::wire::{MESSAGE_TYPE_JOB_MESSAGES, Message, SessionAnswer};

/// The request header in which a listener tells the service how many jobs it may run at once.
const HEADER_SCALE_SET_MAX_CAPACITY: &str = "X-ScaleSetMaxCapacity";

impl World {
    /// `POST runnerscalesets/{id}/sessions`.
    pub(super) fn http_create_session(&mut self, scale_set_id: i64, owner: &str) -> Reply {
        if !self.scale_sets.contains_key(&scale_set_id) {
            let message = format!("runner scale set {scale_set_id} not found");
            return Reply::exception(404, "RunnerScaleSetNotFoundException", message);
        }
        self.expire_idle_session(scale_set_id);
        if let Some(open) = self.sessions.values().find(|s| s.scale_set_id == scale_set_id) {
            let message =
                format!("a session for runner scale set {scale_set_id} is already open by {}", open.owner);
            return Reply::exception(409, "TaskAgentSessionConflictException", message);
        }
        let now = self.now_ms();
        let id = tokens::uuid(self.seed, "session", self.next_number());
        let queue_token = tokens::opaque(self.seed, "qt", self.next_number());
        let token_expires_ms = now + self.cfg.queue_token_ttl_ms;
        let session = Session {
            id: id.clone(),
            scale_set_id,
            owner: owner.to_string(),
            queue_token,
            token_expires_ms,
            created_ms: now,
            last_seen_ms: now,
            polls_in_flight: 0,
        };
        self.sessions.insert(id.clone(), session);
        if !self.cfg.redeliver_unacknowledged {
            // `unacknowledged-messages=dropped`: what the last session received is not offered again.
            self.queue(scale_set_id).sealed.clear();
        }
        self.record(EventKind::SessionCreated { session_id: id.clone(), scale_set_id });
        Reply::json(200, &self.session_wire(&id))
    }

    fn expire_idle_session(&mut self, scale_set_id: i64) {
        let now = self.now_ms();
        let expiry = self.cfg.session_idle_expiry_ms;
        let idle: Vec<String> = self
            .sessions
            .values()
            .filter(|s| {
                s.scale_set_id == scale_set_id
                    && s.polls_in_flight == 0
                    && now.saturating_sub(s.last_seen_ms) >= expiry
            })
            .map(|s| s.id.clone())
            .collect();
        for id in idle {
            self.close_session(&id, "expired");
        }
    }

    /// `PATCH …/sessions/{sid}`: a new queue token.
    pub(super) fn http_refresh_session(&mut self, scale_set_id: i64, session_id: &str) -> Reply {
        let now = self.now_ms();
        let token = tokens::opaque(self.seed, "qt", self.next_number());
        let ttl = self.cfg.queue_token_ttl_ms;
        let ends_with_token = self.cfg.session_ends_with_token;
        let Some(session) = self.sessions.get_mut(session_id).filter(|s| s.scale_set_id == scale_set_id)
        else {
            return session_not_found(session_id);
        };
        if ends_with_token && now >= session.token_expires_ms {
            // `session-refresh=ends-with-token`: the session ended with its token (scaleset #123).
            self.close_session(session_id, "expired");
            return session_not_found(session_id);
        }
        session.queue_token = token;
        session.token_expires_ms = now + ttl;
        session.last_seen_ms = now;
        self.record(EventKind::SessionRefreshed { session_id: session_id.to_string() });
        Reply::json(200, &self.session_wire(session_id))
    }

    /// `DELETE …/sessions/{sid}`.
    pub(super) fn http_delete_session(&mut self, scale_set_id: i64, session_id: &str) -> Reply {
        if self.sessions.get(session_id).is_none_or(|s| s.scale_set_id != scale_set_id) {
            return session_not_found(session_id);
        }
        self.close_session(session_id, "deleted");
        Reply::empty(204)
    }

    /// Drops a session; its queue token stops working.
    pub(super) fn close_session(&mut self, session_id: &str, why: &str) {
        if self.sessions.remove(session_id).is_some() {
            self.record(EventKind::SessionClosed {
                session_id: session_id.to_string(),
                why: why.to_string(),
            });
        }
    }

    fn session_wire(&mut self, session_id: &str) -> SessionAnswer {
        let statistics = self.read_statistics(self.sessions[session_id].scale_set_id);
        let session = &self.sessions[session_id];
        let set = self.scale_sets.get(&session.scale_set_id);
        SessionAnswer {
            session_id: session.id.clone(),
            owner_name: session.owner.clone(),
            runner_scale_set: set.map(|s| self.scale_set_wire(s)),
            message_queue_url: format!(
                "{}_apis/runtime/runnerscalesets/{}/messages?sessionId={}",
                self.cfg.broker_url, session.scale_set_id, session.id
            ),
            message_queue_access_token: session.queue_token.clone(),
            statistics,
        }
    }

    /// The session of scale set `scale_set_id` whose unexpired queue token is `token`.
    pub(super) fn session_for_token(&self, scale_set_id: i64, token: &str) -> Option<String> {
        let now = self.now_ms();
        self.sessions
            .values()
            .find(|s| s.scale_set_id == scale_set_id && s.queue_token == token && now < s.token_expires_ms)
            .map(|s| s.id.clone())
    }

    /// The next message for a poll after `last_id`: the oldest unacknowledged one above it, else the
    /// pending job messages sealed into a new one, else `None`.
    /// (The long poll asks after every change to the service, so statistics are counted only when a
    /// message is sealed.)
    pub(super) fn next_message(&mut self, scale_set_id: i64, last_id: i64) -> Option<Message> {
        let queue = self.queue(scale_set_id);
        if let Some((_, message)) = queue.sealed.range(last_id.saturating_add(1)..).next() {
            return Some(message.clone());
        }
        if queue.pending.is_empty() {
            return None;
        }
        let statistics = self.read_statistics(scale_set_id);
        let queue = self.queue(scale_set_id);
        let batch = std::mem::take(&mut queue.pending);
        queue.last_id += 1;
        let message_id = queue.last_id;
        let message = Message {
            message_id,
            message_type: MESSAGE_TYPE_JOB_MESSAGES.into(),
            body: JobMessage::encode_batch(&batch),
            statistics,
        };
        queue.sealed.insert(message_id, message.clone());
        self.record(EventKind::MessageSealed { scale_set_id, message_id, jobs: batch.len() });
        if self.cfg.acquire_on_delivery {
            // `job-acquisition=on-delivery`: delivering the offer acquires the job for the scale set.
            let offered: Vec<i64> = batch.iter().filter_map(JobMessage::available_request_id).collect();
            self.acquire_jobs(scale_set_id, &offered);
        }
        Some(message)
    }

    /// `DELETE {queue}/{messageId}`: acknowledges a message (unknown ids too).
    pub(super) fn http_delete_message(&mut self, scale_set_id: i64, message_id: i64) -> Reply {
        self.queue(scale_set_id).sealed.remove(&message_id);
        Reply::empty(204)
    }

    fn poll_started(&mut self, session_id: &str, max_capacity: Option<u32>) {
        let now = self.now_ms();
        let Some(session) = self.sessions.get_mut(session_id) else { return };
        session.polls_in_flight += 1;
        session.last_seen_ms = now;
        let scale_set_id = session.scale_set_id;
        if let (Some(cap), Some(set)) = (max_capacity, self.scale_sets.get_mut(&scale_set_id)) {
            let raised = set.max_capacity.is_none_or(|was| cap > was);
            set.max_capacity = Some(cap);
            if raised {
                self.reoffer_deferred(scale_set_id);
            }
        }
    }

    fn poll_ended(&mut self, session_id: &str) {
        let now = self.now_ms();
        if let Some(session) = self.sessions.get_mut(session_id) {
            session.polls_in_flight = session.polls_in_flight.saturating_sub(1);
            session.last_seen_ms = now;
        }
    }
}

/// Ends a poll when dropped, so a listener killed mid-poll (its request future dropped) does not keep
/// its session looking alive forever.
struct PollGuard<'a> {
    shared: &'a Shared,
    session_id: &'a str,
}

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        self.shared.lock().poll_ended(self.session_id);
    }
}

/// What a long poll ended with.
enum Polled {
    Message(Message),
    SessionGone,
}

/// GetMessage: the long poll, in sim time. The caller has already checked the queue token.
pub(crate) async fn get_message(
    shared: &Shared,
    scale_set_id: i64,
    session_id: &str,
    query: &str,
    headers: &HeaderMap,
) -> Reply {
    let last_id = match last_message_id(query) {
        Ok(id) => id,
        Err(reply) => return reply,
    };
    let max_capacity = match max_capacity(headers) {
        Ok(cap) => cap,
        Err(reply) => return reply,
    };
    let timeout = {
        let mut world = shared.lock();
        world.poll_started(session_id, max_capacity);
        Duration::from_millis(world.cfg.long_poll_timeout_ms)
    };
    shared.changed.notify_waiters();
    let _in_flight = PollGuard { shared, session_id };
    let deadline = tokio::time::Instant::now() + timeout; // allow-nondeterminism: tokio's paused clock is the sim clock
    let polled = shared
        .wait_until_deadline(deadline, |w| {
            if !w.sessions.contains_key(session_id) {
                return Some(Polled::SessionGone);
            }
            w.next_message(scale_set_id, last_id).map(Polled::Message)
        })
        .await;
    match polled {
        Some(Polled::Message(message)) => Reply::json(200, &message),
        Some(Polled::SessionGone) => Reply::text(401, "the message session was closed"),
        None => Reply::empty(202),
    }
}

fn last_message_id(query: &str) -> Result<i64, Reply> {
    match form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "lastMessageId") {
        None => Ok(0),
        Some((_, v)) => {
            v.parse().map_err(|_| Reply::bad_request(format!("lastMessageId {v:?} is not a number")))
        }
    }
}

fn max_capacity(headers: &HeaderMap) -> Result<Option<u32>, Reply> {
    let Some(value) = headers.get(HEADER_SCALE_SET_MAX_CAPACITY) else { return Ok(None) };
    let text = value.to_str().unwrap_or_default();
    text.trim().parse().map(Some).map_err(|_| {
        Reply::bad_request(format!("{HEADER_SCALE_SET_MAX_CAPACITY} {text:?} is not a non-negative number"))
    })
}

fn session_not_found(session_id: &str) -> Reply {
    Reply::exception(404, "TaskAgentSessionExpiredException", format!("session {session_id} not found"))
}
