//! [`BuildError`]: why an object builder (of either family) could not produce an object. Every case
//! is bad input, reported, never a panic.

use crate::crd::autoscaling_runner_set::ScaleSetIdError;
use crate::hash::HashError;

/// Why a builder could not produce an object.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// An input object has no `metadata.name`.
    #[error("{kind} has no metadata.name")]
    MissingName {
        /// Kind of the nameless object.
        kind: &'static str,
    },
    /// An owner has no uid yet (it was never stored), so no ownerReference can point at it.
    #[error("{kind} {name:?} has no metadata.uid; an owner must be read from the API server first")]
    OwnerWithoutUid {
        /// Kind of the owner.
        kind: &'static str,
        /// Name of the owner.
        name: String,
    },
    /// The ARS has not been registered at GitHub yet.
    #[error(transparent)]
    ScaleSetId(#[from] ScaleSetIdError),
    /// The GitHub config URL does not name an enterprise, organization or repository.
    #[error("invalid GitHub config URL {url:?}: should point to an enterprise, org, or repository")]
    InvalidGitHubConfigUrl {
        /// The URL as given.
        url: String,
    },
    /// The runner pod template has no container named `runner`.
    #[error("the pod template of {runner:?} has no container named \"runner\"")]
    MissingRunnerContainer {
        /// The EphemeralRunner's name.
        runner: String,
    },
    /// The listener config failed validation (what was wrong, as the config's own error says it).
    #[error("invalid listener config: {0}")]
    ListenerConfig(String),
    /// An integrity hash could not be computed.
    #[error(transparent)]
    Hash(#[from] HashError),
    /// An object could not be encoded.
    #[error("cannot encode the listener config: {0}")]
    Encode(#[source] serde_json::Error),
}

/// A builder's result.
pub type BuildResult<T> = Result<T, BuildError>;
