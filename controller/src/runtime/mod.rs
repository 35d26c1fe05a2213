//! The controller's own runtime: the pieces controller-runtime gives ARC, built so that a run is
//! reproducible from a seed when the environment is simulated.
//!
//! - [`clock`]: the wall-clock seam.
//! - [`metrics`]: the shared counter registry, named like controller-runtime's.
//! - [`object_key`]: `namespace/name`, the unit of work and of caching.
//! - [`controller_ref`]: an object's controller ownerReference.
//! - [`store`]: the informer cache, a `BTreeMap` with the `.metadata.controller` index.
//! - [`rate_limiter`]: client-go's per-item backoff and token bucket.
//! - [`workqueue`]: client-go's deduplicating, delaying, rate-limited queue.

pub mod clock;
pub mod controller_ref;
pub mod metrics;
pub mod object_key;
pub mod rate_limiter;
pub mod store;
pub mod workqueue;
