//! The fakes' tests in one binary (one link, and the generic code they share compiled once):
//!
//! - [`apiserver`]: the fake API server, driven through `kube::Api` (the real client).
//! - [`github`]: the fake GitHub, driven by the production `ActionsClient` over the real wire format.
//! - [`kubelet`]: the kubelet model against both fakes.

mod apiserver;
mod github;
mod kubelet;
