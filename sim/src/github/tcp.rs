//! Serving the fake GitHub over real TCP (plain HTTP), so a controller running as its own process
//! can reach it: its REST API at `http://ADDR/api/v3/…` (GitHub Enterprise Server's layout), and
//! the Actions service and message queues at whatever `service_url` and `broker_url` name.

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::FakeGitHub;

/// Accepts connections on `listener` and serves `github` on each until the task is dropped.
/// Connection errors are logged and do not stop the server.
pub async fn serve(github: FakeGitHub, listener: TcpListener) -> std::io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        let service = TowerToHyperService::new(github.service());
        tokio::spawn(async move {
            let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
}
