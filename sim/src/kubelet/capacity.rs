//! Node capacity (issue 42, item 3; docs/windows.md): how many pods the cluster's nodes run at once,
//! and nodes that join when pods wait. A pod the scheduler cannot place stays Pending with PodScheduled
//! False, reason `Unschedulable` (kube-scheduler's "0/N nodes are available: N Too many pods."), until
//! room frees (a pod on the node ends: the scheduler watches non-terminal pods only, so a Succeeded or
//! Failed pod frees its room as a deleted one does) or a node joins, as a cluster autoscaler adds one
//! some minutes after it sees pods it cannot place. Off unless a world asks for it
//! ([`super::KubeletConfig::node_capacity`]).
//!
//! Simplified: room is counted in pods (of one namespace, when the world says so: a runner node pool) (no CPU or memory requests); a node that joins adds room to
//! the one kubelet, whose node name every pod is bound to; nodes never leave.

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::apiserver::LagRange;

/// The cluster's room for pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeCapacity {
    /// The namespace whose pods the counted nodes run (a node pool for runners); pods of other
    /// namespaces run elsewhere, with room always. Absent: every pod counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Pods the first node runs at once.
    pub pods: u32,
    /// Nodes that join while pods wait; absent: none ever joins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_up: Option<ScaleUp>,
}

/// A cluster autoscaler's scale-up: once a pod is unschedulable and no node is on its way, a node is
/// asked for and joins after `delay` with room for `pods`, up to `max_nodes` joined in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleUp {
    /// From the request to the node Ready (uniform).
    pub delay: LagRange,
    /// Pods a joined node runs.
    pub pods: u32,
    /// Nodes that may join in all.
    pub max_nodes: u32,
}

/// The message kube-scheduler gives a pod no node has room for.
pub fn unschedulable_message(nodes: u32) -> String {
    format!("0/{nodes} nodes are available: {nodes} Too many pods.")
}

/// Who holds the room, and who waits for it. Shared by the scheduler's tasks and the kubelet's
/// informer.
#[derive(Debug, Default)]
pub(crate) struct Room {
    /// The namespace whose pods it counts (all when `None`).
    namespace: Option<String>,
    state: Mutex<RoomState>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct RoomState {
    capacity: u32,
    nodes: u32,
    joined: u32,
    joining: bool,
    /// uids of pods bound and not yet ended.
    taken: BTreeSet<String>,
    /// uids of pods waiting for room (the scheduler gives up on one that is gone).
    waiting: BTreeSet<String>,
}

/// What [`Room::try_take`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    /// The pod has its room.
    Yes,
    /// No room; the pod waits (the first time: `nodes` is how many there are, for the message).
    No {
        /// The cluster's nodes now.
        nodes: u32,
    },
    /// The pod went while it waited: stop scheduling it.
    Gone,
}

impl Room {
    /// Room as `capacity` says.
    pub(crate) fn new(capacity: &NodeCapacity) -> Self {
        let state = RoomState { capacity: capacity.pods, nodes: 1, ..RoomState::default() };
        Room { namespace: capacity.namespace.clone(), state: Mutex::new(state), changed: Notify::new() }
    }

    /// Whether a pod of `namespace` needs room here (others run on nodes with room always).
    pub(crate) fn counts(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// A pod the scheduler is about to place.
    pub(crate) fn wait_for(&self, uid: &str) {
        self.state.lock().expect("room").waiting.insert(uid.to_string());
    }

    /// Takes room for `uid` if there is some.
    pub(crate) fn try_take(&self, uid: &str) -> Taken {
        let mut state = self.state.lock().expect("room");
        if !state.waiting.contains(uid) {
            return Taken::Gone;
        }
        if (state.taken.len() as u32) < state.capacity {
            state.waiting.remove(uid);
            state.taken.insert(uid.to_string());
            return Taken::Yes;
        }
        Taken::No { nodes: state.nodes }
    }

    /// Whether a node should be asked for now (none is on its way and `scale_up` allows another);
    /// marks one as on its way.
    pub(crate) fn ask_for_node(&self, scale_up: &ScaleUp) -> bool {
        let mut state = self.state.lock().expect("room");
        let ask = !state.joining && state.joined < scale_up.max_nodes;
        state.joining |= ask;
        ask
    }

    /// A node joined with room for `pods`; returns the cluster's nodes now.
    pub(crate) fn node_joined(&self, pods: u32) -> u32 {
        let mut state = self.state.lock().expect("room");
        state.capacity += pods;
        state.nodes += 1;
        state.joined += 1;
        state.joining = false;
        let nodes = state.nodes;
        drop(state);
        self.changed.notify_waiters();
        nodes
    }

    /// The pod `uid` ended or went: its room frees, and if it was waiting it waits no more.
    pub(crate) fn release(&self, uid: &str) {
        let mut state = self.state.lock().expect("room");
        let freed = state.taken.remove(uid) | state.waiting.remove(uid);
        drop(state);
        if freed {
            self.changed.notify_waiters();
        }
    }

    /// Resolves at the next change of room (call it before [`Room::try_take`], so none is missed).
    pub(crate) fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changed.notified()
    }

    /// Pods waiting now.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.state.lock().expect("room").waiting.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_pods() -> Room {
        Room::new(&NodeCapacity { namespace: None, pods: 2, scale_up: None })
    }

    #[test]
    fn the_third_pod_waits_until_one_ends() {
        let room = two_pods();
        for uid in ["a", "b", "c"] {
            room.wait_for(uid);
        }
        assert_eq!(room.try_take("a"), Taken::Yes);
        assert_eq!(room.try_take("b"), Taken::Yes);
        assert_eq!(room.try_take("c"), Taken::No { nodes: 1 });
        room.release("a");
        assert_eq!(room.try_take("c"), Taken::Yes);
        assert_eq!(room.waiting(), 0);
    }

    #[test]
    fn a_waiting_pod_that_goes_stops_waiting() {
        let room = Room::new(&NodeCapacity { namespace: None, pods: 0, scale_up: None });
        room.wait_for("a");
        assert_eq!(room.try_take("a"), Taken::No { nodes: 1 });
        room.release("a");
        assert_eq!(room.try_take("a"), Taken::Gone);
    }

    #[test]
    fn one_node_is_asked_for_at_a_time_up_to_the_most() {
        let room = Room::new(&NodeCapacity { namespace: None, pods: 0, scale_up: None });
        let scale_up = ScaleUp { delay: LagRange::fixed(60_000), pods: 1, max_nodes: 1 };
        assert!(room.ask_for_node(&scale_up));
        assert!(!room.ask_for_node(&scale_up), "one is on its way");
        room.wait_for("a");
        assert_eq!(room.node_joined(1), 2);
        assert_eq!(room.try_take("a"), Taken::Yes);
        assert!(!room.ask_for_node(&scale_up), "no more than max_nodes");
        room.wait_for("b");
        assert_eq!(room.try_take("b"), Taken::No { nodes: 2 });
    }
}
