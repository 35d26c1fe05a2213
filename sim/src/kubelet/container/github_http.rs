//! How a runner process talks to the fake GitHub over HTTP: one JSON `POST` through the service's
//! tower interface, as the runner (its actor header), with the answer's status and body, or `Err`
//! when the connection dropped. Shared by the session ([`super::session`]) and `config.sh`
//! ([`super::config_sh`]).

use bytes::Bytes;
use http::{Method, Request, header};
use http_body_util::{BodyExt, Full};
use tower::ServiceExt as _;

use super::ProcessContext;

/// The runner version the model presents (actions/runner's at the time of this model).
pub const RUNNER_VERSION: &str = "2.336.0";

/// `POST url` with `authorization` and the JSON `body`: the answer's status and body, or `Err(())`
/// when the connection dropped.
pub async fn post_json(
    ctx: &ProcessContext,
    url: String,
    authorization: String,
    body: Bytes,
) -> Result<(u16, Bytes), ()> {
    let request = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header(header::AUTHORIZATION, authorization)
        .header(header::CONTENT_TYPE, "application/json")
        .header(crate::actor::ACTOR_HEADER, "runner")
        .body(Full::new(body))
        .expect("a runner's request is well formed");
    let response = ctx.github.service().oneshot(request).await.map_err(|_| ())?;
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    Ok((status, bytes))
}
