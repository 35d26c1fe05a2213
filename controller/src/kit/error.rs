//! The error every reconcile returns, scale-set and legacy alike, with the reason label metrics and
//! oracles read (`controller_runtime_reconcile_errors_total{controller, reason}`): for a Kubernetes
//! error, the `Status` reason kube-apiserver gave (`AlreadyExists`, `Conflict`, …); for a GitHub
//! error, its [`ActionsError::kind`].

use super::build::BuildError;
use crate::github::{ActionsError, CredentialsError};
use crate::runtime::api::error_reason;
use crate::runtime::lazy_copy::LazyCopyError;
use crate::runtime::outcome::ReconcileError;

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A Kubernetes API call failed.
    #[error("kubernetes API: {0}")]
    Kube(#[source] kube::Error),
    /// A GitHub call failed.
    #[error("GitHub: {0}")]
    GitHub(#[source] ActionsError),
    /// The runner could not be unregistered because GitHub lists it as busy (legacy ARC: "runner is
    /// busy").
    #[error("runner {name:?} is busy")]
    RunnerBusy {
        /// The runner's name.
        name: String,
    },
    /// An object could not be built from its owner.
    #[error("building an object: {0}")]
    Build(#[from] BuildError),
    /// A merge patch could not be computed.
    #[error("computing a patch: {0}")]
    Patch(#[from] LazyCopyError),
    /// The secret holding the GitHub credentials is missing.
    #[error("GitHub secret {namespace}/{name} not found")]
    MissingSecret {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// The secret holding the GitHub credentials holds no usable credentials.
    #[error("GitHub secret {secret}: {source}")]
    Credentials {
        /// The secret's name.
        secret: String,
        /// What is wrong.
        #[source]
        source: CredentialsError,
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

impl Error {
    /// Whether GitHub refused the call for its API rate limit (429, or 403 saying so, as go-github's
    /// `RateLimitError` and `AbuseRateLimitError` are recognised).
    pub fn is_rate_limited(&self) -> bool {
        let Error::GitHub(ActionsError::Http { status, message, .. }) = self else { return false };
        *status == 429 || (*status == 403 && message.to_ascii_lowercase().contains("rate limit"))
    }
}

impl ReconcileError for Error {
    fn reason(&self) -> &'static str {
        match self {
            Error::Kube(e) => error_reason(e),
            Error::GitHub(e) => e.kind(),
            Error::RunnerBusy { .. } => "runner_busy",
            Error::Build(_) => "Build",
            Error::Patch(_) => "Patch",
            Error::MissingSecret { .. } | Error::Credentials { .. } => "Credentials",
            Error::Other(_) => "Other",
        }
    }
}

/// The result of a reconcile step.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::Operation;

    fn http(status: u16, message: &str) -> Error {
        Error::GitHub(ActionsError::Http {
            operation: Operation::ListRunners,
            status,
            exception: None,
            message: message.into(),
        })
    }

    #[test]
    fn rate_limits_are_429_or_a_403_that_says_so() {
        assert!(http(429, "slow down").is_rate_limited());
        assert!(http(403, "API rate limit exceeded for user ID 1.").is_rate_limited());
        assert!(!http(403, "Resource not accessible by integration").is_rate_limited());
        assert!(!http(500, "rate limit").is_rate_limited());
        assert!(!Error::RunnerBusy { name: "r".into() }.is_rate_limited());
    }

    #[test]
    fn reasons_name_the_cause() {
        assert_eq!(Error::RunnerBusy { name: "r".into() }.reason(), "runner_busy", "as GitHub's 422 kind");
        assert_eq!(http(500, "x").reason(), "http_error");
        let missing = Error::MissingSecret { namespace: "n".into(), name: "s".into() };
        assert_eq!(missing.reason(), "Credentials");
        assert!(missing.to_string().contains("n/s"));
        assert_eq!(Error::Other("x".into()).reason(), "Other");
    }
}
