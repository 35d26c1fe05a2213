//! [`ActorService`]: a tower layer that names the caller of every request (the `x-arcsim-actor`
//! header), so the fake API server's trace and audit log say which part of the world made each call
//! (the controller, the kubelet model, a listener). The controller's own code never sets it: the world
//! wraps the service it hands to `kube::Client::new`.

use std::task::{Context, Poll};

use http::{HeaderValue, Request};

use super::http::ACTOR_HEADER;

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
