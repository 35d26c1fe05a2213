//! [`ProcessClocks`]: the clock each controller process reads, by its API actor (`controller`,
//! `controller#0`, …): the simulated clock through the process's skew from
//! [`WorldConfig::controller_clocks`](crate::WorldConfig), true time for a process not named there.

use std::collections::BTreeMap;

use arc_sim::clock::SimClock;
use arc_sim::clock_skew::{ClockSkew, PartyClock};

/// The controller processes' clocks.
#[derive(Debug, Clone)]
pub(crate) struct ProcessClocks {
    /// True time.
    pub sim: SimClock,
    /// How far each process's clock reads from it, by actor.
    pub skews: BTreeMap<String, ClockSkew>,
}

impl ProcessClocks {
    /// The clock of the process whose API actor is `actor`.
    pub(crate) fn of(&self, actor: &str) -> PartyClock {
        PartyClock::new(self.sim, self.skews.get(actor).copied().unwrap_or_default())
    }
}
