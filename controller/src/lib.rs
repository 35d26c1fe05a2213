//! # arc-controller
//!
//! A Kubernetes controller for GitHub Actions runners, modelled on actions-runner-controller (ARC).
//! It is production code: it runs against a real cluster and a real GitHub, and knows nothing of
//! arcsim's simulation. Its seams are constructor arguments, gathered in [`Inputs`]: a
//! [`kube::Client`], a [`GitHubTransport`] (HTTPS, or any `tower::Service`), and a [`Clock`].
//!
//! Entry points, the same for the binary and for anything else that runs the controller:
//! [`start`] (the controllers of the selected [`Families`]) and [`scaleset::listener::run`] (one
//! listener pod's process). Map of the code:
//!
//! - [`scaleset`]: the scale-set family and its listener; [`legacy`]: the legacy Runner controller.
//! - `kit`: what the reconcilers of both families are built from (steps, metadata and patch
//!   helpers, the reconcile error, the shared context base).
//! - [`runtime`]: the controller-runtime pieces (informers, workqueue, predicates, lazy copy,
//!   metrics, the clock).
//! - [`github`]: the GitHub client and its transport seam.
//! - [`ops`]: operating a process: the `/metrics`, `/healthz` and `/readyz` endpoints, leader
//!   election on a Lease, and [`ops::run_process`], one process from start to stop.
//! - [`crd`]: the custom resources and their manifests; [`switches`]: fixes and optimisations;
//!   [`hash`]: the fixed hashes ARC writes into names and labels.

pub mod crd;
pub mod github;
pub mod hash;
mod inputs;
pub(crate) mod kit;
pub mod legacy;
pub mod ops;
pub mod runtime;
pub mod scaleset;
mod start;
pub mod switches;

pub use github::{ActionsClient, GitHubTransport};
pub use inputs::Inputs;
pub use runtime::clock::{Clock, SharedClock, SystemClock};
pub use start::{Families, start};
pub use switches::{Fixes, Optimisations, Profile, Switches};
