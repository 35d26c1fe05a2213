//! # arc-scenarios
//!
//! The worlds arcsim builds around the controller, and the `arcsim` command that runs them.
