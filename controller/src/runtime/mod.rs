//! The controller's own runtime: the pieces controller-runtime gives ARC, built so that a run is
//! reproducible from a seed when the environment is simulated.
//!
//! - `clock`: the wall-clock seam.
//! - [`metrics`]: the shared counter registry, named like controller-runtime's.
//! - [`object_key`]: `namespace/name`, the unit of work and of caching.
//! - `controller_ref`: an object's controller ownerReference.
//! - `store`: the informer cache, a `BTreeMap` with the `.metadata.controller` index.
//! - `rate_limiter`: client-go's per-item backoff and token bucket.
//! - `workqueue`: client-go's deduplicating, delaying, rate-limited queue.
//! - `outcome`: what a reconcile returns and how the queue reacts.
//! - `predicate`: update filters with drop counters.
//! - `merge_patch`: the RFC 7386 diff between two documents.
//! - [`client_limit`]: client-side QPS and burst for the Kubernetes client.
//! - [`retry_after`]: client-go's retry of answers that ask for one (`Retry-After`).
//! - [`kube_client`]: the two as the layers of every Kubernetes client the controller builds.
//! - `api`: the counted door for writes and uncached reads, plus error classifiers.
//! - `controller`: a workqueue, workers and event sources around a `controller::Reconciler`.
//! - [`informer`]: kube's watcher feeding the cache, with relist diffing and fan-out.
//! - [`manager`]: shared informers per type, controllers, start and crash-like stop.
//! - [`lazy_copy`]: copy-on-first-mutation wrapper producing merge patches.
//! - [`lease_deadline`]: until when a leader may write (its renew deadline).
//! - [`tasks`]: how a process runs its long-lived tasks (the binary: as they are).

pub(crate) mod api;
pub mod client_limit;
pub(crate) mod clock;
pub(crate) mod controller;
pub(crate) mod controller_ref;
pub mod informer;
pub mod kube_client;
pub mod lazy_copy;
pub mod lease_deadline;
pub mod manager;
pub(crate) mod merge_patch;
pub mod metrics;
pub mod object_key;
pub(crate) mod outcome;
pub(crate) mod predicate;
pub(crate) mod rate_limiter;
pub mod retry_after;
pub(crate) mod store;
pub mod tasks;
pub(crate) mod workqueue;

#[cfg(test)]
pub(crate) mod testing;
