//! The server side of the turmoil backend: [`serve`] accepts turmoil TCP connections and serves a
//! `tower::Service` on each with hyper's HTTP/1, and the two server-side network faults wrap the
//! fakes' services: [`CutWatches`] resets a watch's connection after N events, [`DropLongPolls`]
//! resets the connection of every message long poll in flight at the plan's times. Both say so in the
//! record ([`NetEvent`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;

use super::connections::Connections;
use super::events::NetEvent;
use super::http::BoxError;
use crate::apiserver::http::ACTOR_HEADER;
use crate::faults::network::NetFault;
use crate::github::Operation;
use crate::record::Recorder;

/// Accepts connections on `listener` and serves `service` on each (registered in `connections`),
/// until the host crashes.
pub async fn serve<S, B>(
    listener: turmoil::net::TcpListener,
    service: S,
    connections: &Arc<Connections>,
) -> std::io::Result<()>
where
    S: tower::Service<Request<Incoming>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    loop {
        let (stream, peer) = listener.accept().await?;
        let local = stream.local_addr()?.ip();
        let service = TowerToHyperService::new(service.clone());
        connections.spawn(local, peer.ip(), async move {
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "turmoil connection ended with an error");
            }
        });
    }
}

/// One `cut-watch` rule.
#[derive(Debug, Clone)]
struct CutRule {
    resources: Vec<String>,
    after_events: u32,
    start_ms: u64,
    end_ms: u64,
}

/// Wraps the API server's service: a watch opened while a `cut-watch` rule is active has its
/// connection reset after the rule's number of events.
#[derive(Clone)]
pub struct CutWatches<S> {
    inner: S,
    rules: Arc<Vec<CutRule>>,
    record: Recorder,
}

impl<S> CutWatches<S> {
    /// `inner` with the `cut-watch` rules of `faults`.
    pub fn new(inner: S, faults: &[NetFault], record: Recorder) -> Self {
        let rules = faults
            .iter()
            .filter_map(|f| match f {
                NetFault::CutWatch { resources, after_events, window } => Some(CutRule {
                    resources: resources.clone(),
                    after_events: *after_events,
                    start_ms: window.start_ms,
                    end_ms: window.end_ms,
                }),
                _ => None,
            })
            .collect();
        CutWatches { inner, rules: Arc::new(rules), record }
    }

    /// The events a watch request gets before its cut, if a rule hits it.
    fn limit<B>(&self, request: &Request<B>) -> Option<(u32, String)> {
        let query = request.uri().query().unwrap_or("");
        let is_watch = query.split('&').any(|p| p == "watch=true" || p == "watch=1");
        if !is_watch {
            return None;
        }
        let resource = request.uri().path().rsplit('/').next().unwrap_or("").to_string();
        let now = self.record.clock().elapsed_ms();
        let rule = self.rules.iter().find(|r| {
            r.start_ms <= now && now < r.end_ms && (r.resources.is_empty() || r.resources.contains(&resource))
        })?;
        Some((rule.after_events, resource))
    }
}

impl<S, B> tower::Service<Request<Incoming>> for CutWatches<S>
where
    S: tower::Service<Request<Incoming>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<CutBody<B>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        let limit = self.limit(&request);
        let actor = request.headers().get(ACTOR_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("-");
        let actor = actor.to_string();
        let record = self.record.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await.map_err(Into::into)?;
            Ok(response.map(|body| CutBody {
                inner: Box::pin(body),
                cut: limit.map(|(left, resource)| Cut { left, resource, actor, record }),
            }))
        })
    }
}

/// Where a watch stream will be cut, and whom to tell.
struct Cut {
    left: u32,
    resource: String,
    actor: String,
    record: Recorder,
}

/// A response body that fails (the server resets the connection) once its cut's events are out.
pub struct CutBody<B> {
    inner: Pin<Box<B>>,
    cut: Option<Cut>,
}

/// The injected reset of a connection.
#[derive(Debug, thiserror::Error)]
#[error("connection reset by the network (injected {0})")]
pub struct Reset(&'static str);

impl<B> Body for CutBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(cut) = self.cut.as_ref().filter(|c| c.left == 0) {
            cut.record.emit(NetEvent::WatchCut { actor: cut.actor.clone(), resource: cut.resource.clone() });
            self.cut = None;
            return Poll::Ready(Some(Err(Box::new(Reset("cut-watch")))));
        }
        let frame = std::task::ready!(self.inner.as_mut().poll_frame(cx));
        if let (Some(cut), Some(Ok(f))) = (self.cut.as_mut(), frame.as_ref())
            && f.is_data()
        {
            cut.left = cut.left.saturating_sub(1);
        }
        Poll::Ready(frame.map(|f| f.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}

/// Wraps GitHub's service: every message long poll (`get-message`) in flight at one of the plan's
/// `drop-long-poll` times has its connection reset.
#[derive(Clone)]
pub struct DropLongPolls<S> {
    inner: S,
    drops_ms: Arc<Vec<u64>>,
    record: Recorder,
}

impl<S> DropLongPolls<S> {
    /// `inner` with the `drop-long-poll` times of `faults`.
    pub fn new(inner: S, faults: &[NetFault], record: Recorder) -> Self {
        let mut drops_ms: Vec<u64> = faults
            .iter()
            .filter_map(|f| match f {
                NetFault::DropLongPoll { at_ms } => Some(*at_ms),
                _ => None,
            })
            .collect();
        drops_ms.sort_unstable();
        DropLongPolls { inner, drops_ms: Arc::new(drops_ms), record }
    }
}

impl<S, B> tower::Service<Request<Incoming>> for DropLongPolls<S>
where
    S: tower::Service<Request<Incoming>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    type Response = Response<B>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<B>, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        let is_poll = crate::github::operation_of(request.method(), request.uri().path())
            == Some(Operation::GetMessage);
        let now = self.record.clock().elapsed_ms();
        let next_drop = self.drops_ms.iter().copied().find(|at| *at > now).filter(|_| is_poll);
        let record = self.record.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let Some(at_ms) = next_drop else { return answer.await.map_err(Into::into) };
            tokio::select! {
                biased;
                answer = answer => answer.map_err(Into::into),
                () = tokio::time::sleep(Duration::from_millis(at_ms - now)) => {
                    record.emit(NetEvent::LongPollDropped);
                    Err(Box::new(Reset("drop-long-poll")) as BoxError)
                }
            }
        })
    }
}
