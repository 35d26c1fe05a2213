//! The controller's integration tests in one binary (one link, and the generic code they share
//! compiled once):
//!
//! - [`github_wire`]: golden wire tests of the production `ActionsClient`.
//! - [`manifests`]: every manifest shipped for the controller decodes into its k8s-openapi type and
//!   back unchanged.

mod github_wire;
mod manifests;
