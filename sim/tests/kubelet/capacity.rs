//! Node capacity (issue 42, item 3): a pod no node has room for stays Pending with PodScheduled False
//! `Unschedulable` until a pod ends or goes, or until a node joins; a waiting pod that is deleted is
//! never bound.

use std::time::Duration;

use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{KubeletConfig, KubeletEventKind, NodeCapacity, ScaleUp};
use kube::api::{DeleteParams, PostParams};
use serde_json::{Value, json};

use crate::kubelet::support::{Node, Setup, node_with, pod};

fn node_for(capacity: NodeCapacity) -> Node {
    let kubelet = KubeletConfig {
        pod_watch_lag: LagRange::fixed(100),
        scheduling_delay: LagRange::fixed(100),
        node_capacity: Some(capacity),
        ..KubeletConfig::default()
    };
    node_with(Setup { kubelet, ..Setup::default() })
}

async fn create_idle(n: &Node, name: &str) {
    n.pods.create(&PostParams::default(), &pod(name, "Always", json!([]))).await.unwrap();
}

fn scheduled_condition(n: &Node, name: &str) -> Option<Value> {
    let pod = n.apiserver.object("pods", "default", name)?;
    let conditions = pod.pointer("/status/conditions")?.as_array()?.clone();
    conditions.into_iter().find(|c| c["type"] == "PodScheduled")
}

fn bound(n: &Node, name: &str) -> bool {
    n.apiserver.object("pods", "default", name).is_some_and(|p| p.pointer("/spec/nodeName").is_some())
}

async fn sleep_s(s: u64) {
    tokio::time::sleep(Duration::from_secs(s)).await;
}

#[tokio::test(start_paused = true)]
async fn a_pod_with_no_room_is_unschedulable_until_one_goes() {
    let n = node_for(NodeCapacity { namespace: None, pods: 1, scale_up: None });
    create_idle(&n, "a").await;
    sleep_s(5).await;
    create_idle(&n, "b").await;
    sleep_s(5).await;
    assert!(bound(&n, "a") && !bound(&n, "b"));
    let condition = scheduled_condition(&n, "b").unwrap();
    assert_eq!(
        (condition["status"].as_str(), condition["reason"].as_str()),
        (Some("False"), Some("Unschedulable"))
    );
    assert_eq!(condition["message"], "0/1 nodes are available: 1 Too many pods.");
    assert_eq!(n.phase("b").as_deref(), Some("Pending"));
    n.pods.delete("a", &DeleteParams::default()).await.unwrap();
    sleep_s(40).await;
    assert!(bound(&n, "b"), "room freed when a went");
    assert_eq!(scheduled_condition(&n, "b").unwrap()["status"], "True");
    assert_eq!(n.phase("b").as_deref(), Some("Running"));
}

#[tokio::test(start_paused = true)]
async fn a_node_joins_after_its_delay_and_no_more_than_allowed() {
    let scale_up = ScaleUp { delay: LagRange::fixed(60_000), pods: 1, max_nodes: 1 };
    let n = node_for(NodeCapacity { namespace: None, pods: 1, scale_up: Some(scale_up) });
    for name in ["a", "b", "c"] {
        create_idle(&n, name).await;
    }
    sleep_s(5).await;
    let unschedulable = n.first("b", |e| matches!(e, KubeletEventKind::Unschedulable { .. })).unwrap();
    sleep_s(50).await;
    assert!(!bound(&n, "b") && !bound(&n, "c"));
    sleep_s(10).await;
    let joined: Vec<u64> = ["b", "c"]
        .iter()
        .filter_map(|p| n.first(p, |e| matches!(e, KubeletEventKind::NodeJoined { nodes: 2 })))
        .collect();
    assert_eq!(joined.len(), 1, "one node, asked for by the first pod that waited");
    let due = unschedulable + 60_000; // asked for once its Unschedulable status is written
    assert!((due..due + 100).contains(&joined[0]), "joined at {} ms, due {due} ms", joined[0]);
    assert_eq!(["b", "c"].iter().filter(|p| bound(&n, p)).count(), 1, "room for one more");
    sleep_s(600).await;
    assert_eq!(["b", "c"].iter().filter(|p| bound(&n, p)).count(), 1, "max_nodes reached");
}

#[tokio::test(start_paused = true)]
async fn a_waiting_pod_that_is_deleted_is_never_bound_and_frees_nothing() {
    let n = node_for(NodeCapacity { namespace: None, pods: 1, scale_up: None });
    create_idle(&n, "a").await;
    sleep_s(5).await;
    create_idle(&n, "b").await;
    create_idle(&n, "c").await;
    sleep_s(5).await;
    n.pods.delete("b", &DeleteParams::default()).await.unwrap();
    sleep_s(5).await;
    assert!(n.apiserver.object("pods", "default", "b").is_none(), "an unscheduled pod goes at once");
    assert!(!bound(&n, "c"), "b's going frees no room: it had none");
    n.pods.delete("a", &DeleteParams::default()).await.unwrap();
    sleep_s(40).await;
    assert!(bound(&n, "c"));
}

#[tokio::test(start_paused = true)]
async fn pods_of_another_namespace_run_elsewhere_with_room() {
    let n = node_for(NodeCapacity { namespace: Some("arc-runners".into()), pods: 0, scale_up: None });
    create_idle(&n, "a").await;
    sleep_s(5).await;
    assert!(bound(&n, "a"), "only arc-runners' pods count against the room");
}

#[tokio::test(start_paused = true)]
async fn room_counted_for_one_namespace_holds_its_pods() {
    let n = node_for(NodeCapacity { namespace: Some("default".into()), pods: 1, scale_up: None });
    create_idle(&n, "a").await;
    create_idle(&n, "b").await;
    sleep_s(5).await;
    assert_eq!(["a", "b"].iter().filter(|p| bound(&n, p)).count(), 1);
}
