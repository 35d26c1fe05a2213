//! The legacy summerwind mode of ARC (`actions.summerwind.dev`, ARC-MODEL §7): one Runner, one
//! pod, a registration token in the status.
//!
//! - [`pod_builder`]: the Runner's pod and its `pod-template-hash` (with or without the token,
//!   per #1087).

pub mod pod_builder;
