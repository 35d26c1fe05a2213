//! Client-side request rate limiting for the Kubernetes client, like client-go's QPS and burst
//! (controller-runtime defaults: 20 QPS, burst 30). A tower layer whose readiness waits for a token
//! of a `BucketRateLimiter`; the client's own buffer calls `poll_ready` before every request.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::time::Sleep;

use super::rate_limiter::{BucketRateLimiter, RateLimiter};

/// Limits requests through the wrapped service to `qps` a second with bursts of `burst`, or not at
/// all (client-go's `QPS: -1`).
#[derive(Clone)]
pub struct ClientRateLimitLayer {
    bucket: Option<Arc<BucketRateLimiter>>,
}

impl ClientRateLimitLayer {
    /// `qps` requests a second, `burst` at once.
    pub fn new(qps: f64, burst: u32) -> Self {
        ClientRateLimitLayer { bucket: Some(Arc::new(BucketRateLimiter::new(qps, burst))) }
    }

    /// No limit.
    pub fn unlimited() -> Self {
        ClientRateLimitLayer { bucket: None }
    }
}

impl<S> tower::Layer<S> for ClientRateLimitLayer {
    type Service = ClientRateLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ClientRateLimit { inner, bucket: self.bucket.clone(), wait: None, reserved: false }
    }
}

/// A service that becomes ready only once a token is available.
pub struct ClientRateLimit<S> {
    inner: S,
    bucket: Option<Arc<BucketRateLimiter>>,
    wait: Option<Pin<Box<Sleep>>>,
    reserved: bool,
}

/// A copy shares the bucket and holds no token of its own: it takes one when it is next polled ready
/// (so a retry waits for a token, as client-go's `tryThrottle` makes it).
impl<S: Clone> Clone for ClientRateLimit<S> {
    fn clone(&self) -> Self {
        ClientRateLimit {
            inner: self.inner.clone(),
            bucket: self.bucket.clone(),
            wait: None,
            reserved: false,
        }
    }
}

impl<S, R> tower::Service<R> for ClientRateLimit<S>
where
    S: tower::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if let (false, Some(bucket)) = (self.reserved, &self.bucket) {
            let delay = RateLimiter::<()>::when(bucket.as_ref(), &());
            self.wait = (!delay.is_zero()).then(|| Box::pin(tokio::time::sleep(delay)));
            self.reserved = true;
        }
        if let Some(wait) = self.wait.as_mut() {
            ready!(wait.as_mut().poll(cx));
            self.wait = None;
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        self.reserved = false;
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tower::{Layer, Service, ServiceExt};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn requests_beyond_the_burst_wait_for_tokens() {
        let mut service = ClientRateLimitLayer::new(10.0, 2)
            .layer(tower::service_fn(|x: u32| async move { Ok::<_, ()>(x) }));
        let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        for i in 0..4 {
            service.ready().await.unwrap();
            service.call(i).await.unwrap();
        }
        assert_eq!(start.elapsed(), Duration::from_millis(200), "two free, then one per 100 ms");
    }
}
