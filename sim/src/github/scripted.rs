//! [`ScriptedGitHub`]: the fake GitHub with canned answers layered on top, for tests that need one
//! exact reply (ARC's own tests script every reply; ours script only the ones that matter and let the
//! stateful fake answer the rest).
//!
//! `script.answer(Operation::RemoveRunner, 500, body)` makes the next RemoveRunner get that answer
//! without reaching the fake; answers queue per operation and are used once each.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;

use super::GitHubService;
use super::operation::Operation;
use super::route::Route;
use super::service::BoxError;
use super::service::ConnectionDropped;

/// A canned reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CannedAnswer {
    /// HTTP status.
    pub status: u16,
    /// JSON body.
    pub body: String,
}

/// The fake GitHub service with per-operation canned answers. Clones share the script.
#[derive(Clone, Debug)]
pub struct ScriptedGitHub {
    inner: GitHubService,
    script: Arc<Mutex<BTreeMap<&'static str, VecDeque<CannedAnswer>>>>,
    used: Arc<Mutex<Vec<&'static str>>>,
}

impl ScriptedGitHub {
    /// Wraps `inner`; with nothing scripted, every request reaches it.
    pub fn new(inner: GitHubService) -> Self {
        ScriptedGitHub { inner, script: Arc::default(), used: Arc::default() }
    }

    /// Queues `status`/`body` as the next answer to `operation`.
    pub fn answer(&self, operation: Operation, status: u16, body: impl Into<String>) {
        let answer = CannedAnswer { status, body: body.into() };
        self.script.lock().expect("script lock").entry(operation.as_str()).or_default().push_back(answer);
    }

    /// Drops every answer not used yet: from now on every request reaches the service.
    pub fn clear(&self) {
        self.script.lock().expect("script lock").clear();
    }

    /// The operations answered from the script so far, in order.
    pub fn used(&self) -> Vec<&'static str> {
        self.used.lock().expect("used lock").clone()
    }

    fn take(&self, request: &Request<impl Sized>) -> Option<CannedAnswer> {
        let operation = Route::parse(request.method(), request.uri().path())?.operation().as_str();
        let answer = self.script.lock().expect("script lock").get_mut(operation)?.pop_front()?;
        self.used.lock().expect("used lock").push(operation);
        Some(answer)
    }
}

impl<B> tower::Service<Request<B>> for ScriptedGitHub
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError> + Send,
{
    type Response = Response<Full<Bytes>>;
    type Error = ConnectionDropped;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, ConnectionDropped>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), ConnectionDropped>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match self.take(&request) {
            Some(answer) => Box::pin(async move {
                let response = Response::builder()
                    .status(answer.status)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Full::new(Bytes::from(answer.body)))
                    .expect("a canned response");
                Ok(response)
            }),
            None => tower::Service::call(&mut self.inner, request),
        }
    }
}
