//! A runner's session at GitHub, created as actions/runner creates it (v2.336.0,
//! `src/Runner.Listener/MessageListener.cs`, `CreateSessionAsync`): `POST …/_apis/distributedtask/
//! pools/{pool}/sessions` over the fake GitHub's HTTP interface, so the request meets the service's
//! latency and its fault plan like any other client's.
//!
//! What the listener does with each answer: a session ends the boot; `invalid_client` (the
//! registration was deleted, or the credential is not the service's) stops it (`TerminatedError`, exit
//! 1); a `TaskAgentSessionConflictException` is tried again every 30 s until 4 minutes of conflicts
//! have passed (`_sessionConflictRetryLimit`), then it stops (`SessionConflict`; the model keeps exit 1
//! for every refused runner, see docs/windows.md); anything else (5xx, 429, a dropped connection) is
//! tried again every 30 s (`_sessionCreationRetryInterval`) for as long as it takes. SIGTERM meanwhile
//! stops the process with exit 0. Simplification: the pool id in the path is always 1, and the
//! runner presents its credential directly (no OAuth exchange before the session).

use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::super::events::KubeletEventKind;
use super::github_http::{RUNNER_VERSION, post_json};
use super::{EXIT_OUTDATED, ProcessContext};
use crate::github::RunnerSession;

/// actions/runner's wait between two tries of a session's creation.
pub const RETRY_INTERVAL: Duration = Duration::from_secs(30);
/// How long actions/runner goes on trying through session conflicts.
pub const CONFLICT_RETRY_LIMIT: Duration = Duration::from_secs(240);

/// The session request's body (`TaskAgentSession`: the listener names the session's owner
/// "{machine} (PID: n)").
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionBody<'a> {
    owner_name: String,
    agent: Agent<'a>,
}

/// `TaskAgentReference`: the runner the session is for.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Agent<'a> {
    name: &'a str,
    version: &'a str,
}

/// The part of the answer the listener keeps.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CreatedSession {
    session_id: String,
}

/// What one try came to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    /// The session, by id.
    Created(String),
    /// `invalid_client`: the listener stops.
    InvalidClient,
    /// The runner's version is deprecated: it exits 7.
    Deprecated,
    /// Another session holds the runner.
    Conflict,
    /// Anything else, with its status (none: the connection dropped).
    Transient(Option<u16>),
}

/// Creates the runner's session with `credential`, trying again as the listener does. `Err` is the
/// process's exit code: refused, or stopped by SIGTERM.
pub async fn create(
    ctx: &ProcessContext,
    credential: &str,
    sigterm: &CancellationToken,
) -> Result<RunnerSession, i32> {
    let mut conflicts = 0u32;
    loop {
        let answer = tokio::select! {
            biased;
            () = sigterm.cancelled() => return Err(stopped(ctx).await),
            answer = post(ctx, credential) => answer,
        };
        let status = match answer {
            Answer::Created(id) => match ctx.github.claim_runner_session(&id) {
                Some(session) => return Ok(session),
                None => None,
            },
            Answer::InvalidClient => return Err(gave_up(ctx, 401)),
            Answer::Deprecated => return Err(EXIT_OUTDATED),
            Answer::Conflict => {
                conflicts += 1;
                if RETRY_INTERVAL * conflicts >= CONFLICT_RETRY_LIMIT {
                    return Err(gave_up(ctx, 409));
                }
                Some(409)
            }
            Answer::Transient(status) => status,
        };
        let retry_in_ms = Some(RETRY_INTERVAL.as_millis() as u64);
        (ctx.record)(KubeletEventKind::SessionCreationFailed { status, retry_in_ms });
        tokio::select! {
            biased;
            () = sigterm.cancelled() => return Err(stopped(ctx).await),
            () = tokio::time::sleep(RETRY_INTERVAL) => {}
        }
    }
}

/// The listener stops trying: recorded, exit 1.
fn gave_up(ctx: &ProcessContext, status: u16) -> i32 {
    (ctx.record)(KubeletEventKind::SessionCreationFailed { status: Some(status), retry_in_ms: None });
    1
}

/// SIGTERM before a session: the listener stops with nothing to delete and the process exits 0.
async fn stopped(ctx: &ProcessContext) -> i32 {
    tokio::time::sleep(ctx.shutdown.stop).await;
    0
}

/// One try: the request, and what its answer means.
async fn post(ctx: &ProcessContext, credential: &str) -> Answer {
    let service = ctx.github.config().service_url;
    let url = format!("{}/_apis/distributedtask/pools/1/sessions", service.trim_end_matches('/'));
    let body = SessionBody {
        owner_name: format!("{} (PID: 1)", ctx.pod),
        agent: Agent { name: &ctx.pod, version: RUNNER_VERSION },
    };
    let body = Bytes::from(serde_json::to_vec(&body).expect("a session body serialises"));
    let Ok((status, bytes)) = post_json(ctx, url, format!("Bearer {credential}"), body).await else {
        return Answer::Transient(None);
    };
    read(status, &bytes)
}

/// What the listener makes of an answer.
fn read(status: u16, body: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(body);
    match status {
        200 => serde_json::from_slice::<CreatedSession>(body)
            .map_or(Answer::Transient(Some(status)), |created| Answer::Created(created.session_id)),
        400 | 401 if text.contains("invalid_client") => Answer::InvalidClient,
        403 if text.contains("RunnerVersionDeprecated") => Answer::Deprecated,
        409 if text.contains("TaskAgentSessionConflictException") => Answer::Conflict,
        _ => Answer::Transient(Some(status)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listener_reads_each_answer_as_actions_runner_does() {
        assert_eq!(read(200, br#"{"sessionId":"s-1","ownerName":"p"}"#), Answer::Created("s-1".into()));
        assert_eq!(read(200, b"not json"), Answer::Transient(Some(200)));
        assert_eq!(read(401, br#"{"error":"invalid_client"}"#), Answer::InvalidClient);
        assert_eq!(read(401, b""), Answer::Transient(Some(401)));
        let conflict =
            br#"{"typeName":"GitHub.DistributedTask.WebApi.TaskAgentSessionConflictException, x"}"#;
        assert_eq!(read(409, conflict), Answer::Conflict);
        assert_eq!(read(503, b"injected fault"), Answer::Transient(Some(503)));
        assert_eq!(read(429, b""), Answer::Transient(Some(429)));
    }

    #[test]
    fn conflicts_are_tried_for_four_minutes_at_thirty_second_intervals() {
        let tries = (1..).find(|n| RETRY_INTERVAL * *n >= CONFLICT_RETRY_LIMIT).unwrap();
        assert_eq!(tries, 8);
    }
}
