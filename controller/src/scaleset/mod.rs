//! The scale-set family of ARC (`actions.github.com`): what its controllers build and which
//! updates they care about.
//!
//! - `context`: what every reconciler shares (the kit's base, builders, settings).
//! - [`resource_builder`]: pure builders for every object the scale-set controllers create.
//! - [`predicates`]: the \[V\] update predicates of the owned watches (ARC-MODEL §5.1).
//! - `autoscaling_runner_set`: the AutoscalingRunnerSet controller (§3.3); [`version`]: which
//!   `app.kubernetes.io/version` labels it reconciles.
//! - [`ephemeral_runner_set`]: the EphemeralRunnerSet controller (§3.2, §5.4).
//! - [`ephemeral_runner`]: the EphemeralRunner controller (§3.1).
//! - `autoscaling_listener`: the AutoscalingListener controller (§3.4).
//! - [`listener`]: the listener process that turns job messages into replicas (§4, §5.2); its one
//!   entry point is [`listener::run`].
//!
//! [`start`] adds the selected controllers to a manager; [`crate::start`] calls it for every process
//! that runs the scale-set family.

pub(crate) mod autoscaling_listener;
pub(crate) mod autoscaling_runner_set;
mod connection;
mod context;
pub mod ephemeral_runner;
pub mod ephemeral_runner_set;
pub mod listener;
pub mod predicates;
pub mod resource_builder;
pub mod version;

use std::sync::Arc;

pub use connection::GitHubTarget;
pub use context::{ScaleSetContext, ScaleSetReconcilers, ScaleSetSettings};
pub use version::{ARC_CHART_VERSIONS, AcceptedVersions, InvalidAcceptedVersion, is_version_allowed};

use crate::inputs::Inputs;
use crate::runtime::manager::Manager;

/// Adds the AutoscalingRunnerSet, EphemeralRunnerSet, EphemeralRunner and AutoscalingListener
/// controllers that `settings.reconcilers` selects to `manager`, sharing one context (and, through
/// the manager, one informer per kind); returns the context.
pub fn start(manager: &mut Manager, inputs: &Inputs, settings: ScaleSetSettings) -> Arc<ScaleSetContext> {
    let selected = settings.reconcilers;
    let ctx = Arc::new(ScaleSetContext::new(inputs, settings));
    if selected.autoscaling_runner_set {
        let ars = autoscaling_runner_set::autoscaling_runner_set_controller(manager, ctx.clone());
        manager.add_controller(ars);
    }
    if selected.ephemeral_runner_set {
        let ers = ephemeral_runner_set::ephemeral_runner_set_controller(manager, ctx.clone());
        manager.add_controller(ers);
    }
    if selected.ephemeral_runner {
        let er = ephemeral_runner::ephemeral_runner_controller(manager, ctx.clone());
        manager.add_controller(er);
    }
    if selected.autoscaling_listener {
        let al = autoscaling_listener::autoscaling_listener_controller(manager, ctx.clone());
        manager.add_controller(al);
    }
    ctx
}
