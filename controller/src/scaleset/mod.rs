//! The scale-set family of ARC (`actions.github.com`): what its controllers build and which
//! updates they care about.
//!
//! - [`context`]: what every reconciler shares (API door, clock, switches, GitHub clients, settings).
//! - [`error`]: the reconcile error and its metric reason.
//! - [`resource_builder`]: pure builders for every object the scale-set controllers create.
//! - [`predicates`]: the \[V\] update predicates of the owned watches (ARC-MODEL §5.1).
//! - [`autoscaling_runner_set`]: the AutoscalingRunnerSet controller (§3.3).
//! - [`ephemeral_runner_set`]: the EphemeralRunnerSet controller (§3.2, §5.4).
//! - [`ephemeral_runner`]: the EphemeralRunner controller (§3.1).
//! - [`autoscaling_listener`]: the AutoscalingListener controller (§3.4).
//! - [`listener`]: the listener process that turns job messages into replicas (§4, §5.2).
//!
//! [`register`] adds the four controllers to a manager, as the binary does.

pub mod autoscaling_listener;
pub mod autoscaling_runner_set;
pub mod context;
pub mod ephemeral_runner;
pub mod ephemeral_runner_set;
pub mod error;
pub mod listener;
pub mod predicates;
pub mod resource_builder;

use std::sync::Arc;

use crate::runtime::manager::Manager;

/// Adds the AutoscalingRunnerSet, EphemeralRunnerSet, EphemeralRunner and AutoscalingListener
/// controllers to `manager`, sharing `ctx` (and, through the manager, one informer per kind).
pub fn register(manager: &mut Manager, ctx: &Arc<context::ScaleSetContext>) {
    let ars = autoscaling_runner_set::autoscaling_runner_set_controller(manager, ctx.clone());
    manager.add_controller(ars);
    let ers = ephemeral_runner_set::ephemeral_runner_set_controller(manager, ctx.clone());
    manager.add_controller(ers);
    let er = ephemeral_runner::ephemeral_runner_controller(manager, ctx.clone());
    manager.add_controller(er);
    let al = autoscaling_listener::autoscaling_listener_controller(manager, ctx.clone());
    manager.add_controller(al);
}
