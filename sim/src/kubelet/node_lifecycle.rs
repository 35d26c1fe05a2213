//! The control plane's answer to a lost node ([`super::node_loss`]), as kube-controller-manager gives
//! it, through an API client of its own (actor `node-lifecycle`):
//!
//! 1. the node monitor's grace after the node's last report, every pod on it that has a Ready
//!    condition gets Ready False (`MarkPodsNotReady`), and the node its `unreachable` taints: the
//!    scheduler leaves it;
//! 2. the pods' `tolerationSeconds` later the taint eviction gives each pod on it the condition
//!    DisruptionTarget (`DeletionByTaintManager`) and deletes it with its own grace period; no kubelet
//!    confirms, so each stays Terminating;
//! 3. the drawn end: the node comes back (its kubelet hears what it missed); or its Node object is
//!    deleted and pod GC marks each pod on it Failed (DisruptionTarget `DeletionByPodGC`) and deletes it
//!    with grace 0; or an operator force-deletes (grace 0) its Terminating pods.
//!
//! A request the server refuses for the moment (5xx, 429, no answer) is tried again a second later,
//! as the controllers' next passes would.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, Preconditions};
use serde_json::json;

use super::Kubelet;
use super::events::KubeletEventKind;
use super::node_loss::{NodeLoss, PlannedEnd};
use super::writes::retrying;

/// The API client actor of the node lifecycle, the taint eviction and pod GC.
pub const ACTOR: &str = "node-lifecycle";

/// Plays the world's node loss: drawn from the kubelet's stream `kubelet/node-loss`.
pub(crate) async fn run(kubelet: Kubelet, loss: NodeLoss, client: kube::Client) {
    let plan = loss.plan(&mut kubelet.shared.seed.named_rng("kubelet/node-loss"));
    tokio::time::sleep(plan.lost_at).await;
    let died = matches!(plan.end, PlannedEnd::Died(_));
    kubelet.lose_node(died);
    let control = ControlPlane { kubelet: &kubelet, pods: Api::all(client), node: loss.lost_node() };
    let answer = async {
        tokio::time::sleep(plan.marked_after).await;
        kubelet.taint_node();
        control.mark_not_ready().await;
        tokio::time::sleep(plan.evicted_after - plan.marked_after).await;
        control.evict().await;
    };
    match plan.end {
        PlannedEnd::Returns(after) => {
            tokio::select! {
                () = answer => tokio::time::sleep(after.saturating_sub(plan.evicted_after)).await,
                () = tokio::time::sleep(after) => {}
            }
            kubelet.node_returned();
        }
        PlannedEnd::Died(after) => {
            let node_deleted = async {
                tokio::time::sleep(after).await;
                kubelet.taint_node();
                control.force_delete("pod-gc").await;
            };
            tokio::join!(answer, node_deleted);
        }
        PlannedEnd::ForceDeleted(after) => {
            answer.await;
            tokio::time::sleep(after - plan.evicted_after).await;
            control.force_delete("operator").await;
        }
    }
}

/// The controllers' requests about the lost node.
struct ControlPlane<'a> {
    kubelet: &'a Kubelet,
    pods: Api<Pod>,
    node: String,
}

impl ControlPlane<'_> {
    /// The pods bound to the node now (none if the list is refused).
    async fn on_node(&self) -> Vec<Pod> {
        let params = ListParams::default().fields(&format!("spec.nodeName={}", self.node));
        retrying(|| self.pods.list(&params)).await.map(|list| list.items).unwrap_or_default()
    }

    fn record(&self, pod: &Pod, kind: KubeletEventKind) {
        let meta = &pod.metadata;
        let (ns, name) = (meta.namespace.as_deref().unwrap_or(""), meta.name.as_deref().unwrap_or(""));
        self.kubelet.shared.record(ns, name, meta.uid.as_deref().unwrap_or(""), kind);
    }

    /// The pods of `pod`'s namespace, and its name.
    fn api_of<'p>(&self, pod: &'p Pod) -> Option<(Api<Pod>, &'p str)> {
        let (ns, name) = (pod.metadata.namespace.as_deref()?, pod.metadata.name.as_deref()?);
        Some((Api::namespaced(self.pods.clone().into_client(), ns), name))
    }

    /// Patches `pods/status` of `pod` with `status` (strategic merge: conditions merge by type).
    async fn patch_status(&self, pod: &Pod, status: serde_json::Value) -> bool {
        let Some((api, name)) = self.api_of(pod) else { return false };
        let patch = json!({"metadata": {"uid": pod.metadata.uid}, "status": status});
        let (params, patch) = (PatchParams::default(), Patch::Strategic(&patch));
        retrying(|| api.patch_status(name, &params, &patch)).await.is_ok()
    }

    /// Deletes `pod` (guarded by its uid) with `grace` seconds, or its own grace period.
    async fn delete(&self, pod: &Pod, grace: Option<u32>) -> bool {
        self.send_delete(pod, grace).await.is_some_and(|answer| answer.is_ok())
    }

    /// A grace-0 delete of `pod`: whether the pod is gone, by this request or by an earlier try of it
    /// whose answer was lost (the retry then meets 404, or 409 when a new pod of the name already holds
    /// it: the uid precondition fails; steady-state seed 27,500,454).
    async fn force_deleted(&self, pod: &Pod) -> bool {
        match self.send_delete(pod, Some(0)).await {
            Some(Ok(())) => true,
            Some(Err(kube::Error::Api(status))) => status.code == 404 || status.code == 409,
            _ => false,
        }
    }

    /// Deletes `pod` (this uid only) with `grace`, retrying transient failures; `None` when the pod
    /// names no namespace.
    async fn send_delete(&self, pod: &Pod, grace: Option<u32>) -> Option<kube::Result<()>> {
        let (api, name) = self.api_of(pod)?;
        let pre = Preconditions { uid: pod.metadata.uid.clone(), resource_version: None };
        let mut params = DeleteParams::default().preconditions(pre);
        params.grace_period_seconds = grace;
        Some(retrying(|| api.delete(name, &params)).await.map(|_| ()))
    }

    fn now(&self) -> String {
        super::timestamp_seconds(self.kubelet.shared.clock.now())
    }

    /// `MarkPodsNotReady`: Ready False on every pod of the node that has a Ready condition.
    async fn mark_not_ready(&self) {
        for pod in self.on_node().await {
            let ready = pod.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten();
            if !ready.clone().any(|c| c.type_ == "Ready" && c.status != "False") {
                continue;
            }
            let condition = json!({"type": "Ready", "status": "False", "lastTransitionTime": self.now()});
            if self.patch_status(&pod, json!({"conditions": [condition]})).await {
                self.record(&pod, KubeletEventKind::MarkedNotReady { node: self.node.clone() });
            }
        }
    }

    /// The taint eviction: DisruptionTarget, then a graceful delete of each pod not yet deleting.
    async fn evict(&self) {
        for pod in self.on_node().await.into_iter().filter(|p| p.metadata.deletion_timestamp.is_none()) {
            let condition = disruption(
                "DeletionByTaintManager",
                "Taint manager: deleting due to NoExecute taint",
                &self.now(),
            );
            self.patch_status(&pod, json!({"conditions": [condition]})).await;
            if self.delete(&pod, None).await {
                self.record(&pod, KubeletEventKind::TaintEvicted { node: self.node.clone() });
            }
        }
    }

    /// Grace-0 deletes of the node's pods: pod GC's (every pod, marked Failed first unless terminal)
    /// or an operator's (the Terminating ones).
    async fn force_delete(&self, by: &str) {
        let gc = by == "pod-gc";
        for pod in self.on_node().await {
            if !gc && pod.metadata.deletion_timestamp.is_none() {
                continue;
            }
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("");
            if gc && !matches!(phase, "Succeeded" | "Failed") {
                let condition = disruption("DeletionByPodGC", "PodGC: node no longer exists", &self.now());
                self.patch_status(&pod, json!({"phase": "Failed", "conditions": [condition]})).await;
            }
            if self.force_deleted(&pod).await {
                self.record(
                    &pod,
                    KubeletEventKind::ForceDeleted { node: self.node.clone(), by: by.to_string() },
                );
            }
        }
    }
}

/// A DisruptionTarget condition with `reason` and `message`.
fn disruption(reason: &str, message: &str, now: &str) -> serde_json::Value {
    json!({"type": "DisruptionTarget", "status": "True", "reason": reason, "message": message,
           "lastTransitionTime": now})
}
