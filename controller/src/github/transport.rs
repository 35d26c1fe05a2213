//! The HTTP layer under [`super::ActionsClient`]: any `tower::Service` boxed to one type, requests that
//! can be rebuilt for each attempt, the retry loop, and the per-attempt request counter.
//!
//! Like `kube::Client`, the client is generic only at construction: `boxed` accepts any service over
//! `http::Request<Full<Bytes>>` whose response body is an `http_body::Body`, collects bodies into
//! `Bytes` and erases the type. Production passes hyper-util's client; a simulation passes its fake.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response};
use http_body_util::{BodyExt, Full};
use tower::ServiceExt;
use tower::util::BoxCloneSyncService;

use super::error::{ActionsError, BoxError};
use super::operation::Operation;
use super::retry::{AttemptOutcome, RetryPolicy, retry_after_seconds};
use crate::runtime::lease_deadline::{LeaseDeadline, LeaseDeadlinePassed};
use crate::runtime::metrics::{GITHUB_HTTP_REQUESTS_TOTAL, Metrics};

/// The request type every transport must accept.
pub(super) type HttpRequest = Request<Full<Bytes>>;

/// The erased transport: requests in, collected responses out.
pub(super) type BoxedService = BoxCloneSyncService<HttpRequest, Response<Bytes>, BoxError>;

/// `service`, its writes (every method but GET, HEAD and OPTIONS) refused unsent once `deadline` has
/// passed (`ops::lease_guard`).
pub(super) fn guard_writes(service: BoxedService, deadline: LeaseDeadline) -> BoxedService {
    BoxCloneSyncService::new(tower::service_fn(move |request: HttpRequest| {
        let refused = deadline.refuses(request.method());
        let service = service.clone();
        async move {
            if let Some(overdue) = refused {
                return Err(BoxError::from(LeaseDeadlinePassed { overdue }));
            }
            service.oneshot(request).await
        }
    }))
}

/// Erases a service's type, collecting its response bodies.
pub(crate) fn boxed<S, B>(service: S) -> BoxedService
where
    S: tower::Service<HttpRequest, Response = Response<B>> + Clone + Send + Sync + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let collecting = service.map_err(Into::into).and_then(|response: Response<B>| async move {
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.map_err(Into::into)?.to_bytes();
        Ok::<_, BoxError>(Response::from_parts(parts, bytes))
    });
    BoxCloneSyncService::new(collecting)
}

/// One request, kept so that each attempt can build it afresh.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub operation: Operation,
    pub method: Method,
    pub url: String,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Bytes,
}

impl Call {
    /// A call without headers or body.
    pub(crate) fn new(operation: Operation, method: Method, url: String) -> Self {
        Call { operation, method, url, headers: Vec::new(), body: Bytes::new() }
    }

    /// Adds a header; a value that is not a valid header value is a configuration error.
    pub(crate) fn header(
        mut self,
        name: impl TryInto<HeaderName>,
        value: &str,
    ) -> Result<Self, ActionsError> {
        let invalid = |what: &str| ActionsError::Config {
            message: format!("{}: invalid header {what}", self.operation),
        };
        let name: HeaderName = name.try_into().map_err(|_| invalid("name"))?;
        let value = HeaderValue::from_str(value).map_err(|_| invalid(name.as_str()))?;
        self.headers.push((name, value));
        Ok(self)
    }

    /// Sets a JSON body (and its content type).
    pub(crate) fn json(mut self, body: &impl serde::Serialize) -> Result<Self, ActionsError> {
        let bytes = serde_json::to_vec(body).map_err(|e| ActionsError::Config {
            message: format!("{}: cannot encode the request body: {e}", self.operation),
        })?;
        self.body = Bytes::from(bytes);
        self.header(http::header::CONTENT_TYPE, "application/json")
    }

    fn build(&self) -> Result<HttpRequest, ActionsError> {
        let mut builder = Request::builder().method(self.method.clone()).uri(&self.url);
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        builder.body(Full::new(self.body.clone())).map_err(|e| ActionsError::Config {
            message: format!("{}: invalid request to {}: {e}", self.operation, self.url),
        })
    }
}

/// A response with its body read.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Answer {
    /// The `Content-Type` header, if readable.
    pub(crate) fn content_type(&self) -> Option<&str> {
        self.headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok())
    }
}

/// Sends calls with retries and counts every attempt.
#[derive(Clone)]
pub(crate) struct Transport {
    pub service: BoxedService,
    pub retry: RetryPolicy,
    pub metrics: Metrics,
}

enum Attempt {
    Answer(Answer),
    Failed(BoxError),
    TimedOut,
}

impl Transport {
    /// Sends `call`, retrying per the policy. Returns the last answer, whatever its status, or the
    /// last transport failure once the retries are used up.
    pub(crate) async fn send(&self, call: &Call) -> Result<Answer, ActionsError> {
        let mut retry = 0;
        loop {
            let attempt = self.attempt(call).await?;
            let outcome = match &attempt {
                Attempt::Answer(a) => AttemptOutcome::Answered {
                    status: a.status,
                    retry_after_seconds: retry_after_seconds(&a.headers),
                },
                Attempt::Failed(_) | Attempt::TimedOut => AttemptOutcome::NoAnswer,
            };
            match self.retry.wait_before_retry(retry, outcome) {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return self.finish(call.operation, attempt),
            }
            retry += 1;
        }
    }

    async fn attempt(&self, call: &Call) -> Result<Attempt, ActionsError> {
        let request = call.build()?;
        let pending = self.service.clone().oneshot(request);
        let attempt = match tokio::time::timeout(self.retry.request_timeout, pending).await {
            Ok(Ok(response)) => {
                let (parts, body) = response.into_parts();
                Attempt::Answer(Answer { status: parts.status.as_u16(), headers: parts.headers, body })
            }
            Ok(Err(error)) => Attempt::Failed(error),
            Err(_elapsed) => Attempt::TimedOut,
        };
        let code = match &attempt {
            Attempt::Answer(a) => a.status.to_string(),
            Attempt::Failed(_) => "transport".to_string(),
            Attempt::TimedOut => "timeout".to_string(),
        };
        let labels = [("operation", call.operation.as_str()), ("code", code.as_str())];
        self.metrics.inc(GITHUB_HTTP_REQUESTS_TOTAL, &labels);
        Ok(attempt)
    }

    fn finish(&self, operation: Operation, attempt: Attempt) -> Result<Answer, ActionsError> {
        match attempt {
            Attempt::Answer(answer) => Ok(answer),
            Attempt::Failed(source) => Err(ActionsError::Transport { operation, source }),
            Attempt::TimedOut => Err(ActionsError::Timeout {
                operation,
                timeout_ms: u64::try_from(self.retry.request_timeout.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;

    type Script = Arc<Mutex<VecDeque<Result<(u16, Option<&'static str>), &'static str>>>>;

    /// A transport that answers from a script and records when each attempt arrived.
    fn scripted(script: Script, arrivals: Arc<Mutex<Vec<Duration>>>) -> Transport {
        let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        let service = tower::service_fn(move |_req: HttpRequest| {
            let next = script.lock().unwrap().pop_front().expect("script exhausted");
            arrivals.lock().unwrap().push(start.elapsed());
            async move {
                let (status, retry_after) = next.map_err(BoxError::from)?;
                let mut response = Response::builder().status(status);
                if let Some(seconds) = retry_after {
                    response = response.header(http::header::RETRY_AFTER, seconds);
                }
                Ok::<_, BoxError>(response.body(Full::new(Bytes::from_static(b"x"))).unwrap())
            }
        });
        Transport { service: boxed(service), retry: RetryPolicy::default(), metrics: Metrics::new() }
    }

    fn call() -> Call {
        Call::new(Operation::RemoveRunner, Method::DELETE, "https://svc/x".into())
    }

    #[tokio::test(start_paused = true)]
    async fn server_errors_and_throttles_are_retried_with_backoff_and_retry_after() {
        let script: Script = Arc::new(Mutex::new(VecDeque::from([
            Ok((503, None)),
            Ok((429, Some("7"))),
            Err("reset"),
            Ok((204, None)),
        ])));
        let arrivals = Arc::default();
        let transport = scripted(script, Arc::clone(&arrivals));
        let answer = transport.send(&call()).await.unwrap();
        assert_eq!(answer.status, 204);
        let secs: Vec<u64> = arrivals.lock().unwrap().iter().map(Duration::as_secs).collect();
        assert_eq!(secs, [0, 1, 8, 12], "waits 1 s, Retry-After 7 s, then 4 s");
        let m = &transport.metrics;
        assert_eq!(
            m.get(GITHUB_HTTP_REQUESTS_TOTAL, &[("operation", "remove-runner"), ("code", "transport")]),
            1
        );
        assert_eq!(m.sum(GITHUB_HTTP_REQUESTS_TOTAL, &[("operation", "remove-runner")]), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn client_errors_are_final_and_exhausted_retries_return_the_last_answer() {
        let script: Script = Arc::new(Mutex::new(VecDeque::from([Ok((400, None))])));
        let transport = scripted(script, Arc::default());
        assert_eq!(transport.send(&call()).await.unwrap().status, 400);

        let script: Script = Arc::new(Mutex::new((0..5).map(|_| Ok((500, None))).collect()));
        let arrivals = Arc::default();
        let transport = scripted(script, Arc::clone(&arrivals));
        assert_eq!(transport.send(&call()).await.unwrap().status, 500);
        assert_eq!(arrivals.lock().unwrap().len(), 5, "one attempt and four retries");
    }

    #[tokio::test(start_paused = true)]
    async fn transport_failures_that_persist_become_a_transport_error() {
        let script: Script = Arc::new(Mutex::new((0..5).map(|_| Err("refused")).collect()));
        let transport = scripted(script, Arc::default());
        let err = transport.send(&call()).await.unwrap_err();
        assert!(err.is_transport(), "{err}");
        assert!(err.to_string().contains("refused"));
    }

    #[tokio::test(start_paused = true)]
    async fn an_attempt_without_an_answer_times_out() {
        let service = tower::service_fn(|_req: HttpRequest| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok::<_, BoxError>(Response::new(Full::new(Bytes::new())))
        });
        let retry = RetryPolicy { request_timeout: Duration::from_secs(5), ..RetryPolicy::none() };
        let transport = Transport { service: boxed(service), retry, metrics: Metrics::new() };
        let err = transport.send(&call()).await.unwrap_err();
        assert!(matches!(err, ActionsError::Timeout { timeout_ms: 5000, .. }), "{err}");
    }
}
