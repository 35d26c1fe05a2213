//! Serving the fake API server over real TCP (plain HTTP on loopback), so kubectl and other clients
//! can talk to it: `kubectl --server http://127.0.0.1:6443 get pods`.

use std::net::SocketAddr;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::FakeApiServer;

/// Accepts connections on `listener` and serves `server` on each until the task is dropped.
/// Connection errors are logged and do not stop the server.
pub async fn serve(server: FakeApiServer, listener: TcpListener) -> std::io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        let service = TowerToHyperService::new(server.service());
        tokio::spawn(async move {
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}

/// Binds `addr` and returns the listener and the address actually bound (port 0 picks a free one).
pub async fn bind(addr: SocketAddr) -> std::io::Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    Ok((listener, local))
}
