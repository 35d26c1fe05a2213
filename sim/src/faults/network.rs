//! The network faults of a fault plan ([`FaultPlan::network`](crate::faults::FaultPlan)): timed link
//! faults between two turmoil hosts (partition, one way too; hold; added latency), server-side cuts (a
//! watch stream cut after N events, GitHub's message long polls dropped) and host crashes (the
//! controller crashed and bounced, the listener host crashed and back). Plain data, so a plan prints in
//! a replay line; the scenario that builds one draws its times from the seed. [`NetFault::schedule`]
//! turns the timed ones into [`NetCommand`]s the simulation applies at their sim times.

use serde::{Deserialize, Serialize};

use crate::hosts::{HOST_CONTROLLER, HOST_LISTENERS, HOSTS};
use crate::window::Window;

/// One network fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum NetFault {
    /// Drop every segment between hosts `a` and `b` during `window` (only from `a` to `b` when
    /// `one_way`), then repair the link.
    Partition {
        /// One host.
        a: String,
        /// The other.
        b: String,
        /// When.
        window: Window,
        /// Only `a` → `b`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        one_way: bool,
    },
    /// Hold every segment between `a` and `b` during `window` and deliver them at its end.
    Hold {
        /// One host.
        a: String,
        /// The other.
        b: String,
        /// When.
        window: Window,
    },
    /// Every segment between `a` and `b` takes `ms` during `window`.
    Latency {
        /// One host.
        a: String,
        /// The other.
        b: String,
        /// When.
        window: Window,
        /// The added latency.
        ms: u64,
    },
    /// Cut every watch of `resources` (all when empty) opened during `window` after `after_events`
    /// events: the server resets the connection, the client resumes from its last resourceVersion.
    CutWatch {
        /// Resource plurals.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        resources: Vec<String>,
        /// Events delivered before the cut (at least 1).
        after_events: u32,
        /// When the watches were opened.
        window: Window,
    },
    /// Reset the connection of every message long poll in flight at `at_ms`.
    DropLongPoll {
        /// When.
        at_ms: u64,
    },
    /// Crash the controller's host at `at_ms` (every task and in-memory state gone) and bounce it
    /// `down_ms` later: a controller restarting from scratch.
    CrashController {
        /// When.
        at_ms: u64,
        /// How long it stays down.
        down_ms: u64,
    },
    /// Crash the listener pods' host at `at_ms` (every listener dies, as on a node that fails) and
    /// bring it back `down_ms` later.
    CrashListeners {
        /// When.
        at_ms: u64,
        /// How long it stays down.
        down_ms: u64,
    },
}

/// Something the simulation does to its network or hosts at a sim time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "net", rename_all = "kebab-case")]
pub enum NetCommand {
    /// Partition `a` from `b` (one way: only `a` → `b`).
    Partition {
        /// One host.
        a: String,
        /// The other.
        b: String,
        /// Only `a` → `b`.
        one_way: bool,
    },
    /// Repair what [`NetCommand::Partition`] did.
    Repair {
        /// One host.
        a: String,
        /// The other.
        b: String,
        /// Only `a` → `b`.
        one_way: bool,
    },
    /// Hold segments between `a` and `b`.
    Hold {
        /// One host.
        a: String,
        /// The other.
        b: String,
    },
    /// Release held segments.
    Release {
        /// One host.
        a: String,
        /// The other.
        b: String,
    },
    /// Set the latency of the link between `a` and `b`.
    Latency {
        /// One host.
        a: String,
        /// The other.
        b: String,
        /// Milliseconds.
        ms: u64,
    },
    /// Crash a host's software.
    Crash {
        /// The host.
        host: String,
    },
    /// Restart a crashed host's software from scratch.
    Bounce {
        /// The host.
        host: String,
    },
}

/// Why a network fault was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetFaultError {
    /// A host name turmoil does not know.
    #[error("network fault {rule}: unknown host {host:?}; valid: {valid}")]
    Host {
        /// Which fault (`network[0]`).
        rule: String,
        /// The bad name.
        host: String,
        /// The valid names.
        valid: String,
    },
    /// A link from a host to itself.
    #[error("network fault {rule}: a link needs two different hosts, not {host:?} twice")]
    SameHost {
        /// Which fault.
        rule: String,
        /// The host.
        host: String,
    },
    /// An empty window, a zero count or duration.
    #[error("network fault {rule}: {what}")]
    Range {
        /// Which fault.
        rule: String,
        /// What is wrong.
        what: String,
    },
}

impl NetFault {
    /// Checks the fault; `rule` names it in the error.
    pub fn validate(&self, rule: &str) -> Result<(), NetFaultError> {
        let range = |what: String| Err(NetFaultError::Range { rule: rule.into(), what });
        match self {
            NetFault::Partition { a, b, window, .. }
            | NetFault::Hold { a, b, window }
            | NetFault::Latency { a, b, window, .. } => {
                check_link(rule, a, b)?;
                if window.start_ms >= window.end_ms {
                    return range(format!("window [{}, {}) is empty", window.start_ms, window.end_ms));
                }
            }
            NetFault::CutWatch { after_events, window, .. } => {
                if *after_events == 0 {
                    return range("after_events must be at least 1".into());
                }
                if window.start_ms >= window.end_ms {
                    return range(format!("window [{}, {}) is empty", window.start_ms, window.end_ms));
                }
            }
            NetFault::DropLongPoll { .. } => {}
            NetFault::CrashController { down_ms, .. } | NetFault::CrashListeners { down_ms, .. } => {
                if *down_ms == 0 {
                    return range("down_ms must be at least 1".into());
                }
            }
        }
        Ok(())
    }

    /// The commands this fault takes, at their sim times (none for the server-side cuts).
    pub fn schedule(&self) -> Vec<(u64, NetCommand)> {
        let link = |a: &String, b: &String| (a.clone(), b.clone());
        match self {
            NetFault::Partition { a, b, window, one_way } => {
                let (a, b) = link(a, b);
                let one_way = *one_way;
                vec![
                    (window.start_ms, NetCommand::Partition { a: a.clone(), b: b.clone(), one_way }),
                    (window.end_ms, NetCommand::Repair { a, b, one_way }),
                ]
            }
            NetFault::Hold { a, b, window } => {
                let (a, b) = link(a, b);
                vec![
                    (window.start_ms, NetCommand::Hold { a: a.clone(), b: b.clone() }),
                    (window.end_ms, NetCommand::Release { a, b }),
                ]
            }
            NetFault::Latency { a, b, window, ms } => {
                let (a, b) = link(a, b);
                vec![
                    (window.start_ms, NetCommand::Latency { a: a.clone(), b: b.clone(), ms: *ms }),
                    (window.end_ms, NetCommand::Latency { a, b, ms: 0 }),
                ]
            }
            NetFault::CrashController { at_ms, down_ms } => crash(HOST_CONTROLLER, *at_ms, *down_ms),
            NetFault::CrashListeners { at_ms, down_ms } => crash(HOST_LISTENERS, *at_ms, *down_ms),
            NetFault::CutWatch { .. } | NetFault::DropLongPoll { .. } => Vec::new(),
        }
    }
}

fn crash(host: &str, at_ms: u64, down_ms: u64) -> Vec<(u64, NetCommand)> {
    vec![
        (at_ms, NetCommand::Crash { host: host.into() }),
        (at_ms.saturating_add(down_ms), NetCommand::Bounce { host: host.into() }),
    ]
}

fn check_link(rule: &str, a: &str, b: &str) -> Result<(), NetFaultError> {
    for host in [a, b] {
        if !HOSTS.contains(&host) {
            let valid = HOSTS.join(", ");
            return Err(NetFaultError::Host { rule: rule.into(), host: host.into(), valid });
        }
    }
    if a == b {
        return Err(NetFaultError::SameHost { rule: rule.into(), host: a.into() });
    }
    Ok(())
}

/// Every timed command of `faults`, in time order (stable: plan order within a millisecond).
pub fn schedule(faults: &[NetFault]) -> Vec<(u64, NetCommand)> {
    let mut commands: Vec<(u64, NetCommand)> = faults.iter().flat_map(NetFault::schedule).collect();
    commands.sort_by_key(|(at_ms, _)| *at_ms);
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_hosts_and_empty_windows_are_refused_with_the_rule_named() {
        let window = Window { start_ms: 5, end_ms: 5 };
        let bad = NetFault::Hold { a: "node".into(), b: "moon".into(), window };
        assert!(bad.validate("network[0]").unwrap_err().to_string().contains("unknown host \"moon\""));
        let empty = NetFault::Hold { a: "node".into(), b: "apiserver".into(), window };
        assert!(empty.validate("network[1]").unwrap_err().to_string().contains("network[1]: window"));
    }

    #[test]
    fn a_partition_is_repaired_at_the_end_of_its_window() {
        let window = Window { start_ms: 10, end_ms: 20 };
        let fault =
            NetFault::Partition { a: "controller".into(), b: "apiserver".into(), window, one_way: true };
        let times: Vec<u64> = fault.schedule().iter().map(|(at, _)| *at).collect();
        assert_eq!(times, vec![10, 20]);
        assert!(matches!(fault.schedule()[1].1, NetCommand::Repair { one_way: true, .. }));
    }
}
