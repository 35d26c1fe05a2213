//! Test support: a scripted stand-in for the API server, so runtime tests can drive a real
//! `kube::Client` (and kube's watcher) through lists, watch streams and errors in paused time.
//!
//! Replies are handed out in order, one per request, whatever the request; the requests are recorded
//! with the paused-clock time they arrived, so a test can check both what was asked and when. Once the
//! script runs out, requests never get an answer, which parks a watcher without a busy loop.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::channel::mpsc;
use http::{Request, Response};
use http_body::Frame;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::{Value, json};
use tokio::time::Instant;

/// One scripted answer.
pub(crate) enum Reply {
    /// A complete JSON body with this status code.
    Json(u16, Value),
    /// A streamed body: each item sent on the channel is one chunk; the body ends when the sender drops.
    Stream(mpsc::UnboundedReceiver<Bytes>),
    /// No HTTP answer at all: the connection fails (kube reports a service error).
    TransportFailure,
}

/// A request as the scripted server saw it.
#[derive(Debug, Clone)]
pub(crate) struct SeenRequest {
    /// Time since the server was made (paused time).
    pub(crate) at: Duration,
    /// Method and path with query, e.g. `GET /api/v1/configmaps?watch=true&…`.
    pub(crate) line: String,
    /// The `Content-Type` header, if any.
    pub(crate) content_type: Option<String>,
    /// The request body.
    pub(crate) body: String,
}

impl SeenRequest {
    /// Whether this was a watch (rather than a list or another call).
    pub(crate) fn is_watch(&self) -> bool {
        self.line.contains("watch=true")
    }
}

/// The scripted server. Clones share the script and the request log.
#[derive(Clone)]
pub(crate) struct ScriptedApi {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<SeenRequest>>>,
    start: Instant,
}

type ReplyBody = UnsyncBoxBody<Bytes, Infallible>;

impl ScriptedApi {
    pub(crate) fn new() -> Self {
        ScriptedApi { replies: Arc::default(), seen: Arc::default(), start: Instant::now() } // allow-nondeterminism: tokio clock, paused in the sim
    }

    /// Appends a reply to the script.
    pub(crate) fn push(&self, reply: Reply) {
        self.replies.lock().unwrap_or_else(PoisonError::into_inner).push_back(reply);
    }

    /// Appends a watch stream the test feeds by hand; returns its sending end.
    pub(crate) fn push_open_watch(&self) -> WatchFeed {
        let (sender, receiver) = mpsc::unbounded();
        self.push(Reply::Stream(receiver));
        WatchFeed(sender)
    }

    /// Appends a watch stream that sends `events` (`(type, object)`) and then ends.
    pub(crate) fn push_watch(&self, events: &[(&str, Value)]) {
        let feed = self.push_open_watch();
        for (kind, object) in events {
            feed.send(kind, object.clone());
        }
    }

    /// Every request so far.
    pub(crate) fn seen(&self) -> Vec<SeenRequest> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// A client whose every request goes to this script. Must be called inside a tokio runtime.
    pub(crate) fn client(&self) -> kube::Client {
        let api = self.clone();
        let service = tower::service_fn(move |request: Request<kube::client::Body>| {
            let api = api.clone();
            async move {
                let (parts, body) = request.into_parts();
                let body = body.collect().await.map(|body| body.to_bytes()).unwrap_or_default();
                match api.answer(&parts, &body) {
                    Some(reply) => into_response(reply),
                    None => futures::future::pending().await,
                }
            }
        });
        kube::Client::new(service, "default")
    }

    fn answer(&self, parts: &http::request::Parts, body: &[u8]) -> Option<Reply> {
        let seen = SeenRequest {
            at: self.start.elapsed(),
            line: format!("{} {}", parts.method, parts.uri),
            content_type: parts
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .map(str::to_string),
            body: String::from_utf8_lossy(body).into_owned(),
        };
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).push(seen);
        self.replies.lock().unwrap_or_else(PoisonError::into_inner).pop_front()
    }
}

fn into_response(reply: Reply) -> Result<Response<ReplyBody>, std::io::Error> {
    let (status, body) = match reply {
        Reply::Json(status, value) => {
            let body =
                Full::new(Bytes::from(value.to_string())).map_err(|never| match never {}).boxed_unsync();
            (status, body)
        }
        Reply::Stream(chunks) => {
            let frames = chunks.map(|chunk| Ok::<_, Infallible>(Frame::data(chunk)));
            (200, StreamBody::new(frames).boxed_unsync())
        }
        Reply::TransportFailure => return Err(std::io::Error::other("connection refused")),
    };
    let mut response = Response::new(body);
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK);
    Ok(response)
}

/// The sending end of an open watch stream.
pub(crate) struct WatchFeed(mpsc::UnboundedSender<Bytes>);

impl WatchFeed {
    /// Sends one watch event line (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`).
    pub(crate) fn send(&self, kind: &str, object: Value) {
        let line = format!("{}\n", json!({"type": kind, "object": object}));
        // A closed stream means the watcher hung up; the test sees that through its assertions.
        let _ = self.0.unbounded_send(Bytes::from(line));
    }
}

/// A ConfigMap in namespace `default` as the API server would send it.
pub(crate) fn config_map(name: &str, resource_version: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": resource_version},
    })
}

/// A ConfigMap list reply at `resource_version`.
pub(crate) fn config_map_list(resource_version: &str, items: Vec<Value>) -> Reply {
    Reply::Json(
        200,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMapList",
            "metadata": {"resourceVersion": resource_version},
            "items": items,
        }),
    )
}

/// A `Status` failure reply.
pub(crate) fn status(code: u16, reason: &str, message: &str) -> Reply {
    Reply::Json(code, status_body(code, reason, message))
}

/// A `Status` failure body.
pub(crate) fn status_body(code: u16, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    })
}
