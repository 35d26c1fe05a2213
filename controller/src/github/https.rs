//! The production transport: hyper-util's pooled client over rustls with the *ring* crypto provider
//! and the platform's native root certificates (no aws-lc-rs, which needs cmake to build).

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::client::{ActionsClient, Credentials};
use super::error::ActionsError;
use crate::runtime::clock::SharedClock;
use crate::runtime::metrics::Metrics;

impl ActionsClient {
    /// A client that talks to real GitHub over HTTPS (plain HTTP is accepted for GitHub Enterprise
    /// Server URLs that use it). Must be called inside a tokio runtime, which runs the connection
    /// pool's background tasks.
    ///
    /// Fails with [`ActionsError::Config`] when the native root store cannot be loaded or the URL or
    /// token is unusable.
    pub fn https(
        github_config_url: &str,
        credentials: Credentials,
        clock: SharedClock,
        metrics: Metrics,
    ) -> Result<Self, ActionsError> {
        let provider = rustls::crypto::ring::default_provider();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(provider)
            .map_err(|e| ActionsError::Config {
                message: format!("cannot load the native root certificates: {e}"),
            })?
            .https_or_http()
            .enable_http1()
            .build();
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
        ActionsClient::new(client, github_config_url, credentials, clock, metrics)
    }
}
