//! The parts of a world as hosts of the turmoil network, and the ports the fakes serve on: the names a
//! fault plan's network faults address ([`crate::faults::network`]) and the network backend builds its
//! hosts from ([`crate::net`]).

/// The turmoil host the world (fakes' state, kubelet, workload, user) runs on.
pub const HOST_NODE: &str = "node";
/// The turmoil host serving the fake API server.
pub const HOST_APISERVER: &str = "apiserver";
/// The turmoil host serving the fake GitHub.
pub const HOST_GITHUB: &str = "github";
/// The turmoil host the controller process runs on.
pub const HOST_CONTROLLER: &str = "controller";
/// The turmoil host every listener pod runs on.
pub const HOST_LISTENERS: &str = "listeners";
/// Every host, in the order the simulation steps them.
pub const HOSTS: [&str; 5] = [HOST_APISERVER, HOST_GITHUB, HOST_CONTROLLER, HOST_LISTENERS, HOST_NODE];
/// The API server's port.
pub const APISERVER_PORT: u16 = 6443;
/// The fake GitHub's port.
pub const GITHUB_PORT: u16 = 80;
