//! Schedule exploration: the order in which the sim's own tasks take work that is ready in the same
//! simulated instant. [`Schedule`] is the choice a run is made with (`--schedule fifo|random|pct:D`),
//! recorded in the world's config; [`Scheduler`] carries it out at the sim's scheduling points (the
//! fake API server before and after its commit and when it delivers a watch event, the fake GitHub
//! before and after it serves a request and when it assigns a job, a runner process's steps), where a
//! task may defer itself behind the other ready tasks. Under `fifo`, the default, a point does
//! nothing and draws nothing, so every run is exactly as it was before schedules existed.

pub mod scheduler;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use scheduler::{Scheduler, SchedulerSlot};

/// How same-instant work is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Schedule {
    /// tokio's own order: tasks run in the order they became ready (the default).
    #[default]
    Fifo,
    /// At every point the task defers itself a seeded number of times (0 to 3).
    Random,
    /// PCT-like priorities with `depth − 1` priority change points (see [`scheduler`]).
    Pct {
        /// D, the bug depth the schedule aims at (at least 1).
        depth: u32,
    },
}

impl Schedule {
    /// Whether this is the default order (nothing reordered, nothing drawn).
    pub fn is_fifo(&self) -> bool {
        *self == Schedule::Fifo
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Fifo => f.write_str("fifo"),
            Schedule::Random => f.write_str("random"),
            Schedule::Pct { depth } => write!(f, "pct:{depth}"),
        }
    }
}

/// Why a string is not a schedule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleParseError {
    /// Not one of the known forms.
    #[error("invalid schedule {0:?}: expected fifo, random or pct:D (D, the depth, a whole number from 1)")]
    Unknown(String),
    /// `pct:` with a depth that is not a whole number from 1.
    #[error("invalid schedule {0:?}: the depth D of pct:D must be a whole number from 1 (pct:3)")]
    Depth(String),
}

impl FromStr for Schedule {
    type Err = ScheduleParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "fifo" => Ok(Schedule::Fifo),
            "random" => Ok(Schedule::Random),
            other => {
                let depth =
                    other.strip_prefix("pct:").ok_or_else(|| ScheduleParseError::Unknown(s.into()))?;
                match depth.parse::<u32>() {
                    Ok(depth) if depth >= 1 => Ok(Schedule::Pct { depth }),
                    _ => Err(ScheduleParseError::Depth(s.into())),
                }
            }
        }
    }
}

impl TryFrom<String> for Schedule {
    type Error = ScheduleParseError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Schedule> for String {
    fn from(schedule: Schedule) -> String {
        schedule.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_print_and_read_back() {
        for text in ["fifo", "random", "pct:1", "pct:3"] {
            let schedule: Schedule = text.parse().unwrap();
            assert_eq!(schedule.to_string(), text);
            let json = serde_json::to_string(&schedule).unwrap();
            assert_eq!(serde_json::from_str::<Schedule>(&json).unwrap(), schedule);
        }
        assert_eq!("pct:3".parse::<Schedule>(), Ok(Schedule::Pct { depth: 3 }));
        assert!(Schedule::default().is_fifo());
    }

    #[test]
    fn bad_schedules_are_clear_errors() {
        let err = |s: &str| s.parse::<Schedule>().unwrap_err().to_string();
        assert!(err("pct:0").contains("must be a whole number from 1"), "{}", err("pct:0"));
        assert!(err("pct:x").contains("must be a whole number from 1"), "{}", err("pct:x"));
        assert!(err("pct:").contains("pct:D"), "{}", err("pct:"));
        assert!(err("foo").contains("expected fifo, random or pct:D"), "{}", err("foo"));
        assert!(serde_json::from_str::<Schedule>("\"pct:0\"").is_err());
    }
}
