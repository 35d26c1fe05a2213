//! The process's HTTP endpoints, as controller-runtime serves them: `GET /metrics` (the registry in
//! Prometheus text), `GET /healthz` (200 while the process serves) and `GET /readyz` (200 once the
//! process is ready: caches synced as leader, or standing by; 503 before). Anything else is 404.
//! Plain HTTP, as controller-runtime's default; bind it where the cluster's scrapers reach it.

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::process::ProcessStatus;
use crate::runtime::metrics::Metrics;

/// Why the endpoints cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum EndpointsError {
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// Binds `addr` and serves the endpoints until `cancel`; returns the bound address (port 0 picks
/// one) once listening.
pub async fn serve_endpoints(
    addr: SocketAddr,
    metrics: Metrics,
    status: ProcessStatus,
    cancel: CancellationToken,
) -> Result<SocketAddr, EndpointsError> {
    let listener = TcpListener::bind(addr).await.map_err(|source| EndpointsError::Bind { addr, source })?;
    let bound = listener.local_addr().map_err(|source| EndpointsError::Bind { addr, source })?;
    tokio::spawn(accept(listener, metrics, status, cancel));
    Ok(bound)
}

async fn accept(listener: TcpListener, metrics: Metrics, status: ProcessStatus, cancel: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _peer)) = accepted else { continue };
        let (metrics, status) = (metrics.clone(), status.clone());
        let service = hyper::service::service_fn(move |request| {
            let response = answer(&request, &metrics, &status);
            async move { Ok::<_, Infallible>(response) }
        });
        tokio::spawn(async move {
            if let Err(error) = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await {
                tracing::debug!(%error, "endpoint connection ended with an error");
            }
        });
    }
}

/// The answer to one request.
pub fn answer<B>(request: &Request<B>, metrics: &Metrics, status: &ProcessStatus) -> Response<Full<Bytes>> {
    let text = |code: StatusCode, body: String, content_type: &str| {
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = code;
        if let Ok(value) = http::HeaderValue::from_str(content_type) {
            response.headers_mut().insert(http::header::CONTENT_TYPE, value);
        }
        response
    };
    let plain = "text/plain; charset=utf-8";
    if request.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n".into(), plain);
    }
    match request.uri().path() {
        "/metrics" => {
            text(StatusCode::OK, metrics.render_prometheus(), "text/plain; version=0.0.4; charset=utf-8")
        }
        "/healthz" => text(StatusCode::OK, "ok\n".into(), plain),
        "/readyz" if status.is_ready() => text(StatusCode::OK, "ok\n".into(), plain),
        "/readyz" => text(StatusCode::SERVICE_UNAVAILABLE, "not ready: caches are syncing\n".into(), plain),
        _ => text(StatusCode::NOT_FOUND, "not found\n".into(), plain),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::metrics::RECONCILE_TOTAL;

    fn get(path: &str) -> Request<()> {
        Request::get(path).body(()).unwrap()
    }

    #[test]
    fn metrics_are_served_in_prometheus_text_and_readiness_follows_the_status() {
        let metrics = Metrics::new();
        metrics.inc(RECONCILE_TOTAL, &[("controller", "ephemeralrunner"), ("result", "success")]);
        let status = ProcessStatus::default();
        let body = answer(&get("/metrics"), &metrics, &status);
        assert_eq!(body.status(), 200);
        assert_eq!(answer(&get("/healthz"), &metrics, &status).status(), 200);
        assert_eq!(answer(&get("/readyz"), &metrics, &status).status(), 503);
        status.set_ready(true);
        assert_eq!(answer(&get("/readyz"), &metrics, &status).status(), 200);
        assert_eq!(answer(&get("/nope"), &metrics, &status).status(), 404);
        let post = Request::post("/metrics").body(()).unwrap();
        assert_eq!(answer(&post, &metrics, &status).status(), 405);
    }

    #[tokio::test]
    async fn the_endpoints_answer_over_tcp_until_cancelled() {
        let metrics = Metrics::new();
        metrics.inc(RECONCILE_TOTAL, &[("controller", "x"), ("result", "success")]);
        let cancel = CancellationToken::new();
        let any_port = "127.0.0.1:0".parse().unwrap();
        let addr =
            serve_endpoints(any_port, metrics, ProcessStatus::default(), cancel.clone()).await.unwrap();
        let reply = tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(addr).unwrap();
            stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
            let mut reply = String::new();
            stream.read_to_string(&mut reply).unwrap();
            reply
        })
        .await
        .unwrap();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert!(reply.contains("controller_runtime_reconcile_total{controller=\"x\",result=\"success\"} 1"));
        cancel.cancel();
    }
}
