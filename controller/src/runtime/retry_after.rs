//! The Kubernetes client's answer to "try again later", as client-go gives it to every ARC release
//! (`rest/with_retry.go`): an answer 429, or any 5xx, that carries `Retry-After: <whole seconds>` is
//! sent again after exactly that wait, at most [`MAX_RETRIES`] times (client-go's `maxRetries` of a
//! new request); every other answer is final, and so is the last one.
//!
//! kube's own retry layer (`RetryPolicy::server_retry`, on by `Config::default_retry`) differs: it
//! also retries 503 and 504 without the header, up to 15 times with jittered backoff, so the binary
//! turns it off and uses this one. Simplification: client-go also retries a GET whose connection was
//! reset or cut (after 1 s); a transport error is final here.

use std::pin::Pin;
use std::time::Duration;

use http::{Request, Response, StatusCode};
use kube::client::Body;

/// client-go's `maxRetries` for a request: ten retries after the first try.
pub const MAX_RETRIES: u32 = 10;

/// A `tower::retry::Policy` with client-go's rule; one per request (tower clones it for each call).
#[derive(Debug, Clone, Default)]
pub struct RetryAfterPolicy {
    retries: u32,
}

/// The wait an answer asks for, if it is one client-go retries: 429 or 5xx with a numeric
/// `Retry-After`.
pub fn asked_wait<B>(response: &Response<B>) -> Option<Duration> {
    let status = response.status();
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    Some(Duration::from_secs(retry_after_seconds(response.headers())?))
}

/// The `Retry-After` header as whole seconds, when it is a number (an HTTP date is not read), for
/// this client and the GitHub client alike.
pub fn retry_after_seconds(headers: &http::HeaderMap) -> Option<u64> {
    headers.get(http::header::RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()
}

impl<B, E> tower::retry::Policy<Request<Body>, Response<B>, E> for RetryAfterPolicy {
    type Future = Pin<Box<tokio::time::Sleep>>;

    fn retry(
        &mut self,
        _request: &mut Request<Body>,
        result: &mut Result<Response<B>, E>,
    ) -> Option<Self::Future> {
        let wait = asked_wait(result.as_ref().ok()?)?;
        if self.retries >= MAX_RETRIES {
            return None;
        }
        self.retries += 1;
        Some(Box::pin(tokio::time::sleep(wait)))
    }

    fn clone_request(&mut self, request: &Request<Body>) -> Option<Request<Body>> {
        let mut copy = Request::new(request.body().try_clone()?);
        *copy.method_mut() = request.method().clone();
        *copy.uri_mut() = request.uri().clone();
        *copy.version_mut() = request.version();
        *copy.headers_mut() = request.headers().clone();
        *copy.extensions_mut() = request.extensions().clone();
        Some(copy)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use tower::{Service, ServiceExt};

    use super::*;

    fn answer(status: u16, retry_after: Option<&str>) -> Response<String> {
        let mut response = Response::builder().status(status);
        if let Some(seconds) = retry_after {
            response = response.header(http::header::RETRY_AFTER, seconds);
        }
        response.body(String::new()).unwrap()
    }

    /// A server answering `status` (with `retry_after`) `failures` times, then 200; counts its calls.
    fn server(
        status: u16,
        retry_after: Option<&'static str>,
        failures: u32,
    ) -> (
        impl Service<Request<Body>, Response = Response<String>, Error = std::convert::Infallible> + Clone,
        Arc<AtomicU32>,
    ) {
        let calls = Arc::new(AtomicU32::new(0));
        let counted = calls.clone();
        let service = tower::service_fn(move |_request: Request<Body>| {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok(if n < failures { answer(status, retry_after) } else { answer(200, None) }) }
        });
        (service, calls)
    }

    async fn send(
        service: impl Service<Request<Body>, Response = Response<String>, Error = std::convert::Infallible>
        + Clone,
    ) -> (u16, Duration) {
        let mut retrying = tower::retry::Retry::new(RetryAfterPolicy::default(), service);
        let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the test
        let request =
            Request::builder().method("POST").uri("/api/v1/pods").body(Body::from(b"{}".to_vec())).unwrap();
        let response = retrying.ready().await.unwrap().call(request).await.unwrap();
        (response.status().as_u16(), start.elapsed())
    }

    #[tokio::test(start_paused = true)]
    async fn a_429_with_retry_after_is_sent_again_after_exactly_that_wait() {
        let (service, calls) = server(429, Some("2"), 2);
        assert_eq!(send(service).await, (200, Duration::from_secs(4)));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_5xx_with_retry_after_is_retried_and_one_without_is_final() {
        let (service, calls) = server(504, Some("1"), 1);
        assert_eq!(send(service).await, (200, Duration::from_secs(1)));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        let (service, calls) = server(503, None, 1);
        assert_eq!(send(service).await, (503, Duration::ZERO));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn other_answers_and_unreadable_waits_are_final() {
        for (status, retry_after) in
            [(409, Some("1")), (404, None), (429, None), (429, Some("Wed, 21 Oct 2015 07:28:00 GMT"))]
        {
            let (service, calls) = server(status, retry_after, 1);
            assert_eq!(send(service).await, (status, Duration::ZERO), "{status} {retry_after:?}");
            assert_eq!(calls.load(Ordering::SeqCst), 1);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn after_ten_retries_the_last_answer_is_returned() {
        let (service, calls) = server(429, Some("1"), 100);
        assert_eq!(send(service).await, (429, Duration::from_secs(10)));
        assert_eq!(calls.load(Ordering::SeqCst), 11);
    }
}
