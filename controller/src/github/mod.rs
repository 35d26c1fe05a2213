//! The GitHub side of the controller: [`ActionsClient`], a client for the GitHub Actions service (the
//! runner scale-set API the listener and the scale-set controllers use) and for GitHub's REST API
//! (registration tokens, legacy self-hosted runners).
//!
//! It speaks the wire format of ARC's Go client: the same paths, methods, JSON field names, status
//! codes and error bodies, so that it works against real GitHub and, unchanged, against any service
//! that answers the same way. Map of the module:
//!
//! - `clients`: the seam ([`GitHubTransport`]: HTTPS, or any `tower::Service`) and the per-process
//!   cache of clients ([`ActionsClients`]).
//! - `credentials`: what a GitHub config secret holds ([`GitHubCredentials`]).
//! - `client`: the client, its construction over any `tower::Service`, and its request plumbing.
//! - `config`: the `githubConfigUrl` and its scope.
//! - `admin` and `admin_session`: registration token → Actions service URL + admin JWT, refreshed
//!   near expiry.
//! - `app_key`, `app_jwt` and `installation_token`: GitHub App authentication (the app's RS256 JWT
//!   exchanged for an installation token, refreshed near expiry).
//! - `scale_sets`, `sessions`, `runners`, `legacy`: the operations, by area.
//! - `transport` and `retry`: the erased service, retries (retryablehttp's policy, no jitter) and
//!   per-attempt counters.
//! - [`wire`] and [`job_messages`]: the request and response bodies.
//! - [`error`]: [`ActionsError`], one variant per answer the controller branches on.
//! - `operation`: the names of the calls, for metrics, traces and fault plans.
//! - `https`, `connection` and `connector`: the production constructor ([`ActionsClient::https_with`])
//!   with its [`ConnectionOptions`] (an ARS's proxy and `githubServerTLS` CAs, or the environment's
//!   proxies).

mod admin;
mod admin_session;
mod app_jwt;
mod app_key;
mod client;
mod clients;
mod config;
mod connection;
mod connector;
mod credentials;
pub mod error;
mod https;
mod installation_token;
pub mod job_messages;
mod legacy;
mod operation;
mod retry;
mod runners;
mod scale_sets;
mod sessions;
mod transport;
pub mod wire;

pub use admin_session::{ADMIN_TOKEN_REFRESH_MARGIN, jwt_expiry};
pub use app_jwt::{APP_JWT_BACKDATE, APP_JWT_LIFETIME, app_jwt};
pub use app_key::{AppKey, AppKeyError};
pub use client::{ActionsClient, AppCredentials, Credentials};
pub use clients::{ActionsClients, GitHubTransport};
pub use config::{GitHubConfigUrl, Scope};
pub use connection::{ConnectionOptions, ProxyUrls, without_user_info};
pub use credentials::{CredentialsError, GitHubCredentials};
pub use error::ActionsError;
pub use installation_token::INSTALLATION_TOKEN_REFRESH_MARGIN;
pub use job_messages::JobMessage;
pub use legacy::{RUNNERS_PER_PAGE, next_page};
pub use operation::Operation;
pub use retry::RetryPolicy;
