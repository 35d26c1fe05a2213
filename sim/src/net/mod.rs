//! # The network backend
//!
//! How the clients of a run (the controller, the listener pods, the kubelet, the user) reach the fake
//! API server and the fake GitHub. [`Network::InProcess`], the default and the fastest, hands every
//! client the fakes' `tower::Service` directly: no connection exists, so none can break.
//! [`Network::Turmoil`] puts the parts of the world on turmoil hosts and carries every request over
//! turmoil's simulated TCP (hyper's HTTP/1 client and server over `turmoil::net::TcpStream`), so the
//! fault plan's [`NetFault`]s can partition, hold, slow down and cut connections and crash hosts.
//!
//! **How turmoil and the world's clock fit (the decision).** Turmoil's `Sim` drives the world: it owns
//! one paused current-thread tokio runtime per host and steps them all in lockstep, one tick
//! ([`TICK`]) at a time, delivering the network's segments in between. The world itself (the fakes'
//! shared state, the kubelet, the workload, the user, the world's driver) runs as the turmoil client
//! [`HOST_NODE`]; the API server's and GitHub's HTTP servers accept on hosts [`HOST_APISERVER`] and
//! [`HOST_GITHUB`]; the controller runs on [`HOST_CONTROLLER`] and every listener pod on
//! [`HOST_LISTENERS`], each building its clients inside its own host (a client's connections leave from
//! the host whose runtime opened them). The fakes' state is shared memory reached from every host's
//! runtime; only their connections are simulated. Since each runtime has its own tokio `Instant`,
//! [`SimClock`](crate::SimClock) reads turmoil's simulated elapsed time under this backend instead of
//! tokio's. Turmoil's RNG (segment latency, each host runtime's scheduler seed) is seeded from the run's
//! seed and hosts step in registration order, so the same seed gives the same trace. The cost is the
//! tick: time advances 1 ms per step on every host even when nothing is due, where the in-process
//! backend jumps to the next timer (docs/fakes/network.md gives the measured ratio). Crashing a host (turmoil's
//! `crash`/`bounce`) drops its runtime with every task and in-memory state, and restarts its software
//! from scratch.
//!
//! - [`links`]: how a client is built on either backend.
//! - [`connections`]: the live connections, so a partition can reset those crossing it.
//! - [`sent`]: in process, a request served whatever becomes of its caller (a paused process).
//! - [`http`]: the client side, one hyper HTTP/1 connection per request over turmoil TCP.
//! - [`serve`]: the server side, and the server-side faults (watch streams cut, long polls dropped).
//! - [`NetFault`]: the network faults of the fault plan (plain data, in [`crate::faults::network`]).
//! - [`events`]: what the network did, as events of the record.
//! - [`sim`]: building the turmoil simulation and stepping it, applying the plan.

pub mod connections;
pub mod events;
pub mod http;
pub mod links;
pub mod sent;
pub mod serve;
pub mod sim;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::faults::network::{NetCommand, NetFault, NetFaultError};
pub use crate::hosts::{
    APISERVER_PORT, GITHUB_PORT, HOST_APISERVER, HOST_CONTROLLER, HOST_GITHUB, HOST_LISTENERS, HOST_NODE,
    HOSTS,
};
pub use events::NetEvent;
pub use links::Links;

/// How far turmoil advances every host's clock per step.
pub const TICK: Duration = Duration::from_millis(1);

/// Which network carries the clients' requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// The fakes' services called directly (the default).
    #[default]
    InProcess,
    /// Turmoil hosts and simulated TCP.
    Turmoil,
}

impl Network {
    /// Every backend, by name.
    pub const ALL: [Network; 2] = [Network::InProcess, Network::Turmoil];

    /// The backend's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Network::InProcess => "in-process",
            Network::Turmoil => "turmoil",
        }
    }

    /// Whether this is the default backend (left out of a world's printed config).
    pub fn is_in_process(&self) -> bool {
        *self == Network::InProcess
    }
}

impl std::str::FromStr for Network {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Network::ALL
            .into_iter()
            .find(|n| n.name() == s)
            .ok_or_else(|| format!("unknown network {s:?}; valid: in-process, turmoil"))
    }
}

impl std::fmt::Display for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
