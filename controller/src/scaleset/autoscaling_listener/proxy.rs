//! The proxy settings a listener pod reads from its `<al>-proxy` secret (ARC's
//! `ProxyConfig.ToSecretData`): `http_proxy` and `https_proxy` as URLs carrying the credentials of
//! their `credentialSecretRef` (keys `username`, `password`) as user info, and `no_proxy` as the
//! comma-joined list. An unset proxy gives an empty value, as in ARC.
//!
//! The user info is percent-encoded the way Go's `url.UserPassword(..).String()` does: everything but
//! unreserved characters and `$&+,;=` is escaped, so `@`, `:`, `/` and `?` never break the URL.

use std::collections::BTreeMap;

use crate::crd::constants::{ENV_HTTP_PROXY, ENV_HTTPS_PROXY, ENV_NO_PROXY};
use crate::crd::{ProxyConfig, ProxyServerConfig};

/// A proxy server's credentials, from its credential secret.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ProxyCredentials {
    /// The `username` key.
    pub username: String,
    /// The `password` key.
    pub password: String,
}

/// A proxy URL that cannot carry credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("proxy URL {url:?} has no scheme (expected scheme://host[:port])")]
pub(crate) struct InvalidProxyUrl {
    /// The URL as configured.
    pub url: String,
}

/// The proxy secret's data for `proxy`, given the credentials of its http and https servers (read
/// by the caller from their `credentialSecretRef`; `None` when a server has no reference).
pub(crate) fn proxy_secret_data(
    proxy: &ProxyConfig,
    http_credentials: Option<&ProxyCredentials>,
    https_credentials: Option<&ProxyCredentials>,
) -> Result<BTreeMap<String, String>, InvalidProxyUrl> {
    let url = |server: Option<&ProxyServerConfig>, credentials: Option<&ProxyCredentials>| match server {
        None => Ok(String::new()),
        Some(server) => proxy_url(&server.url, credentials),
    };
    Ok(BTreeMap::from([
        (ENV_HTTP_PROXY.to_string(), url(proxy.http.as_ref(), http_credentials)?),
        (ENV_HTTPS_PROXY.to_string(), url(proxy.https.as_ref(), https_credentials)?),
        (ENV_NO_PROXY.to_string(), proxy.no_proxy.join(",")),
    ]))
}

/// `url` with `credentials` as its user info (replacing any it had), or unchanged without them.
pub(crate) fn proxy_url(
    url: &str,
    credentials: Option<&ProxyCredentials>,
) -> Result<String, InvalidProxyUrl> {
    let Some(credentials) = credentials else { return Ok(url.to_string()) };
    let invalid = || InvalidProxyUrl { url: url.to_string() };
    let (scheme, rest) = url.split_once("://").ok_or_else(invalid)?;
    if scheme.is_empty() {
        return Err(invalid());
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let user = escape_user_info(&credentials.username);
    let password = escape_user_info(&credentials.password);
    Ok(format!("{scheme}://{user}:{password}@{host}{tail}"))
}

/// Go's `escape(s, encodeUserPassword)`.
fn escape_user_info(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for byte in text.bytes() {
        let keep = byte.is_ascii_alphanumeric() || b"-._~$&+,;=".contains(&byte);
        if keep {
            escaped.push(char::from(byte));
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(url: &str) -> Option<ProxyServerConfig> {
        Some(ProxyServerConfig { url: url.into(), credential_secret_ref: String::new() })
    }

    #[test]
    fn configured_proxies_become_urls_and_the_rest_stays_empty() {
        let proxy = ProxyConfig {
            http: server("http://proxy:3128"),
            https: None,
            no_proxy: vec!["a".into(), "b.c".into()],
        };
        let data = proxy_secret_data(&proxy, None, None).unwrap();
        assert_eq!(data["http_proxy"], "http://proxy:3128");
        assert_eq!(data["https_proxy"], "");
        assert_eq!(data["no_proxy"], "a,b.c");
    }

    #[test]
    fn credentials_become_escaped_user_info() {
        let credentials = ProxyCredentials { username: "bot@corp".into(), password: "p:a/s?s w".into() };
        let url = proxy_url("https://old:x@proxy.corp:8443/path", Some(&credentials)).unwrap();
        assert_eq!(url, "https://bot%40corp:p%3Aa%2Fs%3Fs%20w@proxy.corp:8443/path");
        let plain = ProxyCredentials { username: "u".into(), password: "p$&+,;=".into() };
        assert_eq!(proxy_url("http://h", Some(&plain)).unwrap(), "http://u:p$&+,;=@h");
    }

    #[test]
    fn a_url_without_scheme_cannot_carry_credentials() {
        let credentials = ProxyCredentials::default();
        assert_eq!(
            proxy_url("proxy:3128", Some(&credentials)),
            Err(InvalidProxyUrl { url: "proxy:3128".into() })
        );
        assert_eq!(proxy_url("proxy:3128", None).unwrap(), "proxy:3128", "without credentials it is kept");
    }
}
