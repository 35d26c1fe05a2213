//! [`NetEvent`]: what the network did during a run (turmoil backend), as events of the record: each
//! timed command when applied, each watch stream cut and each long poll dropped by the server-side
//! faults. The network probes read them.

use crate::faults::network::NetCommand;
use crate::record::{Line, Observed};

/// A network fault applied or fired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetEvent {
    /// A timed command (partition, repair, hold, release, latency, crash, bounce) was applied.
    Applied(NetCommand),
    /// The connection of `actor`'s watch of `resource` was reset after its events.
    WatchCut {
        /// The watcher.
        actor: String,
        /// Resource plural.
        resource: String,
    },
    /// The connection of a message long poll in flight was reset.
    LongPollDropped,
}

impl Observed for NetEvent {
    fn line(&self) -> Option<Line<'_>> {
        Some(match self {
            NetEvent::Applied(command) => {
                Line::new("network", "applied", serde_json::to_string(command).unwrap_or_default())
            }
            NetEvent::WatchCut { actor, resource } => {
                Line::new("network", "watch-cut", format!("{resource} by={actor}"))
            }
            NetEvent::LongPollDropped => Line::new("network", "long-poll-dropped", "get-message"),
        })
    }

    crate::observed_as_any!();
}
