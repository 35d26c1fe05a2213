//! The scheduler of the one-node cluster: every pod the kubelet's watch shows unscheduled is bound to
//! the node after a seeded delay. The fake API server has no `pods/binding` subresource, so the
//! scheduler writes a binding's two halves itself, PodScheduled (status) and then `spec.nodeName`; the
//! kubelet starts a pod only once it sees it bound, by then with PodScheduled.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::Shared;
use super::events::KubeletEventKind;
use super::status::scheduled_condition;
use super::writes::PodWrites;

/// Binds the pod of `metadata` (as seen unscheduled) to the node.
pub(crate) async fn schedule(kubelet: Arc<Shared>, metadata: ObjectMeta, mut rng: ChaCha8Rng) {
    let (namespace, name) = (metadata.namespace.unwrap_or_default(), metadata.name.unwrap_or_default());
    let uid = metadata.uid.unwrap_or_default();
    tokio::time::sleep(super::draw(&mut rng, kubelet.config.scheduling_delay)).await;
    let writes = PodWrites::new(kubelet.client.clone(), &namespace, &name, &uid);
    let now = kubelet.now();
    if !writes.status(json!({"conditions": [scheduled_condition(&now)]})).await {
        return;
    }
    if writes.bind(&kubelet.config.node_name).await {
        kubelet.record(&namespace, &name, &uid, KubeletEventKind::Scheduled);
    }
}
