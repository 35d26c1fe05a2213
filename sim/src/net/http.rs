//! The client side of the turmoil backend: [`TurmoilHttp`], a `tower::Service` that opens one turmoil
//! TCP connection per request to a fixed host and port and speaks hyper's HTTP/1 over it. The
//! connection's task runs on the runtime of the host that called (so the request leaves from that
//! host) and lives as long as the response body (a watch stream, a long poll).
//!
//! Simplified: no connection pooling or keep-alive (a real client reuses connections); every request
//! pays a handshake, and a cut or partition affects only the requests in flight.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

use super::connections::Connections;

/// How long a connect waits for the peer's answer (a partitioned peer never answers), as Go's dialer
/// under client-go does.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a request waits for its answer's head before its connection is taken for dead: TCP
/// keepalive's detection time under Go's default dialer (15 s idle, then 9 probes 15 s apart). A
/// partition resets the connections that cross it when it starts ([`Connections`]); one opened as it
/// began (its request's segments dropped) would otherwise wait forever, where a real client's
/// keepalive gives up (network-partition seed 6: a reconcile held its runner's key for good).
/// Streams (watches, long polls) are not cut once their head has come.
pub const KEEPALIVE_GIVE_UP: Duration = Duration::from_secs(150);

/// A request whose answer did not begin within [`KEEPALIVE_GIVE_UP`].
#[derive(Debug, thiserror::Error)]
#[error("no answer from {0} within {secs} s: the connection is taken for dead", secs = KEEPALIVE_GIVE_UP.as_secs())]
pub struct DeadConnection(&'static str);

/// Any error of a connection, as the clients' `tower` stacks carry it.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// HTTP/1 over turmoil TCP to `host:port`, each connection registered in `connections`. Must be
/// called from inside a turmoil host.
#[derive(Clone)]
pub struct TurmoilHttp {
    host: &'static str,
    port: u16,
    connections: Arc<Connections>,
}

impl TurmoilHttp {
    /// Requests to `host:port` (a turmoil host name).
    pub fn new(host: &'static str, port: u16, connections: Arc<Connections>) -> Self {
        TurmoilHttp { host, port, connections }
    }
}

/// A connect that got no answer within [`CONNECT_TIMEOUT`].
#[derive(Debug, thiserror::Error)]
#[error("connect to {0} timed out")]
pub struct ConnectTimeout(&'static str);

impl<B> tower::Service<Request<B>> for TurmoilHttp
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<Incoming>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Incoming>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (host, port, connections) = (self.host, self.port, Arc::clone(&self.connections));
        Box::pin(async move {
            let connect = turmoil::net::TcpStream::connect((host, port));
            let stream =
                tokio::time::timeout(CONNECT_TIMEOUT, connect).await.map_err(|_| ConnectTimeout(host))??;
            let (local, peer) = (stream.local_addr()?.ip(), stream.peer_addr()?.ip());
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            connections.spawn(local, peer, async move {
                if let Err(e) = connection.await {
                    tracing::debug!(host, error = %e, "turmoil connection ended with an error");
                }
            });
            let answer = tokio::time::timeout(KEEPALIVE_GIVE_UP, sender.send_request(request));
            Ok(answer.await.map_err(|_| DeadConnection(host))??)
        })
    }
}
