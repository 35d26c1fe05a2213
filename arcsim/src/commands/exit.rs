//! The exit statuses every `arcsim` subcommand keeps, and the errors that carry them: a command
//! returns [`found`] when it found failures (a violation, a bug that survived its bound, a perturbed
//! run that failed), [`usage`] for arguments or input files it cannot use; the input errors of the
//! library's own types ([`AssumeError`], [`CapsuleError`] but a run's, [`MergeError`], [`ScaleError`],
//! [`ShardError`], [`CrdFileError`]) count as usage errors too; anything else means the run could not
//! be carried out. Clap's own argument errors exit 2, as [`USAGE`] does.

use arc_sim::github::AssumeError;

use super::apiserver::CrdFileError;
use crate::capsule::CapsuleError;
use crate::merge::MergeError;
use crate::shard::ShardError;
use arc_scenarios::scaled::ScaleError;

/// Everything passed (or, for a listing or a server, the command did what it was asked).
pub const PASSED: u8 = 0;
/// Failures found.
pub const FAILURES_FOUND: u8 = 1;
/// A usage error: bad arguments, an input file that cannot be read or used, an output path that
/// cannot be written.
pub const USAGE: u8 = 2;
/// The run could not be carried out (the world failed to build, a port was taken, …).
pub const COULD_NOT_RUN: u8 = 3;

/// What `arcsim --help` says of them.
pub const SCHEME: &str = "Exit status (every subcommand): 0 passed; 1 failures found (a violation, a bug \
variant that survived its bound, a failed perturbed run, a capsule that does or does not reproduce); 2 usage \
error (bad arguments, an input file that cannot be read or used, an output path that cannot be written); 3 \
the run could not be carried out; 141 standard output was closed (`| head`).";

/// Failures found.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Found(pub String);

/// A usage error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(pub String);

/// The error of a command that found failures.
pub fn found(message: impl Into<String>) -> anyhow::Error {
    Found(message.into()).into()
}

/// The error of a command given what it cannot use.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    Usage(message.into()).into()
}

/// The exit status of a command that failed with `error`.
pub fn status_of(error: &anyhow::Error) -> u8 {
    if error.is::<Found>() {
        return FAILURES_FOUND;
    }
    let input = error.is::<Usage>()
        || error.is::<AssumeError>()
        || error.is::<MergeError>()
        || error.is::<ScaleError>()
        || error.is::<ShardError>()
        || error.is::<CrdFileError>()
        || error.downcast_ref::<CapsuleError>().is_some_and(|e| !matches!(e, CapsuleError::Run(_)));
    if input { USAGE } else { COULD_NOT_RUN }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_error_has_its_status() {
        assert_eq!(status_of(&found("2 violation(s)")), FAILURES_FOUND);
        assert_eq!(status_of(&usage("--seed is required")), USAGE);
        assert_eq!(status_of(&ScaleError::Zero.into()), USAGE);
        assert_eq!(status_of(&CapsuleError::Syntax("x".into()).into()), USAGE);
        assert_eq!(status_of(&anyhow::anyhow!("cannot listen on 127.0.0.1:1")), COULD_NOT_RUN);
        assert_eq!(status_of(&found("x").context("while sweeping")), FAILURES_FOUND, "context keeps it");
    }
}
