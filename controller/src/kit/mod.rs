//! The reconcile kit: what the reconcilers of both families (the scale-set controllers and the legacy
//! Runner controller) are built from, so that neither copies the other nor reaches into its modules.
//!
//! - [`step`]: a reconcile as short named steps, each either carrying on or ending the reconcile.
//! - [`meta`]: reading and building object metadata (names, labels, finalizers, ownerReferences).
//! - [`patch`]: sending a [`LazyCopy`](crate::runtime::lazy_copy::LazyCopy)'s merge patch.
//! - [`error`]: the one reconcile error both families return, with its metric reason.
//! - [`base`]: what every reconciler context holds, built once from the controller's inputs.
//! - [`build`]: the error every object builder returns.

pub(crate) mod base;
pub(crate) mod build;
pub(crate) mod error;
pub(crate) mod meta;
pub(crate) mod patch;
pub(crate) mod step;

pub(crate) use base::Base;
pub(crate) use build::BuildResult;
pub(crate) use error::{Error, Result};
