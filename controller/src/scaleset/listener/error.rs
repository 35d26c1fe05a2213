//! [`ListenerError`]: why the listener stopped. Any of these ends the listener's `run`; in a pod
//! the process then exits non-zero and the AutoscalingListener controller recreates it (ARC-MODEL
//! §4.1 step 5).

use crate::github::ActionsError;
use crate::scaleset::resource_builder::ListenerConfigError;

/// Why the listener stopped.
#[derive(Debug, thiserror::Error)]
pub enum ListenerError {
    /// The listener config is unusable.
    #[error("invalid listener config: {0}")]
    Config(#[from] ListenerConfigError),
    /// The GitHub client could not be built from the config (bad URL, unsupported credentials).
    #[error("cannot build the GitHub client: {0}")]
    GitHubClient(#[source] ActionsError),
    /// `minRunners` or `maxRunners` is negative.
    #[error("invalid listener config: minRunners {min} and maxRunners {max} must not be negative")]
    NegativeRunners {
        /// minRunners.
        min: i32,
        /// maxRunners.
        max: i32,
    },
    /// Another listener holds the scale set's message session (409 on create), after `attempts`
    /// tries.
    #[error(
        "another message session is open for scale set {scale_set_id} after {attempts} attempt(s): {source}"
    )]
    SessionConflict {
        /// The scale set.
        scale_set_id: i64,
        /// Create attempts made.
        attempts: u32,
        /// The last 409.
        #[source]
        source: ActionsError,
    },
    /// CreateMessageSession failed with something other than a conflict.
    #[error("cannot create the message session: {0}")]
    CreateSession(#[source] ActionsError),
    /// RefreshMessageSession failed after a queue call found the token expired.
    #[error("cannot refresh the message session: {0}")]
    RefreshSession(#[source] ActionsError),
    /// A queue call (GetMessage, DeleteMessage, AcquireJobs) failed, or failed again after a refresh.
    #[error("message queue: {0}")]
    Queue(#[source] ActionsError),
    /// A queue call was attempted without an open session (a bug in the caller).
    #[error("no message session is open")]
    NoSession,
    /// A session or message came without the statistics the listener scales from.
    #[error("{what} carries no statistics")]
    MissingStatistics {
        /// `the session` or `message N`.
        what: String,
    },
    /// A message of a type the listener does not handle.
    #[error("message {message_id}: unsupported message type {message_type:?}")]
    UnsupportedMessage {
        /// The message.
        message_id: i64,
        /// Its type.
        message_type: String,
    },
    /// A message whose body is not a batch of job messages.
    #[error("message {message_id}: cannot decode the job messages: {source}")]
    MalformedMessage {
        /// The message.
        message_id: i64,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// The EphemeralRunnerSet patch (replicas, patchID) failed.
    #[error("cannot patch EphemeralRunnerSet {namespace}/{name}: {source}")]
    PatchRunnerSet {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Reading or patching an EphemeralRunner for JobStarted failed (NotFound excepted).
    #[error("cannot record the job on EphemeralRunner {namespace}/{name}: {source}")]
    PatchRunner {
        /// Its namespace.
        namespace: String,
        /// Its name (the runner name from JobStarted).
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
}

impl ListenerError {
    /// Whether a queue call got no answer at all (a transport error or timeout, after retries).
    pub fn is_transport(&self) -> bool {
        matches!(self, ListenerError::Queue(e) if e.is_transport())
    }
}
