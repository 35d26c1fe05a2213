//! [`ConnectionOptions`]: how an HTTPS client reaches one GitHub, beyond the defaults: the proxies of
//! an AutoscalingRunnerSet's `proxy` spec (ARC's `WithProxy`) and the root CAs of its
//! `githubServerTLS` (ARC's `WithRootCAs`, added to the platform's roots). With no proxy spec the
//! client follows the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`, either case),
//! as Go's `ProxyFromEnvironment` does for ARC; loopback hosts are never proxied (Go's rule too).
//!
//! The options are part of a client's identity: clients are cached per URL, credentials and options.

use std::fmt;

/// Proxy URLs (credentials inline as user info) and the no-proxy list, as ARC's proxy secret holds
/// them. An empty URL means "no proxy for that scheme".
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ProxyUrls {
    /// Proxy for `http://` URLs.
    pub http: String,
    /// Proxy for `https://` URLs.
    pub https: String,
    /// Comma-separated hosts, domains (`.corp`) and CIDRs that bypass the proxy.
    pub no_proxy: String,
}

impl fmt::Debug for ProxyUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyUrls")
            .field("http", &without_user_info(&self.http))
            .field("https", &without_user_info(&self.https))
            .field("no_proxy", &self.no_proxy)
            .finish()
    }
}

/// Proxies and extra root CAs of an HTTPS client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionOptions {
    /// The proxies to use; `None` follows the environment.
    pub proxy: Option<ProxyUrls>,
    /// PEM certificates trusted besides the platform's roots (a GHES with a private CA).
    pub root_ca_pem: String,
}

impl ConnectionOptions {
    /// A fingerprint (FNV-1a) for client caches.
    pub fn fingerprint(&self) -> u64 {
        let proxy = self.proxy.as_ref().map(|p| format!("{}\0{}\0{}", p.http, p.https, p.no_proxy));
        crate::hash::fnv1a64(format!("{proxy:?}\0{}", self.root_ca_pem).as_bytes())
    }
}

/// `url` with any `user:password@` removed, for logs.
pub fn without_user_info(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_credentials_never_print() {
        let urls = ProxyUrls { https: "http://bot:s3cret@proxy:3128".into(), ..Default::default() };
        let printed = format!("{urls:?}");
        assert!(!printed.contains("s3cret") && printed.contains("http://proxy:3128"), "{printed}");
    }

    #[test]
    fn options_fingerprint_by_content() {
        let plain = ConnectionOptions::default();
        let ca = ConnectionOptions { root_ca_pem: "pem".into(), ..Default::default() };
        let proxied = ConnectionOptions { proxy: Some(ProxyUrls::default()), ..Default::default() };
        assert_ne!(plain.fingerprint(), ca.fingerprint());
        assert_ne!(plain.fingerprint(), proxied.fingerprint());
        assert_eq!(ca.fingerprint(), ca.clone().fingerprint());
    }
}
