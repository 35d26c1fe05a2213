//! The link between the node that can be lost ([`super::node_loss`]) and the control plane, as the
//! model's parts see it: whether it is cut (the kubelet then holds what its watch would have told it,
//! and its status writes wait, [`super::writes`]), and whether the node is tainted (the scheduler then
//! leaves it). One per world with a node loss.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

use super::informer::PodChange;

/// The lost node's link.
pub(crate) struct NodeLink {
    node: String,
    lost: watch::Sender<bool>,
    tainted: AtomicBool,
    /// What the node's kubelet has not heard while cut off, in order.
    unheard: Mutex<Vec<PodChange>>,
}

impl NodeLink {
    /// The link of `node`, up.
    pub(crate) fn new(node: String) -> Self {
        NodeLink {
            node,
            lost: watch::Sender::new(false),
            tainted: AtomicBool::new(false),
            unheard: Mutex::default(),
        }
    }

    /// The node's name.
    pub(crate) fn node(&self) -> &str {
        &self.node
    }

    /// Whether the link is cut now.
    pub(crate) fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// Cuts the link.
    pub(crate) fn lose(&self) {
        self.lost.send_replace(true);
    }

    /// Whether the node carries the node lifecycle's taints (the scheduler leaves it).
    pub(crate) fn is_tainted(&self) -> bool {
        self.tainted.load(Ordering::Relaxed)
    }

    /// Taints the node.
    pub(crate) fn taint(&self) {
        self.tainted.store(true, Ordering::Relaxed);
    }

    /// Holds `change` unheard if the link is cut and it concerns the node's pod; true when held.
    pub(crate) fn hold(&self, node: Option<&str>, change: &PodChange) -> bool {
        if node != Some(self.node.as_str()) || !self.is_lost() {
            return false;
        }
        self.unheard.lock().expect("unheard changes").push(change.clone());
        true
    }

    /// The link is back: the taints go, and the kubelet hears what it missed (returned, in order).
    pub(crate) fn come_back(&self) -> Vec<PodChange> {
        self.tainted.store(false, Ordering::Relaxed);
        self.lost.send_replace(false);
        std::mem::take(&mut *self.unheard.lock().expect("unheard changes"))
    }

    /// Resolves once the link is cut (at once if it is).
    pub(crate) async fn cut(&self) {
        let _ = self.lost.subscribe().wait_for(|lost| *lost).await;
    }

    /// Resolves once the link is up (at once if it is).
    pub(crate) async fn up(&self) {
        let _ = self.lost.subscribe().wait_for(|lost| !*lost).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubelet::watched::WatchedPod;
    use std::sync::Arc;

    fn change() -> PodChange {
        let json = r#"{"metadata":{"name":"p","namespace":"n","uid":"u"},"spec":{"nodeName":"a"}}"#;
        PodChange::Seen(Arc::new(serde_json::from_str::<WatchedPod>(json).unwrap()))
    }

    #[test]
    fn only_the_nodes_changes_are_held_and_only_while_it_is_cut() {
        let link = NodeLink::new("a".into());
        assert!(!link.hold(Some("a"), &change()), "up: heard at once");
        link.lose();
        link.taint();
        assert!(!link.hold(Some("b"), &change()), "another node's pod");
        assert!(!link.hold(None, &change()), "an unscheduled pod");
        assert!(link.hold(Some("a"), &change()));
        assert_eq!(link.come_back().len(), 1);
        assert!(!link.is_lost() && !link.is_tainted());
        assert!(link.come_back().is_empty());
    }
}
