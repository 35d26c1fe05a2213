//! The legacy summerwind mode of ARC (`actions.summerwind.dev`, ARC-MODEL §7): one Runner, one
//! pod, a registration token in the status.
//!
//! - [`pod_builder`]: the Runner's pod and its `pod-template-hash` (with or without the token,
//!   per #1087).
//! - [`runner`]: the Runner controller (token refresh, registration check, unregister before
//!   recreate per #1125).
//! - [`context`]: what its reconciles share (API door, clock, switches, GitHub clients, settings).
//! - [`token_cache`]: registration tokens reused within a margin (#1296).

pub mod context;
pub mod pod_builder;
pub mod runner;
pub mod token_cache;
