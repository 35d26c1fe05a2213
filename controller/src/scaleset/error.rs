//! The error every scale-set reconciler returns, with the reason label metrics and oracles read
//! (`controller_runtime_reconcile_errors_total{controller, reason}`): for a Kubernetes error, the
//! `Status` reason kube-apiserver gave (`AlreadyExists`, `Conflict`, …).

use crate::github::ActionsError;
use crate::runtime::lazy_copy::LazyCopyError;
use crate::runtime::outcome::ReconcileError;
use crate::scaleset::resource_builder::BuildError;

/// Why a scale-set reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call failed.
    #[error("kubernetes API: {0}")]
    Kube(#[source] kube::Error),
    /// A GitHub call failed.
    #[error("GitHub: {0}")]
    GitHub(#[source] ActionsError),
    /// An object could not be built from its owner.
    #[error("building an object: {0}")]
    Build(#[from] BuildError),
    /// A merge patch could not be computed.
    #[error("computing a patch: {0}")]
    Patch(#[from] LazyCopyError),
    /// The GitHub config secret is missing.
    #[error("GitHub config secret {namespace}/{name} not found")]
    MissingSecret {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// The GitHub config secret holds no usable credentials.
    #[error("GitHub config secret {secret}: {message}")]
    Credentials {
        /// The secret's name.
        secret: String,
        /// What is wrong.
        message: String,
    },
    /// Anything else that stops a reconcile, described.
    #[error("{0}")]
    Other(String),
}

impl From<kube::Error> for Error {
    fn from(e: kube::Error) -> Self {
        Error::Kube(e)
    }
}

impl From<ActionsError> for Error {
    fn from(e: ActionsError) -> Self {
        Error::GitHub(e)
    }
}

impl ReconcileError for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Kube(e) => kube_reason(e),
            Error::GitHub(e) => e.kind(),
            Error::Build(_) => "Build",
            Error::Patch(_) => "Patch",
            Error::MissingSecret { .. } | Error::Credentials { .. } => "Credentials",
            Error::Other(_) => "Other",
        }
    }
}

/// The `Status` reason of a Kubernetes error, as a static label.
pub fn kube_reason(e: &kube::Error) -> &'static str {
    let kube::Error::Api(status) = e else { return "Transport" };
    match status.reason.as_str() {
        "AlreadyExists" => "AlreadyExists",
        "Conflict" => "Conflict",
        "NotFound" => "NotFound",
        "Invalid" => "Invalid",
        "Forbidden" => "Forbidden",
        "TooManyRequests" => "TooManyRequests",
        "InternalError" => "InternalError",
        "ServiceUnavailable" => "ServiceUnavailable",
        "Timeout" => "Timeout",
        "Expired" | "Gone" => "Expired",
        "BadRequest" => "BadRequest",
        "UnsupportedMediaType" => "UnsupportedMediaType",
        _ => "Unknown",
    }
}

/// The result of a scale-set reconcile step.
pub type Result<T, E = Error> = std::result::Result<T, E>;
