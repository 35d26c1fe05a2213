//! [`ActionsClient`]: the controller's and listener's client for the Actions service (the scale-set
//! API) and GitHub's REST API (tokens, legacy runners).
//!
//! Built like `kube::Client`, from any `tower::Service` plus configuration; it holds no global state,
//! reads time only from the injected [`Clock`](crate::Clock), and waits only with `tokio::time`. The
//! operations live in sibling modules by area (`scale_sets`, `sessions`, `runners`, `legacy`); this
//! module holds the shared request plumbing: URLs, authentication headers, decoding and the call
//! counters.

use std::fmt;
use std::sync::Arc;

use http::Method;
use http::header::{ACCEPT, AUTHORIZATION, USER_AGENT};
use serde::de::DeserializeOwned;

use super::admin_session::AdminSession;
use super::app_key::{AppKey, AppKeyError};
use super::config::GitHubConfigUrl;
use super::error::{ActionsError, BoxError, ErrorBody, from_answer};
use super::operation::Operation;
use super::retry::RetryPolicy;
use super::transport::{Answer, BoxedService, Call, HttpRequest, Transport, boxed, guard_writes};
use super::wire::{API_VERSION, InstallationAccessToken};
use crate::runtime::clock::SharedClock;
use crate::runtime::lease_deadline::LeaseDeadline;
use crate::runtime::metrics::{GITHUB_CALLS_TOTAL, Metrics};

/// How the client authenticates to GitHub.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A personal access token (classic, `admin:org` / `repo` scope as ARC documents).
    Token(String),
    /// A GitHub App installation: REST calls carry an installation token bought with the app's JWT.
    App(AppCredentials),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Token(_) => f.write_str("Credentials::Token(<redacted>)"),
            Credentials::App(app) => write!(
                f,
                "Credentials::App {{ app_id: {:?}, installation_id: {}, key: <redacted> }}",
                app.app_id, app.installation_id
            ),
        }
    }
}

/// A GitHub App's id, the installation the runners belong to, and the app's private key.
#[derive(Clone)]
pub struct AppCredentials {
    /// The app id (or client id): the JWT's `iss`.
    pub app_id: String,
    /// The installation whose token the client uses.
    pub installation_id: i64,
    /// The app's private key.
    pub key: Arc<AppKey>,
}

impl AppCredentials {
    /// Credentials of app `app_id`'s installation `installation_id`, with the PEM private key `pem`.
    pub fn new(app_id: &str, installation_id: i64, pem: &str) -> Result<Self, AppKeyError> {
        let key = Arc::new(AppKey::from_pem(pem)?);
        Ok(AppCredentials { app_id: app_id.trim().to_string(), installation_id, key })
    }
}

impl PartialEq for AppCredentials {
    fn eq(&self, other: &Self) -> bool {
        self.app_id == other.app_id
            && self.installation_id == other.installation_id
            && Arc::ptr_eq(&self.key, &other.key)
    }
}

impl Eq for AppCredentials {}

/// A client for the GitHub Actions service and GitHub's REST API. Cheap to clone; clones share the
/// transport and the cached admin token.
#[derive(Clone)]
pub struct ActionsClient {
    pub(crate) inner: Arc<ClientInner>,
}

pub(crate) struct ClientInner {
    pub transport: Transport,
    pub config: GitHubConfigUrl,
    pub credentials: Credentials,
    pub clock: SharedClock,
    pub user_agent: String,
    pub admin: tokio::sync::Mutex<Option<AdminSession>>,
    pub installation: tokio::sync::Mutex<Option<InstallationAccessToken>>,
}

impl fmt::Debug for ActionsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActionsClient")
            .field("config", &self.inner.config.as_str())
            .field("credentials", &self.inner.credentials)
            .field("retry", &self.inner.transport.retry)
            .finish_non_exhaustive()
    }
}

impl ActionsClient {
    /// Builds a client over `service` for the scope named by `github_config_url`.
    ///
    /// `service` may be any `tower::Service` taking `http::Request<Full<Bytes>>` with absolute URIs.
    /// Fails with [`ActionsError::Config`] on a malformed URL, an empty token, or an app without id or
    /// installation.
    pub fn new<S, B>(
        service: S,
        github_config_url: &str,
        credentials: Credentials,
        clock: SharedClock,
        metrics: Metrics,
    ) -> Result<Self, ActionsError>
    where
        S: tower::Service<HttpRequest, Response = http::Response<B>> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
        B: http_body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        Self::over(boxed(service), github_config_url, credentials, clock, metrics)
    }

    /// [`ActionsClient::new`] over an already erased service.
    pub(crate) fn over(
        service: BoxedService,
        github_config_url: &str,
        credentials: Credentials,
        clock: SharedClock,
        metrics: Metrics,
    ) -> Result<Self, ActionsError> {
        let config = GitHubConfigUrl::parse(github_config_url)?;
        check_credentials(&credentials)?;
        let transport = Transport { service, retry: RetryPolicy::default(), metrics };
        let user_agent = format!("arc-controller/{}", env!("CARGO_PKG_VERSION"));
        let inner = ClientInner {
            transport,
            config,
            credentials,
            clock,
            user_agent,
            admin: Default::default(),
            installation: Default::default(),
        };
        Ok(ActionsClient { inner: Arc::new(inner) })
    }

    /// The same client with another retry policy. Call before cloning: clones made earlier keep the
    /// old policy and the old token cache.
    pub fn with_retry_policy(self, retry: RetryPolicy) -> Self {
        self.rebuild(|inner| inner.transport.retry = retry)
    }

    /// The same client with another `User-Agent` (ARC: `actions-runner-controller/<version> (...)`).
    pub fn with_user_agent(self, user_agent: impl Into<String>) -> Self {
        let user_agent = user_agent.into();
        self.rebuild(|inner| inner.user_agent = user_agent)
    }

    /// The same client, its writes refused unsent once `deadline` has passed. Call before cloning.
    pub(crate) fn with_write_guard(self, deadline: LeaseDeadline) -> Self {
        self.rebuild(|inner| {
            inner.transport.service = guard_writes(inner.transport.service.clone(), deadline)
        })
    }

    fn rebuild(self, change: impl FnOnce(&mut ClientInner)) -> Self {
        let old = &self.inner;
        let mut inner = ClientInner {
            transport: old.transport.clone(),
            config: old.config.clone(),
            credentials: old.credentials.clone(),
            clock: old.clock.clone(),
            user_agent: old.user_agent.clone(),
            admin: Default::default(),
            installation: Default::default(),
        };
        change(&mut inner);
        ActionsClient { inner: Arc::new(inner) }
    }

    /// The parsed configuration URL.
    pub fn config_url(&self) -> &GitHubConfigUrl {
        &self.inner.config
    }

    /// The retry policy in force.
    pub fn retry_policy(&self) -> RetryPolicy {
        self.inner.transport.retry
    }

    /// Runs one logical call and counts its outcome in `arc_github_calls_total{operation,outcome}`
    /// (`ok`, or the error's [`ActionsError::kind`]).
    pub(crate) async fn observe<T>(
        &self,
        operation: Operation,
        call: impl Future<Output = Result<T, ActionsError>>,
    ) -> Result<T, ActionsError> {
        let result = call.await;
        let outcome = result.as_ref().map_or_else(ActionsError::kind, |_| "ok");
        let labels = [("operation", operation.as_str()), ("outcome", outcome)];
        self.inner.transport.metrics.inc(GITHUB_CALLS_TOTAL, &labels);
        result
    }

    /// Sends `call`; an answer whose status is not in `ok` becomes the typed error it means.
    pub(crate) async fn exchange(&self, call: &Call, ok: &[u16]) -> Result<Answer, ActionsError> {
        let answer = self.inner.transport.send(call).await?;
        if ok.contains(&answer.status) {
            return Ok(answer);
        }
        let body = ErrorBody::parse(answer.content_type(), &answer.body);
        Err(from_answer(call.operation, answer.status, body))
    }

    /// A call to the Actions service at `path` (relative to the service URL), with the admin token,
    /// `api-version` and the query `params`. Refreshes the admin token first when needed.
    pub(crate) async fn service_call(
        &self,
        operation: Operation,
        method: Method,
        path: &str,
        params: &[(&str, &str)],
    ) -> Result<Call, ActionsError> {
        let admin = self.admin_session().await?;
        let base = join_path(&admin.service_url, path);
        let mut query: Vec<(&str, &str)> = params.to_vec();
        query.push(("api-version", API_VERSION));
        let url = with_query(&base, &query);
        self.with_common_headers(Call::new(operation, method, url))?
            .header(AUTHORIZATION, &format!("Bearer {}", admin.token))
    }

    /// A call to a message-queue URL or AcquireJobs, authorised by the session's queue token.
    pub(crate) fn queue_call(
        &self,
        operation: Operation,
        method: Method,
        url: String,
        queue_token: &str,
    ) -> Result<Call, ActionsError> {
        self.with_common_headers(Call::new(operation, method, url))?
            .header(AUTHORIZATION, &format!("Bearer {queue_token}"))
    }

    /// A call to GitHub's REST API at the absolute `url`, with the personal access token or the
    /// installation token (bought first if there is none or it is about to expire).
    pub(crate) async fn rest_call(
        &self,
        operation: Operation,
        method: Method,
        url: String,
    ) -> Result<Call, ActionsError> {
        let token = self.rest_token().await?;
        self.rest_call_with(operation, method, url, &token)
    }

    /// A REST call authorised by `bearer` (a PAT, an installation token, or an app JWT).
    pub(crate) fn rest_call_with(
        &self,
        operation: Operation,
        method: Method,
        url: String,
        bearer: &str,
    ) -> Result<Call, ActionsError> {
        self.with_common_headers(Call::new(operation, method, url))?
            .header(ACCEPT, "application/vnd.github+json")?
            .header("X-GitHub-Api-Version", "2022-11-28")?
            .header(AUTHORIZATION, &format!("Bearer {bearer}"))
    }

    fn with_common_headers(&self, call: Call) -> Result<Call, ActionsError> {
        call.header(USER_AGENT, &self.inner.user_agent)
    }
}

/// An empty token, or an app without id or installation, is a configuration error.
fn check_credentials(credentials: &Credentials) -> Result<(), ActionsError> {
    let problem = match credentials {
        Credentials::Token(token) if token.trim().is_empty() => "the GitHub token is empty",
        Credentials::App(app) if app.app_id.is_empty() => "the GitHub App id is empty",
        Credentials::App(app) if app.installation_id <= 0 => "the GitHub App installation id is not positive",
        _ => return Ok(()),
    };
    Err(ActionsError::Config { message: problem.into() })
}

/// Decodes a success answer's JSON body (a UTF-8 byte-order mark is dropped, as ARC does).
pub(crate) fn decode<T: DeserializeOwned>(operation: Operation, answer: &Answer) -> Result<T, ActionsError> {
    let body = answer.body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&answer.body);
    serde_json::from_slice(body).map_err(|e| ActionsError::Decode { operation, message: e.to_string() })
}

/// `base` and `path` joined with exactly one `/` between them (Go's `url.JoinPath`).
pub(crate) fn join_path(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// `url` with `params` merged into its query. Keys are sorted and values form-encoded, as Go's
/// `url.Values.Encode` does; a key given in `params` replaces the URL's own.
pub(crate) fn with_query(url: &str, params: &[(&str, &str)]) -> String {
    let (base, existing) = url.split_once('?').unwrap_or((url, ""));
    let mut pairs: Vec<(String, String)> = form_urlencoded::parse(existing.as_bytes())
        .into_owned()
        .filter(|(k, _)| !params.iter().any(|(p, _)| p == k))
        .collect();
    pairs.extend(params.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())));
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    if pairs.is_empty() {
        return base.to_string();
    }
    let query = form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    format!("{base}?{query}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_with_one_slash() {
        assert_eq!(join_path("https://svc/tenant/", "/_apis/x"), "https://svc/tenant/_apis/x");
        assert_eq!(join_path("https://svc/tenant", "_apis/x"), "https://svc/tenant/_apis/x");
    }

    #[test]
    fn queries_merge_sorted_and_encoded_and_params_replace_existing_keys() {
        assert_eq!(
            with_query("https://q/m?sessionId=s&lastMessageId=1", &[("lastMessageId", "5")]),
            "https://q/m?lastMessageId=5&sessionId=s"
        );
        assert_eq!(
            with_query("https://svc/x", &[("name", "my set"), ("api-version", "6.0-preview")]),
            "https://svc/x?api-version=6.0-preview&name=my+set"
        );
        assert_eq!(with_query("https://svc/x", &[]), "https://svc/x");
    }

    #[test]
    fn credentials_never_print_the_token() {
        let printed = format!("{:?}", Credentials::Token("ghp_secret".into()));
        assert!(!printed.contains("ghp_secret"));
    }
}
