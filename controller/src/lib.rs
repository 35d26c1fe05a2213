//! # arc-controller
//!
//! A Kubernetes controller for GitHub Actions runners, modelled on actions-runner-controller (ARC).
//! It is production code: it runs against a real cluster and a real GitHub, and knows nothing of
//! arcsim's simulation. Its seams are constructor arguments: a [`kube::Client`], a GitHub client
//! built over any `tower::Service`, and a [`Clock`].

pub mod crd;
pub mod github;
pub mod hash;
pub mod legacy;
pub mod runtime;
pub mod scaleset;
pub mod switches;

pub use github::ActionsClient;
pub use runtime::clock::{Clock, SharedClock, SystemClock};
pub use switches::{Fixes, Optimisations};
