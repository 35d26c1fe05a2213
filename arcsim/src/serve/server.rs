//! [`ViewServer`]: serves the paused world's [`Snapshot`] over HTTP on a runtime of its own (real
//! time, one worker), so kubectl is answered while the world's own runtime stands still. A request
//! reads the snapshot only; it never touches the world, so it can neither step it nor change what the
//! seed decides. After each step the world's driver puts a new snapshot in place.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

use super::snapshot::Snapshot;
use super::view::{Asked, View};

/// Why the view could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The server's runtime could not be built.
    #[error("cannot build the server's runtime: {0}")]
    Runtime(std::io::Error),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// The snapshot being served.
type Current = Arc<Mutex<Arc<Snapshot>>>;

/// A running view server; dropping it stops it.
pub struct ViewServer {
    runtime: Runtime,
    addr: SocketAddr,
    current: Current,
}

impl std::fmt::Debug for ViewServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewServer").field("addr", &self.addr).finish()
    }
}

impl ViewServer {
    /// Binds `listen` and serves `snapshot` through `view`.
    pub fn start(listen: SocketAddr, view: View, snapshot: Snapshot) -> Result<ViewServer, ServeError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("arcsim-serve")
            .enable_io()
            .build()
            .map_err(ServeError::Runtime)?;
        let listener = runtime
            .block_on(TcpListener::bind(listen))
            .map_err(|source| ServeError::Bind { addr: listen, source })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind { addr: listen, source })?;
        let current: Current = Arc::new(Mutex::new(Arc::new(snapshot)));
        runtime.spawn(accept(listener, Arc::new(view), current.clone()));
        Ok(ViewServer { runtime, addr, current })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves `snapshot` from now on.
    pub fn show(&self, snapshot: Snapshot) {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
    }

    /// Stops serving.
    pub fn stop(self) {
        self.runtime.shutdown_background();
    }
}

async fn accept(listener: TcpListener, view: Arc<View>, current: Current) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let (view, current) = (view.clone(), current.clone());
        tokio::spawn(async move {
            let service = service_fn(move |request| respond(request, view.clone(), current.clone()));
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

async fn respond(
    request: Request<Incoming>,
    view: Arc<View>,
    current: Current,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let snapshot = current.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let header_text = |name| request.headers().get(name).and_then(|h| h.to_str().ok()).unwrap_or("");
    let asked = Asked {
        method: request.method().as_str(),
        path: request.uri().path(),
        query: request.uri().query().unwrap_or(""),
        host: header_text(header::HOST),
        accept: header_text(header::ACCEPT),
    };
    let (code, body) = view.answer(&snapshot, &asked);
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let response = Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .header("x-arcsim-sim-ms", snapshot.at_ms)
        .body(Full::new(Bytes::from(bytes)));
    Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}
