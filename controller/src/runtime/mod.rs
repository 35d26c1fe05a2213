//! The controller's own runtime: the pieces controller-runtime gives ARC, built so that a run is
//! reproducible from a seed when the environment is simulated.
//!
//! - [`clock`]: the wall-clock seam.
//! - [`metrics`]: the shared counter registry, named like controller-runtime's.

pub mod clock;
pub mod metrics;
