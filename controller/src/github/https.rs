//! The production transport: hyper-util's pooled client over rustls with the *ring* crypto provider
//! (no aws-lc-rs, which needs cmake to build), trusting the platform's native roots plus the
//! [`ConnectionOptions`]' extra CAs, and going through the proxies they (or the environment) name
//! ([`super::connector`]).

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::RootCertStore;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

use super::client::{ActionsClient, Credentials};
use super::connection::ConnectionOptions;
use super::connector::{GitHubConnector, Proxies};
use super::error::ActionsError;
use crate::runtime::clock::SharedClock;
use crate::runtime::metrics::Metrics;

impl ActionsClient {
    /// A client that talks to real GitHub over HTTPS (plain HTTP is accepted for GitHub Enterprise
    /// Server URLs that use it, as ARC accepts them), with the default options: the platform's
    /// roots and the environment's proxies. Must be called inside a tokio runtime, which runs the
    /// connection pool's background tasks.
    pub fn https(
        github_config_url: &str,
        credentials: Credentials,
        clock: SharedClock,
        metrics: Metrics,
    ) -> Result<Self, ActionsError> {
        Self::https_with(github_config_url, credentials, &ConnectionOptions::default(), clock, metrics)
    }

    /// [`ActionsClient::https`] with `options` (an ARS's proxy and `githubServerTLS` CAs).
    ///
    /// Fails with [`ActionsError::Config`] when no root certificate can be loaded, a CA is not PEM,
    /// or the URL or credentials are unusable.
    pub fn https_with(
        github_config_url: &str,
        credentials: Credentials,
        options: &ConnectionOptions,
        clock: SharedClock,
        metrics: Metrics,
    ) -> Result<Self, ActionsError> {
        let tls = tls_config(&options.root_ca_pem)?;
        let proxies = Arc::new(Proxies::new(options.proxy.as_ref()));
        let connector = GitHubConnector::new(tls, proxies.clone());
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
        let service = tower::ServiceBuilder::new()
            .map_request(move |request| proxies.authorize(request))
            .service(client);
        ActionsClient::new(service, github_config_url, credentials, clock, metrics)
    }
}

/// rustls on *ring* trusting the native roots and every certificate in `extra_pem`.
fn tls_config(extra_pem: &str) -> Result<rustls::ClientConfig, ActionsError> {
    let config_error = |message: String| ActionsError::Config { message };
    let mut roots = RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    let (added, _ignored) = roots.add_parsable_certificates(native.certs);
    let extra: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(extra_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| config_error(format!("githubServerTLS: the CA certificate is not PEM: {e}")))?;
    if !extra_pem.trim().is_empty() && extra.is_empty() {
        return Err(config_error("githubServerTLS: the CA data holds no PEM certificate".into()));
    }
    for certificate in extra {
        roots.add(certificate).map_err(|e| config_error(format!("githubServerTLS: unusable CA: {e}")))?;
    }
    if added == 0 && roots.is_empty() {
        // Plain-HTTP servers still work; every TLS handshake will fail and say why.
        tracing::warn!(errors = ?native.errors, "no root certificates could be loaded");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| config_error(format!("TLS setup: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_that_is_not_pem_is_a_configuration_error() {
        let err = tls_config("not a certificate").unwrap_err();
        assert!(err.to_string().contains("githubServerTLS"), "{err}");
    }
}
