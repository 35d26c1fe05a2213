//! Operating a controller process: what a Deployment of it needs besides the reconcilers.
//!
//! - [`endpoints`]: `/metrics` (Prometheus text, controller-runtime's metric names), `/healthz` and
//!   `/readyz` over plain HTTP.
//! - [`leader`]: leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics.
//! - [`lease_guard`]: a leader's writes stop at its renew deadline (not fencing; it narrows the window).
//! - [`process`]: one controller process from start to stop (leadership, the families, readiness),
//!   the entry point the binary and anything else running replicas share.

pub mod endpoints;
pub mod leader;
pub mod lease_guard;
pub mod process;

pub use endpoints::{EndpointsError, serve_endpoints};
pub use leader::{LeaderElection, LeaderElector};
pub use process::{ProcessError, ProcessStatus, run_process};
