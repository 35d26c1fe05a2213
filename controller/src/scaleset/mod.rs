//! The scale-set family of ARC (`actions.github.com`): what its controllers build and which
//! updates they care about.
//!
//! - [`context`]: what every reconciler shares (API door, clock, switches, GitHub clients, settings).
//! - [`error`]: the reconcile error and its metric reason.
//! - [`resource_builder`]: pure builders for every object the scale-set controllers create.
//! - [`predicates`]: the \[V\] update predicates of the owned watches (ARC-MODEL §5.1).

pub mod context;
pub mod ephemeral_runner;
pub mod error;
pub mod predicates;
pub mod resource_builder;
