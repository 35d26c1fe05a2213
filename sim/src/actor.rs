//! [`ActorService`]: a tower layer that names the caller of every request (the [`ACTOR_HEADER`]),
//! so the fakes' traces, the API server's audit log and the fake GitHub's events say which part of the
//! world made each call (the controller, the kubelet model, a listener). The controller's own code
//! never sets it: the world wraps the services it hands to `kube::Client::new` and to the controller's
//! GitHub transport.

use std::task::{Context, Poll};

use http::{HeaderName, HeaderValue, Request};

/// The request header that names who is calling (`controller`, `kubelet`, `listener`…). Production
/// clients never send it; the world's clients add it with [`ActorService`].
/// A `HeaderName` constant, so no request parses the name again.
pub const ACTOR_HEADER: HeaderName = HeaderName::from_static("x-arcsim-actor");

/// The caller a request names in its [`ACTOR_HEADER`], if it names one.
pub fn actor_of(headers: &http::HeaderMap) -> Option<&str> {
    headers.get(ACTOR_HEADER).and_then(|v| v.to_str().ok())
}

/// Wraps a service, adding the actor header to each request.
#[derive(Debug, Clone)]
pub struct ActorService<S> {
    inner: S,
    actor: HeaderValue,
}

impl<S> ActorService<S> {
    /// Attributes every request through `inner` to `actor` (ASCII letters, digits, `-`).
    pub fn new(inner: S, actor: &str) -> Self {
        let actor =
            HeaderValue::from_str(actor).unwrap_or_else(|_| HeaderValue::from_static("invalid-actor"));
        ActorService { inner, actor }
    }
}

impl<S, B> tower::Service<Request<B>> for ActorService<S>
where
    S: tower::Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        request.headers_mut().insert(ACTOR_HEADER, self.actor.clone());
        self.inner.call(request)
    }
}
