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
            Ok(sender.send_request(request).await?)
        })
    }
}
