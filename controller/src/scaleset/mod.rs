//! The scale-set family of ARC (`actions.github.com`): what its controllers build and which
//! updates they care about.
//!
//! - [`context`]: what every reconciler shares (API door, clock, switches, GitHub clients, settings).
//! - [`error`]: the reconcile error and its metric reason.
//! - [`resource_builder`]: pure builders for every object the scale-set controllers create.
//! - [`predicates`]: the \[V\] update predicates of the owned watches (ARC-MODEL §5.1).
//! - [`autoscaling_runner_set`]: the AutoscalingRunnerSet controller (§3.3).
//! - [`autoscaling_listener`]: the AutoscalingListener controller (§3.4).

pub mod autoscaling_listener;
pub mod autoscaling_runner_set;
pub mod context;
pub mod ephemeral_runner;
pub mod ephemeral_runner_set;
pub mod error;
pub mod listener;
pub mod predicates;
pub mod resource_builder;
