//! # mirror-controller: a kube-rs controller that is not ARC
//!
//! A small controller written the way a kube-rs author writes one, to show that arcsim's world takes
//! any controller given as a function of a `kube::Client` and a clock plus its CRD manifests. A
//! [`Mirror`](crd::Mirror) custom resource holds a map of strings; the controller keeps one ConfigMap
//! per Mirror with that data, owned by it (so garbage collection removes it with the Mirror), and
//! records in the Mirror's status which generation it mirrored.
//!
//! Its first version ([`ChildNames::Generated`]) named each ConfigMap with `generateName` and created
//! one whenever its cache of ConfigMaps showed none. Its own status write wakes it again at once, and
//! when the ConfigMap watch lags the Mirror watch the second pass creates a second ConfigMap: the
//! classic watch-lag duplicate. The fix ([`ChildNames::Stable`]) names the ConfigMap after its Mirror,
//! so a second create answers 409 AlreadyExists, which the controller takes as "already there". The
//! tests (`tests/race.rs`) run both in a seeded arcsim world and catch the first with an oracle.
//!
//! - [`crd`]: the Mirror kind (`mirror crd` prints its manifest, `crd.yaml`).
//! - [`controller`]: the watches, the work queue and the reconcile.

pub mod controller;
pub mod crd;

pub use controller::{ChildNames, Config, run};
