//! [`SentRequests`]: the in-process API service for a process that may stop mid-request. In process,
//! a request is served inside its caller's future, so a caller that stops being polled (a paused
//! process) would hold its request unserved. Over a real network the request's bytes are already at
//! the server, which serves it whatever becomes of the caller; with `detached` on, each request is
//! served in a task of its own and its answer waits for the caller, as it would in a socket's buffer.
//! Off, requests are served inline as before (no task per request; the default).

use std::task::{Context, Poll};

use bytes::Bytes;
use http::Request;

use crate::apiserver::ApiService;
use crate::apiserver::faults::ConnectionDropped;

/// The fake API server's service, serving each request detached from its caller when asked.
#[derive(Clone)]
pub struct SentRequests {
    service: ApiService,
    detached: bool,
}

impl SentRequests {
    /// `service`, each request served in a task of its own when `detached`.
    pub fn new(service: ApiService, detached: bool) -> Self {
        SentRequests { service, detached }
    }
}

impl<B> tower::Service<Request<B>> for SentRequests
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: std::fmt::Display,
{
    type Response = <ApiService as tower::Service<Request<B>>>::Response;
    type Error = ConnectionDropped;
    type Future = <ApiService as tower::Service<Request<B>>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower::Service::<Request<B>>::poll_ready(&mut self.service, cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let served = self.service.call(request);
        if !self.detached {
            return served;
        }
        let task = tokio::spawn(served);
        Box::pin(async move {
            match task.await {
                Ok(answer) => answer,
                Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
                Err(_) => Err(ConnectionDropped),
            }
        })
    }
}
