//! [`ActionsError`]: every answer of GitHub and the Actions service the controller branches on, as a
//! typed value.
//!
//! The mapping follows the Go clients ARC uses: an Actions service error body is
//! `{"typeName": "...AgentExistsException", "message": "..."}` and the exception name is matched by
//! substring; a 401 on a message-queue call means the queue token expired; a 409 on session create
//! means another listener holds the session; a 422 on the legacy REST runner delete means the runner
//! is busy. Everything else keeps its status code and message.

use super::operation::Operation;

/// A boxed error from the transport underneath the client.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a GitHub or Actions service call failed.
#[derive(Debug, thiserror::Error)]
pub enum ActionsError {
    /// 409 `AgentExistsException`: a runner with that name is already registered (JIT config).
    #[error("{operation}: a runner with this name already exists: {message}")]
    AgentExists {
        /// The call.
        operation: Operation,
        /// The service's message.
        message: String,
    },
    /// 400 `JobStillRunningException`: the runner has a job assigned or running; it was not removed.
    #[error("{operation}: the runner still has a job running: {message}")]
    JobStillRunning {
        /// The call.
        operation: Operation,
        /// The service's message.
        message: String,
    },
    /// 404 `AgentNotFoundException`: no runner with that id.
    #[error("{operation}: runner not found: {message}")]
    RunnerNotFound {
        /// The call.
        operation: Operation,
        /// The service's message.
        message: String,
    },
    /// 401 on a message-queue call: the session's queue token expired; refresh the session.
    #[error("{operation}: the message queue token expired: {message}")]
    QueueTokenExpired {
        /// The call.
        operation: Operation,
        /// The service's message.
        message: String,
    },
    /// 409 on session create: another session is open for the scale set.
    #[error("{operation}: another message session is open for this scale set: {message}")]
    SessionConflict {
        /// The call.
        operation: Operation,
        /// The service's message.
        message: String,
    },
    /// Legacy REST 422 on runner delete: the runner is running a job.
    #[error("{operation}: the runner is busy running a job: {message}")]
    RunnerBusy {
        /// The call.
        operation: Operation,
        /// GitHub's message.
        message: String,
    },
    /// A 404 other than a missing runner, or a lookup that found nothing where one was required.
    #[error("{operation}: not found: {message}")]
    NotFound {
        /// The call.
        operation: Operation,
        /// What was missing.
        message: String,
    },
    /// A lookup that should find at most one object found several.
    #[error("{operation}: {message}")]
    Ambiguous {
        /// The call.
        operation: Operation,
        /// What was duplicated.
        message: String,
    },
    /// Any other non-success status.
    #[error("{operation}: HTTP {status}{}: {message}", exception.as_deref().map(|e| format!(" {e}")).unwrap_or_default())]
    Http {
        /// The call.
        operation: Operation,
        /// The status code.
        status: u16,
        /// The exception `typeName` of an Actions service error body, if there was one.
        exception: Option<String>,
        /// The message (from the body, or the body itself).
        message: String,
    },
    /// The request never got an answer (connection, TLS, body read) after all retries.
    #[error("{operation}: transport error: {source}")]
    Transport {
        /// The call.
        operation: Operation,
        /// The underlying error.
        #[source]
        source: BoxError,
    },
    /// No answer within the request timeout after all retries.
    #[error("{operation}: no answer within {timeout_ms} ms")]
    Timeout {
        /// The call.
        operation: Operation,
        /// The per-attempt timeout.
        timeout_ms: u64,
    },
    /// A success answer whose body is not what the API documents.
    #[error("{operation}: cannot decode the answer: {message}")]
    Decode {
        /// The call.
        operation: Operation,
        /// What went wrong.
        message: String,
    },
    /// The client was configured with something unusable (a bad URL, an empty token, a bad argument).
    #[error("{message}")]
    Config {
        /// What is wrong.
        message: String,
    },
}

impl ActionsError {
    /// A short, stable name of the variant, for metric labels (`job_still_running`).
    pub fn kind(&self) -> &'static str {
        match self {
            ActionsError::AgentExists { .. } => "agent_exists",
            ActionsError::JobStillRunning { .. } => "job_still_running",
            ActionsError::RunnerNotFound { .. } => "runner_not_found",
            ActionsError::QueueTokenExpired { .. } => "queue_token_expired",
            ActionsError::SessionConflict { .. } => "session_conflict",
            ActionsError::RunnerBusy { .. } => "runner_busy",
            ActionsError::NotFound { .. } => "not_found",
            ActionsError::Ambiguous { .. } => "ambiguous",
            ActionsError::Http { .. } => "http_error",
            ActionsError::Transport { .. } => "transport_error",
            ActionsError::Timeout { .. } => "timeout",
            ActionsError::Decode { .. } => "decode_error",
            ActionsError::Config { .. } => "config_error",
        }
    }

    /// The HTTP status the error came from, when it came from an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            ActionsError::AgentExists { .. } | ActionsError::SessionConflict { .. } => Some(409),
            ActionsError::JobStillRunning { .. } => Some(400),
            ActionsError::RunnerNotFound { .. } | ActionsError::NotFound { .. } => Some(404),
            ActionsError::QueueTokenExpired { .. } => Some(401),
            ActionsError::RunnerBusy { .. } => Some(422),
            ActionsError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// A JIT config was refused because the runner name is taken (ARC: `RunnerExistsError`).
    pub fn is_agent_exists(&self) -> bool {
        matches!(self, ActionsError::AgentExists { .. })
    }

    /// RemoveRunner was refused because a job is assigned (ARC: leave the runner, retry later).
    pub fn is_job_still_running(&self) -> bool {
        matches!(self, ActionsError::JobStillRunning { .. })
    }

    /// The runner does not exist at the service.
    pub fn is_runner_not_found(&self) -> bool {
        matches!(self, ActionsError::RunnerNotFound { .. })
    }

    /// The message-queue token expired: refresh the session and retry once.
    pub fn is_queue_token_expired(&self) -> bool {
        matches!(self, ActionsError::QueueTokenExpired { .. })
    }

    /// Another session is open for the scale set.
    pub fn is_session_conflict(&self) -> bool {
        matches!(self, ActionsError::SessionConflict { .. })
    }

    /// The legacy runner is busy (REST 422 on delete).
    pub fn is_runner_busy(&self) -> bool {
        matches!(self, ActionsError::RunnerBusy { .. })
    }

    /// Something other than a runner was not found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ActionsError::NotFound { .. })
    }

    /// The call got no answer at all (transport failure or timeout).
    pub fn is_transport(&self) -> bool {
        matches!(self, ActionsError::Transport { .. } | ActionsError::Timeout { .. })
    }
}

/// Turns a non-success answer into the typed error it means for `operation`.
pub(crate) fn from_answer(operation: Operation, status: u16, body: ErrorBody) -> ActionsError {
    let ErrorBody { exception, message } = body;
    let named = |name: &str| exception.as_deref().is_some_and(|e| e.contains(name));
    if named("AgentExistsException") {
        return ActionsError::AgentExists { operation, message };
    }
    if named("JobStillRunningException") {
        return ActionsError::JobStillRunning { operation, message };
    }
    if named("AgentNotFoundException") {
        return ActionsError::RunnerNotFound { operation, message };
    }
    match (status, operation) {
        (401, op) if op.uses_queue_token() => ActionsError::QueueTokenExpired { operation, message },
        (409, Operation::CreateSession) => ActionsError::SessionConflict { operation, message },
        (422, Operation::DeleteRunner) => ActionsError::RunnerBusy { operation, message },
        (404, _) => ActionsError::NotFound { operation, message },
        _ => ActionsError::Http { operation, status, exception, message },
    }
}

/// What an error answer's body said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ErrorBody {
    /// The Actions service exception `typeName`, if the body was one.
    pub exception: Option<String>,
    /// The message, or the raw body, or "unknown exception" for an empty body.
    pub message: String,
}

impl ErrorBody {
    /// Reads an error body as ARC's client does: empty → "unknown exception"; `text/plain` → the text;
    /// JSON → `typeName` + `message` (Actions) or `message` (REST); anything else → the raw text.
    pub(crate) fn parse(content_type: Option<&str>, body: &[u8]) -> ErrorBody {
        let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
        if body.is_empty() {
            return ErrorBody { exception: None, message: "unknown exception".into() };
        }
        let text = String::from_utf8_lossy(body).into_owned();
        if content_type.is_some_and(|ct| ct.contains("text/plain")) {
            return ErrorBody { exception: None, message: text };
        }
        match serde_json::from_slice::<super::wire::ErrorResponse>(body) {
            Ok(parsed) => ErrorBody {
                exception: parsed.type_name.filter(|t| !t.is_empty()),
                message: parsed.message.unwrap_or(text),
            },
            Err(_) => ErrorBody { exception: None, message: text },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(type_name: &str) -> ErrorBody {
        let body = format!(r#"{{"typeName":"GitHub.DistributedTask.WebApi.{type_name}","message":"m"}}"#);
        ErrorBody::parse(Some("application/json"), body.as_bytes())
    }

    #[test]
    fn exception_names_map_to_their_variants_whatever_the_status() {
        assert!(
            from_answer(Operation::GenerateJitConfig, 409, json("AgentExistsException")).is_agent_exists()
        );
        assert!(
            from_answer(Operation::RemoveRunner, 400, json("JobStillRunningException"))
                .is_job_still_running()
        );
        assert!(
            from_answer(Operation::RemoveRunner, 404, json("AgentNotFoundException")).is_runner_not_found()
        );
    }

    #[test]
    fn statuses_map_to_variants_by_operation() {
        let plain = || ErrorBody { exception: None, message: "x".into() };
        assert!(from_answer(Operation::GetMessage, 401, plain()).is_queue_token_expired());
        assert!(from_answer(Operation::AcquireJobs, 401, plain()).is_queue_token_expired());
        assert!(!from_answer(Operation::GetRunner, 401, plain()).is_queue_token_expired());
        assert!(from_answer(Operation::CreateSession, 409, plain()).is_session_conflict());
        assert!(from_answer(Operation::DeleteRunner, 422, plain()).is_runner_busy());
        assert!(from_answer(Operation::GetScaleSet, 404, plain()).is_not_found());
        let other = from_answer(Operation::CreateScaleSet, 500, plain());
        assert_eq!((other.kind(), other.status()), ("http_error", Some(500)));
    }

    #[test]
    fn error_bodies_are_read_like_arcs_client_reads_them() {
        assert_eq!(ErrorBody::parse(None, b"").message, "unknown exception");
        assert_eq!(ErrorBody::parse(Some("text/plain; charset=utf-8"), b"boom").message, "boom");
        let rest = ErrorBody::parse(Some("application/json"), br#"{"message":"Bad credentials"}"#);
        assert_eq!(rest, ErrorBody { exception: None, message: "Bad credentials".into() });
        let bom = ErrorBody::parse(None, b"\xef\xbb\xbf{\"typeName\":\"T\",\"message\":\"m\"}");
        assert_eq!(bom.exception.as_deref(), Some("T"));
        assert_eq!(ErrorBody::parse(None, b"<html>").message, "<html>");
    }
}
