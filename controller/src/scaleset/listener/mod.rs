//! The listener (ARC-MODEL §4, §5.2): the process that holds the scale set's message session at the
//! Actions service and turns its messages into Kubernetes writes. It is ARC's `ghalistener` on
//! `actions/scaleset`'s listener: one per AutoscalingRunnerSet, in its own pod.
//!
//! [`run`] is a listener pod's process, the one entry point the binary and anything else that runs a
//! listener pod share: it builds the GitHub client from the config's credentials on the process's
//! [`Inputs`] and runs a [`Listener`]. [`Listener::run`] is the whole lifecycle: create the session, scale from its statistics, run the
//! message loop until cancelled or until a step fails, and delete the session (best effort, 30 s).
//! Kubernetes writes use a plain client through `KubeApi` (counted, never cached): the
//! EphemeralRunnerSet's `replicas`/`patchID` and the EphemeralRunners' job fields.
//!
//! - [`session`]: the session lifecycle (state machine) and the queue calls with refresh-on-401.
//! - [`message_loop`]: the long poll and the \[SS\] handling order of a message.
//! - [`scaler`]: the pure desired-count and patch-ID decision; [`worker_scaler`]: 0.13's, when the
//!   `releases.scaleset_listener` switch is off.
//! - [`desired_count`]: the decision sent to the EphemeralRunnerSet.
//! - [`job_handlers`]: HandleJobStarted / HandleJobCompleted, with the \[V\] guarded Running write.
//! - [`error`]: why the listener stopped.

pub mod desired_count;
pub mod error;
pub mod job_handlers;
pub mod message_loop;
pub mod scaler;
pub mod session;
pub mod worker_scaler;

use std::time::Duration;

pub use error::ListenerError;
pub use session::{SessionConflictPolicy, SessionState};
/// The token that stops [`Listener::run`] (re-exported so callers need no `tokio-util` of their own).
pub use tokio_util::sync::CancellationToken;

use self::desired_count::{Decider, DesiredCount};
use self::job_handlers::JobHandlers;
use self::message_loop::MessageLoop;
use self::session::{MessageSession, Opening};
use crate::SharedClock;
use crate::github::{ActionsClient, ActionsError, ConnectionOptions};
use crate::inputs::Inputs;
use crate::runtime::api::KubeApi;
use crate::runtime::metrics::Metrics;
use crate::scaleset::resource_builder::ListenerConfig;
use crate::switches::Switches;

/// How long the final DeleteMessageSession may take (ARC: 30 s).
pub const SESSION_DELETE_TIMEOUT: Duration = Duration::from_secs(30);

/// A listener pod's process: the listener for `config` on `inputs`, until `cancel` fires (`Ok`) or a
/// step fails (`Err`; the pod's process then exits non-zero). `session_owner` is the pod's hostname,
/// as ARC names the session's owner; without one, the scale set's name is used.
pub async fn run(
    config: ListenerConfig,
    inputs: &Inputs,
    session_owner: Option<&str>,
    cancel: CancellationToken,
) -> Result<(), ListenerError> {
    let credentials = config.credentials.client_credentials().map_err(ListenerError::GitHubClient)?;
    // Proxies come from the pod's environment (the `<al>-proxy` secret); the CA from the config.
    let options = ConnectionOptions { proxy: None, root_ca_pem: config.server_root_ca.clone() };
    let github = inputs
        .github
        .client(&config.configure_url, credentials, &options, inputs.clock.clone(), inputs.metrics.clone())
        .map_err(ListenerError::GitHubClient)?;
    let mut listener = Listener::new(
        config,
        inputs.client.clone(),
        github,
        inputs.clock.clone(),
        inputs.metrics.clone(),
        inputs.switches,
    )?;
    if let Some(owner) = session_owner {
        listener = listener.with_session_owner(owner);
    }
    listener.run(cancel).await
}

/// One scale set's listener. Build it with [`Listener::new`], adjust it with the `with_*` methods,
/// and [`Listener::run`] it.
pub struct Listener {
    config: ListenerConfig,
    api: KubeApi,
    github: ActionsClient,
    clock: SharedClock,
    switches: Switches,
    session_owner: String,
    conflict_policy: SessionConflictPolicy,
    delete_timeout: Duration,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("scale_set_id", &self.config.runner_scale_set_id)
            .field("runner_set_name", &self.config.ephemeral_runner_set_name)
            .field("session_owner", &self.session_owner)
            .field("conflict_policy", &self.conflict_policy)
            .field("switches", &self.switches)
            .finish_non_exhaustive()
    }
}

/// The session-conflict policy of the listener the switches select: \[SS\] exits, 0.13 retries.
fn conflict_policy_of(switches: &Switches) -> SessionConflictPolicy {
    if switches.releases.scaleset_listener {
        SessionConflictPolicy::Exit
    } else {
        SessionConflictPolicy::ARC_0_13
    }
}

impl Listener {
    /// A listener for the scale set `config` describes. Kubernetes calls go through `client`
    /// (counted in `metrics`), GitHub calls through `github`. The session owner defaults to the
    /// scale set's name; a conflicting session makes the listener fail at once (\[SS\]).
    ///
    /// Fails when the config does not validate or names negative runner counts.
    pub fn new(
        config: ListenerConfig,
        client: kube::Client,
        github: ActionsClient,
        clock: SharedClock,
        metrics: Metrics,
        switches: Switches,
    ) -> Result<Self, ListenerError> {
        config.validate()?;
        if config.min_runners < 0 || config.max_runners < 0 {
            return Err(ListenerError::NegativeRunners { min: config.min_runners, max: config.max_runners });
        }
        let session_owner = if config.runner_scale_set_name.is_empty() {
            config.ephemeral_runner_set_name.clone()
        } else {
            config.runner_scale_set_name.clone()
        };
        Ok(Listener {
            api: KubeApi::new(client, &metrics),
            config,
            github,
            clock,
            switches,
            session_owner,
            conflict_policy: conflict_policy_of(&switches),
            delete_timeout: SESSION_DELETE_TIMEOUT,
        })
    }

    /// The session's owner name (ARC: the listener pod's hostname).
    #[must_use]
    pub fn with_session_owner(mut self, owner: impl Into<String>) -> Self {
        self.session_owner = owner.into();
        self
    }

    /// What to do when another listener holds the session ([`SessionConflictPolicy::ARC_0_13`]
    /// retries as ARC 0.13 did).
    #[must_use]
    pub fn with_session_conflict_policy(mut self, policy: SessionConflictPolicy) -> Self {
        self.conflict_policy = policy;
        self
    }

    /// How long the final DeleteMessageSession may take.
    #[must_use]
    pub fn with_session_delete_timeout(mut self, timeout: Duration) -> Self {
        self.delete_timeout = timeout;
        self
    }

    /// Runs the listener until `cancel` fires (`Ok`) or a step fails (`Err`); either way the session,
    /// if one was opened, is deleted before returning.
    pub async fn run(self, cancel: CancellationToken) -> Result<(), ListenerError> {
        let started = self.clock.now();
        let scale_set_id = self.config.runner_scale_set_id;
        tracing::info!(
            scale_set_id,
            runner_set = %format!("{}/{}", self.config.ephemeral_runner_set_namespace, self.config.ephemeral_runner_set_name),
            min_runners = self.config.min_runners,
            max_runners = self.config.max_runners,
            "starting the listener"
        );
        let new_session =
            || MessageSession::new(self.github.clone(), scale_set_id, self.session_owner.clone());
        let mut session = new_session();
        let result = loop {
            let result = self.listen(&mut session, &cancel).await;
            match &result {
                Err(ListenerError::RefreshSession(error)) if self.reopens_when_session_gone(error) => {
                    tracing::warn!(%error, "the message session is gone; opening a new one");
                    session = new_session();
                }
                _ => break result,
            }
        };
        session.close(self.delete_timeout).await;
        let ran_for = self.clock.now().duration_since(started);
        match &result {
            Ok(()) => tracing::info!(?ran_for, "listener stopped"),
            Err(error) => tracing::error!(?ran_for, %error, "listener failed"),
        }
        result
    }

    /// With `fixes.new_session_when_session_gone` (actions/scaleset #123): a refresh answered 404 means
    /// the service dropped the session, so the listener opens a new one instead of exiting.
    fn reopens_when_session_gone(&self, error: &ActionsError) -> bool {
        self.switches.fixes.new_session_when_session_gone && error.is_not_found()
    }

    async fn listen(
        &self,
        session: &mut MessageSession,
        cancel: &CancellationToken,
    ) -> Result<(), ListenerError> {
        if session.open(self.conflict_policy, cancel).await? == Opening::Cancelled {
            return Ok(());
        }
        let statistics = session
            .statistics()
            .ok_or_else(|| ListenerError::MissingStatistics { what: "the session".into() })?;
        let config = &self.config;
        let namespace = &config.ephemeral_runner_set_namespace;
        let scaleset_listener = self.switches.releases.scaleset_listener;
        let decider = Decider::new(scaleset_listener, config.min_runners, config.max_runners);
        let desired = DesiredCount::new(
            decider,
            self.api.clone(),
            namespace.clone(),
            config.ephemeral_runner_set_name.clone(),
        );
        let jobs = JobHandlers::new(self.api.clone(), namespace.clone(), self.switches);
        let max_capacity = u32::try_from(config.max_runners).unwrap_or(0);
        let acquire_before_ack = self.switches.fixes.acquire_before_ack;
        MessageLoop::new(session, desired, jobs, max_capacity, statistics, acquire_before_ack)
            .exit_when_poll_fails(self.switches.fixes.listener_exits_when_poll_fails)
            .reread_statistics_when_quiet(self.switches.fixes.reread_statistics_when_quiet)
            .acquire_acquirable_on_open(self.switches.fixes.acquire_acquirable_jobs_on_open)
            .run(cancel)
            .await
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::sync::Arc;

    use bytes::Bytes;
    use http_body_util::Full;

    use super::*;
    use crate::SystemClock;
    use crate::github::Credentials;
    use crate::github::GitHubCredentials;
    use crate::runtime::testing::ScriptedApi;
    use crate::scaleset::resource_builder::ListenerConfigError;

    fn config() -> ListenerConfig {
        ListenerConfig {
            configure_url: "https://github.com/octo".into(),
            credentials: GitHubCredentials { github_token: "ghp_x".into(), ..Default::default() },
            ephemeral_runner_set_namespace: "runners".into(),
            ephemeral_runner_set_name: "arc".into(),
            max_runners: 3,
            min_runners: 0,
            runner_scale_set_id: 7,
            ..ListenerConfig::default()
        }
    }

    fn build(config: ListenerConfig) -> Result<Listener, ListenerError> {
        let clock: SharedClock = Arc::new(SystemClock);
        let answer = |_request| async { Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::new()))) };
        let token = Credentials::Token("ghp_x".into());
        let github = ActionsClient::new(
            tower::service_fn(answer),
            "https://github.com/octo",
            token,
            clock.clone(),
            Metrics::new(),
        )
        .expect("a client");
        let client = ScriptedApi::new().client();
        Listener::new(config, client, github, clock, Metrics::new(), Switches::default())
    }

    #[tokio::test]
    async fn a_valid_config_builds_a_listener_owned_by_its_scale_set_name() {
        let listener = build(ListenerConfig { runner_scale_set_name: "arc-set".into(), ..config() }).unwrap();
        assert_eq!(listener.session_owner, "arc-set");
        assert_eq!(listener.conflict_policy, SessionConflictPolicy::Exit);
        let unnamed = build(config()).unwrap().with_session_owner("pod-0");
        assert_eq!(unnamed.session_owner, "pod-0");
    }

    #[tokio::test]
    async fn an_invalid_or_negative_config_is_refused_before_anything_runs() {
        let missing = build(ListenerConfig { runner_scale_set_id: 0, ..config() }).unwrap_err();
        assert!(
            matches!(missing, ListenerError::Config(ListenerConfigError::MissingScaleSetId)),
            "{missing}"
        );
        let negative = build(ListenerConfig { min_runners: -2, max_runners: -1, ..config() }).unwrap_err();
        assert!(matches!(negative, ListenerError::NegativeRunners { min: -2, max: -1 }), "{negative}");
    }
}
