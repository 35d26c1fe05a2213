//! Node loss (issue 42, item 4; docs/windows.md): a node the runners' pods run on stops answering the
//! control plane. Off unless a world asks for it ([`super::KubeletConfig::node_loss`]). The pods of one
//! namespace spread over a pool of nodes (`arcsim-node-2` …); the first of them is lost once, at a
//! drawn time. From then its kubelet neither hears of its pods (deletions included) nor writes their
//! status, while their processes run on: a runner stays connected to GitHub and may take and finish
//! a job. The control plane's answer ([`super::node_lifecycle`]) is kube-controller-manager's: after
//! the node monitor's grace its pods' Ready turns False and the node is tainted (the scheduler leaves
//! it), after the pods' default `tolerationSeconds` the taint eviction deletes them gracefully, and
//! they stay Terminating, for no kubelet confirms. How it ends is drawn ([`LossOutcome`]): the node
//! comes back and its kubelet catches up; the machine died with its processes and its Node object is
//! deleted, so pod GC force-deletes its pods; or it stays cut off and an operator force-deletes the
//! Terminating pods while their processes live on.
//!
//! Simplified: there are no Node objects (the node's state lives in the model; only pods show it);
//! one kubelet model serves every node; a lost node's places stay in the room of
//! [`super::capacity`], which counts a pool.

use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::apiserver::LagRange;

/// kube-controller-manager's `--node-monitor-grace-period` (40 s until 1.32, 50 s since).
pub const MONITOR_GRACE_MS: u64 = 40_000;
/// The `tolerationSeconds` the DefaultTolerationSeconds admission plugin gives every pod for the
/// `not-ready` and `unreachable` NoExecute taints.
pub const TOLERATION_SECONDS: u64 = 300;

/// Which node is lost, when, and how it ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeLoss {
    /// The namespace whose pods run on the pool (the runners'); other pods stay on the kubelet's
    /// own node, which is never lost.
    pub namespace: String,
    /// How many nodes the pool has (at least 2: a pool of one would leave no node to run on).
    pub nodes: u32,
    /// When the pool's first node is lost, from the kubelet's start.
    pub lost_after: LagRange,
    /// From the loss to the pods' Ready False and the taints.
    #[serde(default = "monitor_grace")]
    pub monitor_grace_ms: u64,
    /// From the taints to the taint eviction's deletes.
    #[serde(default = "toleration")]
    pub toleration_seconds: u64,
    /// How it ends.
    pub outcome: LossOutcome,
}

fn monitor_grace() -> u64 {
    MONITOR_GRACE_MS
}

fn toleration() -> u64 {
    TOLERATION_SECONDS
}

/// How a lost node's story ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", deny_unknown_fields)]
pub enum LossOutcome {
    /// The network comes back `after` the loss: the kubelet hears what it missed (a deletion: SIGTERM
    /// then, however long ago it was asked) and writes its pods' status as they stand.
    Returns {
        /// From the loss to the return.
        after: LagRange,
    },
    /// The machine died at the loss, and every process on it; its Node object is deleted `after` the
    /// loss (a cloud's node controller, or an operator), and pod GC marks each of its pods Failed and
    /// deletes it with grace 0.
    Died {
        /// From the loss to the Node object's deletion.
        node_deleted_after: LagRange,
    },
    /// The node stays cut off and its processes run on; an operator force-deletes (grace 0) its
    /// Terminating pods `after` the taint eviction.
    ForceDeleted {
        /// From the taint eviction to the force deletes.
        after: LagRange,
    },
}

/// When a world's loss happens and ends, drawn once from the node loss's own stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LossPlan {
    /// From the kubelet's start to the loss.
    pub lost_at: Duration,
    /// From the loss to Ready False and the taints.
    pub marked_after: Duration,
    /// From the loss to the taint eviction.
    pub evicted_after: Duration,
    /// How it ends, with times from the loss.
    pub end: PlannedEnd,
}

/// The drawn end of a loss, from the loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannedEnd {
    /// The node comes back.
    Returns(Duration),
    /// The processes died at the loss; pod GC deletes the pods.
    Died(Duration),
    /// An operator force-deletes the Terminating pods; the processes run on.
    ForceDeleted(Duration),
}

impl NodeLoss {
    /// The pool's node names, the lost one first.
    pub fn pool(&self) -> Vec<String> {
        (0..self.nodes.max(2)).map(|i| format!("arcsim-node-{}", i + 2)).collect()
    }

    /// The node that is lost.
    pub fn lost_node(&self) -> String {
        "arcsim-node-2".to_string()
    }

    /// Draws the times of the loss from `rng`.
    pub fn plan(&self, rng: &mut ChaCha8Rng) -> LossPlan {
        let lost_at = super::draw(rng, self.lost_after);
        let marked_after = Duration::from_millis(self.monitor_grace_ms);
        let evicted_after = marked_after + Duration::from_secs(self.toleration_seconds);
        let end = match self.outcome {
            LossOutcome::Returns { after } => PlannedEnd::Returns(super::draw(rng, after)),
            LossOutcome::Died { node_deleted_after } => {
                PlannedEnd::Died(super::draw(rng, node_deleted_after))
            }
            LossOutcome::ForceDeleted { after } => {
                PlannedEnd::ForceDeleted(evicted_after + super::draw(rng, after))
            }
        };
        LossPlan { lost_at, marked_after, evicted_after, end }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn loss(outcome: LossOutcome) -> NodeLoss {
        NodeLoss {
            namespace: "runners".into(),
            nodes: 3,
            lost_after: LagRange::between(60_000, 120_000),
            monitor_grace_ms: MONITOR_GRACE_MS,
            toleration_seconds: TOLERATION_SECONDS,
            outcome,
        }
    }

    #[test]
    fn the_pool_is_named_after_the_kubelets_own_node_and_loses_its_first() {
        let loss = loss(LossOutcome::Returns { after: LagRange::fixed(1) });
        assert_eq!(loss.pool(), ["arcsim-node-2", "arcsim-node-3", "arcsim-node-4"]);
        assert_eq!(loss.lost_node(), loss.pool()[0]);
    }

    #[test]
    fn a_force_delete_comes_after_the_taint_eviction() {
        let loss = loss(LossOutcome::ForceDeleted { after: LagRange::fixed(5_000) });
        let plan = loss.plan(&mut ChaCha8Rng::seed_from_u64(1));
        assert!((60_000..=120_000).contains(&(plan.lost_at.as_millis() as u64)));
        assert_eq!(plan.marked_after, Duration::from_secs(40));
        assert_eq!(plan.evicted_after, Duration::from_secs(340));
        assert_eq!(plan.end, PlannedEnd::ForceDeleted(Duration::from_secs(345)));
    }

    #[test]
    fn a_config_reads_from_json_with_the_control_planes_defaults() {
        let json = r#"{"namespace":"r","nodes":2,"lost_after":{"min_ms":1,"max_ms":2},
            "outcome":{"kind":"died","node_deleted_after":{"min_ms":3,"max_ms":4}}}"#;
        let loss: NodeLoss = serde_json::from_str(json).unwrap();
        assert_eq!((loss.monitor_grace_ms, loss.toleration_seconds), (40_000, 300));
        assert!(matches!(loss.outcome, LossOutcome::Died { .. }));
    }
}
