//! The client side of the turmoil backend: [`TurmoilHttp`], a `tower::Service` that opens one turmoil
//! TCP connection per request to a fixed host and port and speaks hyper's HTTP/1 over it. The
//! connection's task runs on the runtime of the host that called (so the request leaves from that
//! host) and lives as long as the response body (a watch stream, a long poll).
//!
//! Simplified: no connection pooling or keep-alive (a real client reuses connections); every request
//! pays a handshake, and a cut or partition affects only the requests in flight.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

/// Any error of a connection, as the clients' `tower` stacks carry it.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// HTTP/1 over turmoil TCP to `host:port`. Must be called from inside a turmoil host.
#[derive(Debug, Clone, Copy)]
pub struct TurmoilHttp {
    host: &'static str,
    port: u16,
}

impl TurmoilHttp {
    /// Requests to `host:port` (a turmoil host name).
    pub const fn new(host: &'static str, port: u16) -> Self {
        TurmoilHttp { host, port }
    }
}

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
        let TurmoilHttp { host, port } = *self;
        Box::pin(async move {
            let stream = turmoil::net::TcpStream::connect((host, port)).await?;
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!(host, error = %e, "turmoil connection ended with an error");
                }
            });
            Ok(sender.send_request(request).await?)
        })
    }
}
