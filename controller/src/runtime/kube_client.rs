//! The layers every Kubernetes client of the controller goes through, in its binary and wherever else
//! it runs: client-go's retry after `Retry-After` ([`retry_after`](super::retry_after)) outside, and
//! its QPS and burst limiter ([`client_limit`](super::client_limit)) inside, so each try, retries
//! included, waits for a token. ARC gets both from client-go: its manager sets 20 QPS and burst 30
//! (`main.go`'s `--k8s-client-rate-limiter-qps` and `-burst`, gha-runner-scale-set-0.13.1 :154–155,
//! :227–229), and its listener keeps client-go's defaults for a `rest.Config` without them, 5 and 10
//! (`cmd/ghalistener/worker/worker.go` builds it from `rest.InClusterConfig()`).

use tower::retry::Retry;

use super::client_limit::{ClientRateLimit, ClientRateLimitLayer};
use super::retry_after::RetryAfterPolicy;

/// The controller's client QPS (ARC's `--k8s-client-rate-limiter-qps` default).
pub const DEFAULT_QPS: f64 = 20.0;
/// The controller's client burst (ARC's `--k8s-client-rate-limiter-burst` default).
pub const DEFAULT_BURST: u32 = 30;
/// client-go's QPS for a config that sets none: the listener's.
pub const CLIENT_GO_QPS: f64 = 5.0;
/// client-go's burst for a config that sets none: the listener's.
pub const CLIENT_GO_BURST: u32 = 10;

/// Retry after `Retry-After` over a QPS and burst limit. The service it wraps must be cheap to clone
/// (the binary puts a buffer under it).
#[derive(Clone)]
pub struct KubeClientLayer {
    limit: ClientRateLimitLayer,
}

impl KubeClientLayer {
    /// `qps` requests a second with bursts of `burst`, each try counted.
    pub fn new(qps: f64, burst: u32) -> Self {
        KubeClientLayer { limit: ClientRateLimitLayer::new(qps, burst) }
    }

    /// Retry after `Retry-After` with no QPS limit (client-go's `QPS: -1`).
    pub fn unlimited() -> Self {
        KubeClientLayer { limit: ClientRateLimitLayer::unlimited() }
    }

    /// client-go's defaults, as ARC's listener has them.
    pub fn client_go_defaults() -> Self {
        KubeClientLayer::new(CLIENT_GO_QPS, CLIENT_GO_BURST)
    }

    /// A client of the cluster the environment names (kubeconfig, or the pod's service account) with
    /// these layers over a buffer, kube's own retry layer turned off.
    pub async fn infer(&self) -> Result<kube::Client, tower::BoxError> {
        let mut config = kube::Config::infer().await?;
        config.default_retry = false;
        Ok(kube::client::ClientBuilder::try_from(config)?
            .with_layer(&tower::buffer::BufferLayer::new(1024))
            .with_layer(self)
            .build())
    }

    /// A client over `service` with these layers, default namespace `default`.
    pub fn client<S, B>(&self, service: S) -> kube::Client
    where
        S: tower::Service<http::Request<kube::client::Body>, Response = http::Response<B>>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<tower::BoxError>,
        B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
        B::Error: Into<tower::BoxError>,
    {
        kube::client::ClientBuilder::new(service, "default").with_layer(self).build()
    }
}

impl Default for KubeClientLayer {
    fn default() -> Self {
        KubeClientLayer::new(DEFAULT_QPS, DEFAULT_BURST)
    }
}

impl<S> tower::Layer<S> for KubeClientLayer {
    type Service = Retry<RetryAfterPolicy, ClientRateLimit<S>>;

    fn layer(&self, inner: S) -> Self::Service {
        Retry::new(RetryAfterPolicy::default(), tower::Layer::layer(&self.limit, inner))
    }
}
