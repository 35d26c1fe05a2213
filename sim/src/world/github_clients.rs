//! GitHub clients for the controller inside the world: the production [`ActionsClient`] over the fake's
//! service instead of HTTPS, cached exactly as in production. This is world wiring, not fake code: the
//! fake GitHub itself (`crate::github`) knows nothing of the controller.

use arc_controller::SharedClock;
use arc_controller::github::ActionsClient;
use arc_controller::runtime::metrics::Metrics;
use arc_controller::scaleset::context::{ActionsClients, token_of};

/// The controller's [`ActionsClients`], every client driving `service`.
pub fn actions_clients<S>(service: S, clock: SharedClock, metrics: Metrics) -> ActionsClients
where
    S: tower::Service<
            http::Request<http_body_util::Full<bytes::Bytes>>,
            Response = http::Response<http_body_util::Full<bytes::Bytes>>,
            Error = std::convert::Infallible,
        > + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    ActionsClients::new(Box::new(move |url, credentials| {
        ActionsClient::new(service.clone(), url, token_of(credentials)?, clock.clone(), metrics.clone())
    }))
}
