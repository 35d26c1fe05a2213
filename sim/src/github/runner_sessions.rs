//! A runner process's own session over HTTP: `POST _apis/distributedtask/pools/{pool}/sessions`,
//! actions/runner's `CreateAgentSessionAsync` (v2.336.0, `MessageListener.cs`), as the kubelet's
//! runner model sends it when its world asks for it (`KubeletConfig::runner_sessions_over_http`).
//!
//! The answer is what actions/runner acts on: 200 with the session; 401 `invalid_client` (the OAuth
//! exchange's error: the registration was deleted or the credential is not one the service issued),
//! which the runner does not retry; 409 `TaskAgentSessionConflictException` (another process holds
//! the runner's session), which it retries for 4 minutes; anything else it retries every 30 s.
//!
//! A session whose creation committed but whose answer never reached its process (a commit-then-fail
//! fault, a process killed while its request was in flight) is never polled. How long the service
//! keeps it is not public (assumption `unpolled-session`: one long poll by default,
//! `GitHubConfig::unclaimed_session_ms`); then its process is treated as one that died without a
//! word, under the `dead-runner-detection` assumption as ever.

use std::sync::Arc;

use super::events::ConnectRefused;
use super::reply::Reply;
use super::state::World;
use super::state::later::Later;
use super::tokens;
use super::wire::{OAuthError, RunnerSessionAnswer, RunnerSessionRequest};
use super::{FakeGitHub, RunnerSession};

/// The OAuth exchange's refusal of a runner credential.
pub(crate) fn invalid_client(description: impl Into<String>) -> Reply {
    Reply::json(401, &OAuthError { error: "invalid_client", error_description: description.into() })
}

impl World {
    /// Creates a session for the runner whose `credential` the request presented.
    pub(super) fn http_create_runner_session(
        &mut self,
        credential: &str,
        request: &RunnerSessionRequest,
    ) -> Reply {
        match self.connect(credential) {
            Ok((runner_id, connection)) => {
                let session_id = tokens::uuid(self.seed, "runner-session", self.next_number());
                self.unclaimed_sessions.insert(session_id.clone(), (runner_id, connection));
                let unclaimed_ms = self.cfg.unclaimed_session_ms;
                self.after(unclaimed_ms, Later::UnclaimedSession { runner_id, connection });
                let mut agent = request.agent.clone();
                agent.id = runner_id;
                let owner_name = request.owner_name.clone();
                let answer =
                    RunnerSessionAnswer { session_id, owner_name, agent, use_fips_encryption: false };
                Reply::json(200, &answer)
            }
            Err(refused) => refusal(refused, request.agent.id),
        }
    }

    /// The session of `runner_id`'s connection `connection` was never taken up: its process is
    /// treated as dead (noticed under `dead-runner-detection`; a job assigned meanwhile is lost).
    pub(super) fn forget_unclaimed_session(&mut self, runner_id: i64, connection: u64) {
        let before = self.unclaimed_sessions.len();
        self.unclaimed_sessions.retain(|_, taken| *taken != (runner_id, connection));
        if self.unclaimed_sessions.len() == before {
            return;
        }
        if let Some(lost) = self.process_exited(runner_id, connection, false) {
            self.expire_lost_later(lost.runner_id, lost.request_id);
        }
    }
}

/// The answer to a refused session. Simplification: a deprecated runner version is refused with an
/// exception of the fake's own naming (the service's wire form for it is not public).
fn refusal(refused: ConnectRefused, runner_id: i64) -> Reply {
    match refused {
        ConnectRefused::InvalidConfig => invalid_client("The client credential is not valid."),
        ConnectRefused::Removed => invalid_client(format!("Registration {runner_id} was not found.")),
        ConnectRefused::AlreadyConnected | ConnectRefused::JobInProgress => Reply::exception(
            409,
            "TaskAgentSessionConflictException",
            "A session for this runner already exists.",
        ),
        ConnectRefused::VersionDeprecated => {
            Reply::exception(403, "RunnerVersionDeprecatedException", "The runner version is deprecated.")
        }
    }
}

impl FakeGitHub {
    /// A runner process takes up the session `session_id` that its `POST …/sessions` created: its
    /// polls and job reports go through the handle from here (direct calls; only the session's
    /// creation is HTTP). `None` when there is no such session waiting (the service gave up on it).
    pub fn claim_runner_session(&self, session_id: &str) -> Option<RunnerSession> {
        let (runner_id, connection) = self.shared.mutate(|w| w.unclaimed_sessions.remove(session_id))?;
        Some(RunnerSession { shared: Arc::clone(&self.shared), runner_id, connection })
    }
}
