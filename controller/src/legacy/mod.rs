//! The legacy summerwind mode of ARC (`actions.summerwind.dev`, ARC-MODEL §7): one Runner, one
//! pod, a registration token in the status.
//!
//! - [`pod_builder`]: the Runner's pod and its `pod-template-hash` (with or without the token,
//!   per #1087).
//! - [`runner`]: the Runner controller (token refresh, registration check, unregister before
//!   recreate per #1125).
//! - [`context`]: what its reconciles share (API door, clock, switches, GitHub clients, settings).
//! - [`token_cache`]: registration tokens reused within a margin (#1296).
//!
//! [`register`] adds the controller to a manager, as the binary does.

pub mod context;
pub mod pod_builder;
pub mod runner;
pub mod token_cache;

use std::sync::Arc;

use crate::runtime::manager::Manager;

/// Adds the legacy Runner controller to `manager`.
pub fn register(manager: &mut Manager, ctx: &Arc<context::LegacyContext>) {
    let controller = runner::runner_controller(manager, ctx.clone());
    manager.add_controller(controller);
}
