//! The legacy summerwind mode of ARC (`actions.summerwind.dev`, ARC-MODEL §7): one Runner, one
//! pod, a registration token in the status.
//!
//! - `pod_builder`: the Runner's pod and its `pod-template-hash` (with or without the token,
//!   per #1087).
//! - `runner`: the Runner controller (token refresh, registration check, unregister before
//!   recreate per #1125).
//! - `context`: what its reconciles share (API door, clock, switches, GitHub clients, settings).
//! - `token_cache`: registration tokens reused within a margin (#1296).
//!
//! [`start`] adds the controller to a manager; [`crate::start`] calls it for every process that runs
//! the legacy family.

mod context;
pub(crate) mod pod_builder;
mod rate_limit_memory;
pub(crate) mod runner;
pub(crate) mod token_cache;

use std::sync::Arc;

use crate::inputs::Inputs;
use crate::runtime::manager::Manager;

pub use context::{LegacyContext, LegacySettings};

/// Adds the legacy Runner controller on `inputs` with `settings` to `manager`; returns the context
/// its reconciles share.
pub fn start(manager: &mut Manager, inputs: &Inputs, settings: LegacySettings) -> Arc<LegacyContext> {
    let ctx = Arc::new(LegacyContext::new(inputs, settings));
    let controller = runner::runner_controller(manager, ctx.clone());
    manager.add_controller(controller);
    ctx
}
