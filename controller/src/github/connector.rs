//! [`GitHubConnector`]: the connector under the production HTTPS client. For each destination it
//! asks the proxy rules ([`Proxies`]) and then connects directly (TLS for `https://`), through an
//! HTTP CONNECT tunnel to the proxy (TLS inside it, for `https://`), or to the proxy itself for a
//! plain `http://` destination, which is then sent in absolute form with `Proxy-Authorization`
//! (added per request by [`Proxies::authorize`]).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Uri};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_rustls::{HttpsConnectorBuilder, MaybeHttpsStream};
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::connection::ProxyUrls;
use super::error::BoxError;

/// Which proxy, if any, each destination goes through.
#[derive(Debug)]
pub(crate) struct Proxies {
    matcher: Matcher,
}

impl Proxies {
    /// The rules of `urls`, or of the environment when `None`.
    pub(super) fn new(urls: Option<&ProxyUrls>) -> Proxies {
        let matcher = match urls {
            None => Matcher::from_env(),
            Some(urls) => Matcher::builder()
                .http(urls.http.clone())
                .https(urls.https.clone())
                .no(urls.no_proxy.clone())
                .build(),
        };
        Proxies { matcher }
    }

    /// The proxy for `dst`; loopback hosts never go through one.
    pub(super) fn route(&self, dst: &Uri) -> Option<Intercept> {
        let host = dst.host()?.trim_start_matches('[').trim_end_matches(']');
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if loopback { None } else { self.matcher.intercept(dst) }
    }

    /// Adds `Proxy-Authorization` to a plain-HTTP request that goes through a proxy with credentials.
    pub(super) fn authorize<B>(&self, mut request: Request<B>) -> Request<B> {
        if request.uri().scheme_str() == Some("http")
            && let Some(auth) = self.route(request.uri()).and_then(|p| p.basic_auth().cloned())
        {
            request.headers_mut().insert(http::header::PROXY_AUTHORIZATION, auth);
        }
        request
    }
}

/// Connects to GitHub directly or through the proxy [`Proxies`] names.
#[derive(Clone)]
pub(crate) struct GitHubConnector {
    tls: rustls::ClientConfig,
    proxies: Arc<Proxies>,
}

impl GitHubConnector {
    pub(super) fn new(tls: rustls::ClientConfig, proxies: Arc<Proxies>) -> Self {
        GitHubConnector { tls, proxies }
    }
}

fn tcp() -> HttpConnector {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http
}

type Connecting = Pin<Box<dyn Future<Output = Result<Conn, BoxError>> + Send>>;

impl tower::Service<Uri> for GitHubConnector {
    type Response = Conn;
    type Error = BoxError;
    type Future = Connecting;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Connecting {
        let tls =
            HttpsConnectorBuilder::new().with_tls_config(self.tls.clone()).https_or_http().enable_http1();
        let route = self.proxies.route(&dst);
        Box::pin(async move {
            match route {
                None => Ok(Conn::Direct(Box::new(
                    tower::ServiceExt::oneshot(tls.wrap_connector(tcp()), dst).await?,
                ))),
                Some(proxy) if dst.scheme_str() == Some("https") => {
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), tcp());
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    Ok(Conn::Direct(Box::new(
                        tower::ServiceExt::oneshot(tls.wrap_connector(tunnel), dst).await?,
                    )))
                }
                Some(proxy) => {
                    let stream = tower::ServiceExt::oneshot(tcp(), proxy.uri().clone()).await?;
                    Ok(Conn::Forward(stream))
                }
            }
        })
    }
}

/// A connection: to the destination (TLS or plain, maybe tunneled), or to a forwarding proxy.
pub(crate) enum Conn {
    /// To the destination.
    Direct(Box<MaybeHttpsStream<TokioIo<TcpStream>>>),
    /// To a proxy that forwards plain-HTTP requests sent in absolute form.
    Forward(TokioIo<TcpStream>),
}

impl Connection for Conn {
    fn connected(&self) -> Connected {
        match self {
            Conn::Direct(stream) => stream.connected(),
            Conn::Forward(stream) => stream.connected().proxy(true),
        }
    }
}

impl Read for Conn {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Direct(stream) => Pin::new(&mut **stream).poll_read(cx, buf),
            Conn::Forward(stream) => Pin::new(stream).poll_read(cx, buf),
        }
    }
}

impl Write for Conn {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Direct(stream) => Pin::new(&mut **stream).poll_write(cx, buf),
            Conn::Forward(stream) => Pin::new(stream).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Direct(stream) => Pin::new(&mut **stream).poll_flush(cx),
            Conn::Forward(stream) => Pin::new(stream).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Direct(stream) => Pin::new(&mut **stream).poll_shutdown(cx),
            Conn::Forward(stream) => Pin::new(stream).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(text: &str) -> Uri {
        text.parse().unwrap()
    }

    #[test]
    fn a_proxy_spec_routes_by_scheme_and_no_proxy_and_never_proxies_loopback() {
        let urls = ProxyUrls {
            http: "http://u:p@proxy:3128".into(),
            https: "http://tunnel:3129".into(),
            no_proxy: "ghes.corp,10.0.0.0/8".into(),
        };
        let proxies = Proxies::new(Some(&urls));
        let via = |text: &str| proxies.route(&uri(text)).map(|p| p.uri().to_string());
        assert_eq!(via("https://api.github.com/x").as_deref(), Some("http://tunnel:3129/"));
        assert_eq!(via("http://ghes.example/x").as_deref(), Some("http://proxy:3128/"));
        assert_eq!(via("https://ghes.corp/x"), None);
        assert_eq!(via("https://10.1.2.3/x"), None);
        assert_eq!(via("http://127.0.0.1:8080/x"), None);
        assert_eq!(via("http://localhost/x"), None);
    }

    #[test]
    fn plain_http_through_a_proxy_with_credentials_carries_proxy_authorization() {
        let urls = ProxyUrls { http: "http://u:p@proxy:3128".into(), ..Default::default() };
        let proxies = Proxies::new(Some(&urls));
        let proxied = proxies.authorize(Request::get("http://ghes.example/x").body(()).unwrap());
        assert_eq!(proxied.headers()[http::header::PROXY_AUTHORIZATION], "Basic dTpw");
        let tunneled = proxies.authorize(Request::get("https://ghes.example/x").body(()).unwrap());
        assert!(tunneled.headers().get(http::header::PROXY_AUTHORIZATION).is_none());
    }
}
