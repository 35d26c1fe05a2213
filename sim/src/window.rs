//! [`Window`]: a span of simulated time during which a fault holds, shared by the fault plan's rules
//! for the API server, GitHub and the network.

use serde::{Deserialize, Serialize};

/// A span of simulated time, in milliseconds since the run began: `[start_ms, end_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    /// First millisecond the fault is active.
    pub start_ms: u64,
    /// First millisecond it is no longer active.
    pub end_ms: u64,
}

impl Window {
    /// Whether `ms` falls inside the window.
    pub fn contains(&self, ms: u64) -> bool {
        self.start_ms <= ms && ms < self.end_ms
    }
}
