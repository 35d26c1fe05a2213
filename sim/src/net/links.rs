//! [`Links`]: how a part of the world builds its API client on the run's [`Network`]: the fake API
//! server's service directly, or HTTP over turmoil TCP to [`HOST_APISERVER`] from the calling host.
//! Either way the requests carry the caller's actor header. A client must be built inside the host
//! (the runtime) that will use it: `kube::Client` spawns its buffer's worker where it is built.

use std::sync::Arc;

use super::connections::Connections;
use super::http::TurmoilHttp;
use super::sent::SentRequests;
use super::{APISERVER_PORT, GITHUB_PORT, HOST_APISERVER, HOST_GITHUB, Network};
use crate::actor::ActorService;
use crate::apiserver::FakeApiServer;

/// Builds clients of the fakes on one network.
#[derive(Clone)]
pub struct Links {
    network: Network,
    apiserver: FakeApiServer,
    connections: Arc<Connections>,
    rate_limited: bool,
    detached_requests: bool,
}

impl Links {
    /// Clients of `apiserver` over `network`.
    pub fn new(network: Network, apiserver: FakeApiServer) -> Self {
        Links {
            network,
            apiserver,
            connections: Arc::default(),
            rate_limited: false,
            detached_requests: false,
        }
    }

    /// Clients over turmoil whose connections are registered in `connections`.
    pub fn on_turmoil(apiserver: FakeApiServer, connections: Arc<Connections>) -> Self {
        Links {
            network: Network::Turmoil,
            apiserver,
            connections,
            rate_limited: false,
            detached_requests: false,
        }
    }

    /// These links, whose clients the world builds with client-side rate limits or without (without
    /// unless asked).
    pub fn with_rate_limits(mut self, on: bool) -> Self {
        self.rate_limited = on;
        self
    }

    /// These links, whose in-process clients have each request served detached from its caller (on
    /// where a process may pause mid-request; over turmoil a sent request is the server's anyway).
    pub fn with_detached_requests(mut self, on: bool) -> Self {
        self.detached_requests = on;
        self
    }

    /// Whether the world's processes limit their clients' request rate as their binaries do.
    pub fn rate_limited(&self) -> bool {
        self.rate_limited
    }

    /// The network.
    pub fn network(&self) -> Network {
        self.network
    }

    /// A `kube::Client` whose requests are attributed to `actor`.
    pub fn client_as(&self, actor: &str) -> kube::Client {
        match self.network {
            Network::InProcess => self.apiserver.client_as(actor),
            Network::Turmoil => {
                kube::Client::new(ActorService::new(self.api_over_turmoil(), actor), "default")
            }
        }
    }

    /// The fake API server's service (what an in-process client drives), its requests served detached
    /// from their callers when these links say so.
    pub fn api_in_process(&self) -> SentRequests {
        SentRequests::new(self.apiserver.service(), self.detached_requests)
    }

    /// HTTP to the fake API server's host.
    pub fn api_over_turmoil(&self) -> TurmoilHttp {
        TurmoilHttp::new(HOST_APISERVER, APISERVER_PORT, Arc::clone(&self.connections))
    }

    /// HTTP to the fake GitHub's host.
    pub fn github_over_turmoil(&self) -> TurmoilHttp {
        TurmoilHttp::new(HOST_GITHUB, GITHUB_PORT, Arc::clone(&self.connections))
    }
}
