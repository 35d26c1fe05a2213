//! The scheduler of the one-node cluster: every pod the kubelet's watch shows unscheduled is bound to
//! the node after a seeded delay, once the node has room for it (when the world counts room,
//! [`super::capacity`]: until then it is Pending, PodScheduled False `Unschedulable`, and may ask for a
//! node to join). The fake API server has no `pods/binding` subresource, so the scheduler writes a
//! binding's two halves itself, PodScheduled (status) and then `spec.nodeName`; the kubelet starts a
//! pod only once it sees it bound, by then with PodScheduled.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::Shared;
use super::capacity::{Room, Taken, unschedulable_message};
use super::events::KubeletEventKind;
use super::status::{scheduled_condition, unschedulable_condition};
use super::writes::PodWrites;

/// Binds the pod of `metadata` (as seen unscheduled) to the node.
pub(crate) async fn schedule(kubelet: Arc<Shared>, metadata: ObjectMeta, mut rng: ChaCha8Rng) {
    let (namespace, name) = (metadata.namespace.unwrap_or_default(), metadata.name.unwrap_or_default());
    let uid = metadata.uid.unwrap_or_default();
    tokio::time::sleep(super::draw(&mut rng, kubelet.config.scheduling_delay)).await;
    let writes = PodWrites::new(kubelet.client.clone(), &namespace, &name, &uid);
    if let Some(room) = kubelet.room_for(&namespace).cloned() {
        let pod =
            Waiting { kubelet: &kubelet, writes: &writes, namespace: &namespace, name: &name, uid: &uid };
        if !pod.place(&room, &mut rng).await {
            return;
        }
    }
    let now = kubelet.now();
    if !writes.status(json!({"conditions": [scheduled_condition(&now)]})).await {
        return;
    }
    if writes.bind(&kubelet.node_for(&namespace, &mut rng)).await {
        kubelet.record(&namespace, &name, &uid, KubeletEventKind::Scheduled);
    }
}

/// A pod waiting for room.
struct Waiting<'a> {
    kubelet: &'a Arc<Shared>,
    writes: &'a PodWrites,
    namespace: &'a str,
    name: &'a str,
    uid: &'a str,
}

impl Waiting<'_> {
    /// Waits until `room` has room for the pod; false when the pod went meanwhile. The first time it
    /// finds none, the pod is reported Unschedulable; while it waits, a node is asked for whenever
    /// the world's scale-up allows one (its delay drawn from `rng`).
    async fn place(&self, room: &Arc<Room>, rng: &mut ChaCha8Rng) -> bool {
        let mut reported = false;
        loop {
            let changed = room.changed();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let nodes = match room.try_take(self.uid) {
                Taken::Yes => return true,
                Taken::Gone => return false,
                Taken::No { nodes } => nodes,
            };
            if !reported {
                reported = true;
                self.report_unschedulable(nodes).await;
            }
            self.ask_for_node(room, rng);
            changed.await;
        }
    }

    async fn report_unschedulable(&self, nodes: u32) {
        let message = unschedulable_message(nodes);
        let condition = unschedulable_condition(&self.kubelet.now(), &message);
        self.kubelet.record(self.namespace, self.name, self.uid, KubeletEventKind::Unschedulable { message });
        self.writes.status(json!({"conditions": [condition]})).await;
    }

    fn ask_for_node(&self, room: &Arc<Room>, rng: &mut ChaCha8Rng) {
        let Some(scale_up) = self.kubelet.config.node_capacity.as_ref().and_then(|c| c.scale_up.clone())
        else {
            return;
        };
        if !room.ask_for_node(&scale_up) {
            return;
        }
        let delay = super::draw(rng, scale_up.delay);
        let (kubelet, room) = (self.kubelet.clone(), room.clone());
        let (namespace, name, uid) =
            (self.namespace.to_string(), self.name.to_string(), self.uid.to_string());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let nodes = room.node_joined(scale_up.pods);
            kubelet.record(&namespace, &name, &uid, KubeletEventKind::NodeJoined { nodes });
        });
    }
}
