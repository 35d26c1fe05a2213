//! [`WorldEvent`]: what the world itself does during a run, as events of the record.

use crate::record::{Line, Observed};

/// A step of the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorldEvent {
    /// The run's whole configuration, as JSON (the first event of every run).
    Config(String),
    /// The controller process was killed and started afresh (`number` counts restarts, `in_flight`
    /// the reconciles it cut short).
    ControllerRestart {
        /// Restarts so far, this one included.
        number: u32,
        /// Reconciles in flight when it was killed.
        in_flight: i64,
    },
    /// A controller process (`who`: `controller` or a replica's actor) was stopped for `for_ms`.
    ControllerPaused {
        /// The process's actor.
        who: String,
        /// How long it stays stopped.
        for_ms: u64,
        /// Reconciles in flight when it stopped.
        in_flight: i64,
    },
    /// A stopped controller process went on (`who`, as [`WorldEvent::ControllerPaused`] named it).
    ControllerResumed {
        /// The process's actor.
        who: String,
    },
    /// A listener pod's process (the listener binary, pod `pod`) was stopped for `for_ms`.
    ListenerPaused {
        /// The listener's pod.
        pod: String,
        /// How long it stays stopped.
        for_ms: u64,
    },
    /// A stopped listener process went on.
    ListenerResumed {
        /// The listener's pod.
        pod: String,
    },
    /// A scheduled disruption was applied (as JSON).
    Disruption(String),
    /// A disruption could not be applied (why).
    DisruptionFailed(String),
    /// The world settled at this sim ms.
    Settled(u64),
    /// The run reached its horizon at this sim ms.
    Horizon(u64),
    /// The run stopped at this sim ms because it had answered what it was run for (an early answer).
    Answered(u64),
}

impl Observed for WorldEvent {
    fn line(&self) -> Option<Line<'_>> {
        Some(match self {
            WorldEvent::Config(json) => Line::new("world", "config", json),
            WorldEvent::ControllerRestart { number, in_flight } => {
                Line::new("world", "controller-restart", format!("#{number} in-flight={in_flight}"))
            }
            WorldEvent::ControllerPaused { who, for_ms, in_flight } => {
                Line::new("world", "controller-paused", format!("{who} for={for_ms}ms in-flight={in_flight}"))
            }
            WorldEvent::ControllerResumed { who } => Line::new("world", "controller-resumed", who),
            WorldEvent::ListenerPaused { pod, for_ms } => {
                Line::new("world", "listener-paused", format!("{pod} for={for_ms}ms"))
            }
            WorldEvent::ListenerResumed { pod } => Line::new("world", "listener-resumed", pod),
            WorldEvent::Disruption(json) => Line::new("world", "disruption", json),
            WorldEvent::DisruptionFailed(why) => Line::new("world", "disruption-failed", why),
            WorldEvent::Settled(ms) => Line::new("world", "settled", ms),
            WorldEvent::Horizon(ms) => Line::new("world", "horizon", ms),
            WorldEvent::Answered(ms) => Line::new("world", "answered", ms),
        })
    }

    crate::observed_as_any!();
}
