//! # arc-sim: the fakes
//!
//! Everything arcsim runs a controller against, driven by one [`Seed`] and one simulated clock. It
//! does not depend on the controller (`arc-controller`), so a fake that reached into the controller's
//! code would not compile: the fakes speak HTTP, CRD manifests and their own wire types. The crate
//! `arc-world` assembles them around the controller. Map of the code:
//!
//! - [`apiserver`]: the fake Kubernetes API server ([`apiserver::FakeApiServer`]); it learns custom
//!   resources from CRD manifests ([`apiserver::CrdSet`]), never from the controller's types.
//! - [`actor`]: the header by which the world's clients name themselves to both fakes.
//! - [`seed`]: the run's seed and the named ChaCha8 stream of each component.
//! - [`clock`]: [`SimClock`], a fixed epoch plus tokio's paused elapsed time (the world hands it to
//!   the controller as its clock seam).
//! - [`trace`]: the append-only, sim-time-stamped [`Trace`] and its stable hash.
//! - [`faults`]: the serde [`faults::FaultPlan`] both fakes inject from.
//! - [`window`]: the span of simulated time a fault holds over.
//! - [`fnv`]: FNV-1a, the fixed hash behind trace fingerprints and stream names.
//! - [`github`]: [`github::FakeGitHub`], the stateful fake of GitHub's Actions service and runner REST
//!   API, served over the real wire format in its own types (golden cases: `fixtures/github/`).
//! - [`kubelet`]: the node, an API client with its own lagged pod watch: pods scheduled, started, their
//!   status written as a kubelet writes it, run (runner processes, the real listener), terminated
//!   (SIGTERM, grace period, SIGKILL).
//! - [`workload`]: the seeded job-arrival generator that drives the fake.
//! - [`schedule`]: the order the sim's tasks take same-instant work in (`--schedule`).
#![deny(missing_docs)]

pub mod actor;
pub mod apiserver;
pub mod clock;
pub mod clock_skew;
pub mod compact_json;
pub mod faults;
pub mod fnv;
pub mod github;
pub mod hosts;
pub mod json_at;
pub mod kubelet;
pub mod net;
pub mod perturb;
pub mod record;
pub mod schedule;
pub mod seed;
pub mod trace;
pub mod window;
pub mod workload;

pub use clock::SimClock;
pub use seed::{Component, Seed};
pub use trace::{Trace, TraceMode};
