//! The kubelet's own watch: its lag is its own (not the API server's per-resource lag), a watch that
//! ends is resumed, and a 410 Gone leads to a relist that finds what changed meanwhile.

use std::time::Duration;

use arc_sim::apiserver::{LagRange, WatchOpened};
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb, FaultPlan, Window};
use arc_sim::kubelet::{KubeletConfig, KubeletEventKind, StopCause};
use kube::api::{DeleteParams, PostParams};
use serde_json::json;

use crate::kubelet::support::{Setup, node_with, pod};

fn expire_watches(start_ms: u64, end_ms: u64) -> FaultPlan {
    FaultPlan {
        api: vec![ApiFault {
            verbs: vec![ApiVerb::Watch],
            resources: vec!["pods".into()],
            probability: 1.0,
            window: Some(Window { start_ms, end_ms }),
            action: ApiFaultAction::ExpireWatch,
        }],
        github: vec![],
        network: Vec::new(),
        perturbations: Vec::new(),
    }
}

#[tokio::test(start_paused = true)]
async fn the_kubelet_sees_a_new_pod_only_after_its_own_watch_lag() {
    let kubelet = KubeletConfig { pod_watch_lag: LagRange::fixed(1_500), ..KubeletConfig::default() };
    let n = node_with(Setup { kubelet, ..Setup::default() });
    tokio::time::sleep(Duration::from_secs(1)).await; // the kubelet has listed and is watching
    let created_at = n.now_ms();
    n.pods.create(&PostParams::default(), &pod("p", "Always", json!([]))).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let scheduled = n.first("p", |e| *e == KubeletEventKind::Scheduled).unwrap();
    assert!(scheduled >= created_at + 1_500 + 10, "the scheduler saw it 1.5 s late: {scheduled}");
    let started = n.first("p", |e| matches!(e, KubeletEventKind::ContainerStarted { .. })).unwrap();
    assert!(started >= scheduled + 1_500 + 100 + 500, "the kubelet saw the binding 1.5 s late: {started}");
    let opened: Vec<WatchOpened> = n.record.events_of::<WatchOpened>().into_iter().map(|(_, w)| w).collect();
    assert!(opened.iter().any(|w| w.actor.as_deref() == Some("kubelet") && w.resource == "pods"));
}

#[tokio::test(start_paused = true)]
async fn the_kubelet_relists_after_410_and_still_runs_pods() {
    let n = node_with(Setup { faults: expire_watches(0, 3_000), ..Setup::default() });
    n.pods.create(&PostParams::default(), &pod("p", "Always", json!([]))).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(n.phase("p").as_deref(), Some("Running"));
    let lists = n
        .apiserver
        .request_counts()
        .iter()
        .filter(|((verb, resource, code), _)| *verb == ApiVerb::List && resource == "pods" && *code == 200)
        .map(|(_, count)| *count)
        .sum::<u64>();
    assert!(lists > 1, "relisted: {lists} lists");
}

#[tokio::test(start_paused = true)]
async fn a_pod_force_deleted_while_every_watch_is_refused_is_found_gone_by_a_relist() {
    let n = node_with(Setup { faults: expire_watches(0, 20_000), ..Setup::default() });
    n.pods.create(&PostParams::default(), &pod("p", "Always", json!([]))).await.unwrap();
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert_eq!(n.phase("p").as_deref(), Some("Running"));
    n.pods.delete("p", &DeleteParams::default().grace_period(0)).await.unwrap();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let stopped =
        n.events_of("p").into_iter().find(|e| matches!(e, KubeletEventKind::ContainerStopped { .. }));
    assert!(
        matches!(
            stopped,
            Some(KubeletEventKind::ContainerStopped { cause: StopCause::PodRemoved, exit_code: 143, .. })
        ),
        "{stopped:?}"
    );
}
