//! Node loss (issue 42, item 4): the pool's first node stops answering; its pods' Ready turns False
//! after the grace, the taint eviction deletes them and they stay Terminating while their processes
//! run on; the node that comes back catches up, the machine that died takes its processes with it
//! and pod GC removes its pods, and an operator's force delete leaves a runner online at GitHub with
//! no pod.

use std::time::Duration;

use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{KubeletConfig, KubeletEventKind, LossOutcome, NodeLoss, StopCause};
use kube::api::{DeleteParams, PostParams};
use serde_json::{Value, json};

use crate::kubelet::support::{Node, Setup, condition, jit_pod, node_with, pod};

/// The loss comes 30 s in; grace 40 s, toleration 300 s (so eviction at 370 s).
fn lossy_node(outcome: LossOutcome) -> Node {
    lossy_node_under(outcome, arc_sim::faults::FaultPlan::none())
}

/// [`lossy_node`] under the API server faults of `faults`.
fn lossy_node_under(outcome: LossOutcome, faults: arc_sim::faults::FaultPlan) -> Node {
    let loss = NodeLoss {
        namespace: "default".into(),
        nodes: 2,
        lost_after: LagRange::fixed(30_000),
        monitor_grace_ms: 40_000,
        toleration_seconds: 300,
        outcome,
    };
    let kubelet = KubeletConfig { node_loss: Some(loss), ..KubeletConfig::default() };
    node_with(Setup { kubelet, faults, ..Setup::default() })
}

async fn sleep_to(n: &Node, ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms.saturating_sub(n.now_ms()))).await;
}

fn object(n: &Node, name: &str) -> Option<Value> {
    n.apiserver.object("pods", "default", name)
}

fn node_of(n: &Node, name: &str) -> Option<String> {
    object(n, name)?.pointer("/spec/nodeName")?.as_str().map(str::to_string)
}

fn ready(n: &Node, name: &str) -> Option<String> {
    let pod = object(n, name)?;
    condition(&pod, "Ready")?["status"].as_str().map(str::to_string)
}

/// Creates idle pods p0.. until both nodes of the pool run some; the names on the lost node first.
async fn spread(n: &Node) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    for i in 0..8 {
        let name = format!("p{i}");
        n.pods.create(&PostParams::default(), &pod(&name, "Never", json!([]))).await.unwrap();
        names.push(name);
    }
    sleep_to(n, 10_000).await;
    let (lost, kept): (Vec<String>, Vec<String>) =
        names.into_iter().partition(|p| node_of(n, p).as_deref() == Some("arcsim-node-2"));
    assert!(!lost.is_empty() && !kept.is_empty(), "lost {lost:?}, kept {kept:?}");
    assert!(kept.iter().all(|p| node_of(n, p).as_deref() == Some("arcsim-node-3")));
    (lost, kept)
}

#[tokio::test(start_paused = true)]
async fn a_lost_nodes_pods_turn_unready_then_stay_terminating_until_it_comes_back() {
    let n = lossy_node(LossOutcome::Returns { after: LagRange::fixed(500_000) });
    let (lost, kept) = spread(&n).await;
    sleep_to(&n, 69_000).await;
    assert_eq!(ready(&n, &lost[0]).as_deref(), Some("True"), "not before the grace");
    sleep_to(&n, 71_000).await;
    assert_eq!(ready(&n, &lost[0]).as_deref(), Some("False"));
    assert_eq!(ready(&n, &kept[0]).as_deref(), Some("True"));
    sleep_to(&n, 80_000).await;
    for i in 8..12 {
        let name = format!("p{i}");
        n.pods.create(&PostParams::default(), &pod(&name, "Never", json!([]))).await.unwrap();
    }
    sleep_to(&n, 90_000).await;
    for i in 8..12 {
        assert_eq!(
            node_of(&n, &format!("p{i}")).as_deref(),
            Some("arcsim-node-3"),
            "the tainted node is left"
        );
    }
    sleep_to(&n, 380_000).await;
    let evicted = object(&n, &lost[0]).expect("Terminating, not gone");
    assert!(evicted.pointer("/metadata/deletionTimestamp").is_some());
    assert_eq!(condition(&evicted, "DisruptionTarget").unwrap()["reason"], "DeletionByTaintManager");
    assert!(n.events_of(&lost[0]).iter().all(|e| !matches!(e, KubeletEventKind::Sigterm { .. })));
    assert!(object(&n, &kept[0]).unwrap().pointer("/metadata/deletionTimestamp").is_none());
    sleep_to(&n, 540_000).await;
    assert!(object(&n, &lost[0]).is_none(), "the kubelet came back at 530 s and finished the termination");
    let events = n.events_of(&lost[0]);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, KubeletEventKind::ContainerStopped { cause: StopCause::PodDeleted, .. }))
    );
}

#[tokio::test(start_paused = true)]
async fn a_node_back_before_the_eviction_reports_its_pods_ready_again() {
    let n = lossy_node(LossOutcome::Returns { after: LagRange::fixed(100_000) });
    let (lost, _) = spread(&n).await;
    sleep_to(&n, 80_000).await;
    assert_eq!(ready(&n, &lost[0]).as_deref(), Some("False"));
    sleep_to(&n, 135_000).await;
    assert_eq!(ready(&n, &lost[0]).as_deref(), Some("True"), "its status manager wrote the status again");
    sleep_to(&n, 400_000).await;
    assert!(object(&n, &lost[0]).unwrap().pointer("/metadata/deletionTimestamp").is_none(), "never evicted");
}

#[tokio::test(start_paused = true)]
async fn a_deletion_while_the_node_is_lost_is_heard_when_it_comes_back() {
    let n = lossy_node(LossOutcome::Returns { after: LagRange::fixed(60_000) });
    let (lost, _) = spread(&n).await;
    sleep_to(&n, 40_000).await;
    n.pods.delete(&lost[0], &DeleteParams::default()).await.unwrap();
    sleep_to(&n, 89_000).await;
    assert!(object(&n, &lost[0]).is_some(), "Terminating while the node is cut off");
    let sigterm = n.first(&lost[0], |e| matches!(e, KubeletEventKind::Sigterm { .. })).unwrap_or(0);
    assert_eq!(sigterm, 0, "no SIGTERM while cut off");
    sleep_to(&n, 100_000).await;
    let sigterm = n.first(&lost[0], |e| matches!(e, KubeletEventKind::Sigterm { .. })).unwrap();
    assert!(sigterm >= 90_000, "SIGTERM once back: {sigterm}");
    assert!(object(&n, &lost[0]).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_machine_that_died_takes_its_processes_and_pod_gc_its_pods() {
    let n = lossy_node(LossOutcome::Died { node_deleted_after: LagRange::fixed(600_000) });
    let (lost, kept) = spread(&n).await;
    sleep_to(&n, 31_000).await;
    let stopped = n.events_of(&lost[0]);
    assert!(
        stopped
            .iter()
            .any(|e| matches!(e, KubeletEventKind::ContainerStopped { cause: StopCause::NodeDied, .. })),
        "{stopped:?}"
    );
    assert_eq!(n.phase(&lost[0]).as_deref(), Some("Running"), "nobody reported it");
    sleep_to(&n, 400_000).await;
    assert!(object(&n, &lost[0]).unwrap().pointer("/metadata/deletionTimestamp").is_some());
    sleep_to(&n, 631_000).await;
    assert!(object(&n, &lost[0]).is_none(), "pod GC deleted it");
    let versions = n.versions(&lost[0]);
    let last = versions.last().unwrap();
    assert_eq!(last.pointer("/status/phase").and_then(Value::as_str), Some("Failed"), "marked Failed first");
    assert_eq!(condition(last, "DisruptionTarget").unwrap()["reason"], "DeletionByPodGC");
    assert!(
        n.first(&lost[0], |e| matches!(e, KubeletEventKind::ForceDeleted { by, .. } if by == "pod-gc"))
            .is_some()
    );
    assert_eq!(n.phase(&kept[0]).as_deref(), Some("Running"));
}

#[tokio::test(start_paused = true)]
async fn a_force_deleted_pods_runner_stays_online_at_github() {
    let n = lossy_node(LossOutcome::ForceDeleted { after: LagRange::fixed(60_000) });
    let set = n.github.create_scale_set("set", 1, &["set"]);
    let mut on_lost = None;
    for i in 0..8 {
        let name = format!("r{i}");
        let id = n.jit_secret(set, &name).await;
        n.pods.create(&PostParams::default(), &jit_pod(&name)).await.unwrap();
        sleep_to(&n, n.now_ms() + 1_000).await;
        if on_lost.is_none() && node_of(&n, &name).as_deref() == Some("arcsim-node-2") {
            on_lost = Some((name, id));
        }
    }
    let (name, id) = on_lost.expect("a runner on the node that is lost");
    sleep_to(&n, 431_000).await;
    assert!(object(&n, &name).is_none(), "force-deleted at 430 s");
    assert!(
        n.first(&name, |e| matches!(e, KubeletEventKind::ForceDeleted { by, .. } if by == "operator"))
            .is_some()
    );
    let events = n.events_of(&name);
    assert!(events.iter().all(|e| !matches!(e, KubeletEventKind::ContainerStopped { .. })), "{events:?}");
    let runner = n.github.runner(id).expect("still registered");
    assert_eq!(format!("{:?}", runner.state), "Idle", "online with no pod");
}

/// An operator's force delete whose answer was lost (a commit-then-drop on the first delete): the retry
/// meets 404, and the pod counts as force-deleted all the same (steady-state seed 27,500,454, where the
/// retry met 409 from a new pod of the name and the deleted pod's process was taken for a live pod's).
#[tokio::test(start_paused = true)]
async fn a_force_delete_whose_answer_was_lost_still_counts() {
    use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb, FaultPlan, Window};

    let lost_answer = ApiFault {
        verbs: vec![ApiVerb::Delete],
        resources: vec!["pods".into()],
        probability: 1.0,
        window: Some(Window { start_ms: 429_000, end_ms: 430_500 }),
        action: ApiFaultAction::CommitThenDrop,
    };
    let faults = FaultPlan { api: vec![lost_answer], ..FaultPlan::none() };
    let n = lossy_node_under(LossOutcome::ForceDeleted { after: LagRange::fixed(60_000) }, faults);
    let (lost, _) = spread(&n).await;
    sleep_to(&n, 440_000).await;
    for name in &lost {
        assert!(object(&n, name).is_none(), "{name} force-deleted");
        assert!(
            n.first(name, |e| matches!(e, KubeletEventKind::ForceDeleted { .. })).is_some(),
            "{name}: {:?}",
            n.events_of(name)
        );
    }
}
