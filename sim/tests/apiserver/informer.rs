//! The controller's informer (kube's own watcher underneath) against the fake: initial list, live
//! updates, a forced 410 and the relist it causes, and the cache staying exact throughout.

use std::time::Duration;

use arc_controller::runtime::informer::{Informer, InformerEvent};
use arc_controller::runtime::object_key::ObjectKey;
use arc_sim::Seed;
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb, FaultPlan, Window};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::json;

use crate::support::*;

fn describe(event: &InformerEvent<Pod>) -> String {
    let name = |p: &Pod| p.metadata.name.clone().unwrap();
    match event {
        InformerEvent::Added(p) => format!("added {}", name(p)),
        InformerEvent::Updated { new, .. } => format!("updated {}", name(new)),
        InformerEvent::Deleted(p) => format!("deleted {}", name(p)),
    }
}

#[tokio::test(start_paused = true)]
async fn the_informer_follows_the_fake_through_a_forced_relist() {
    let expire_once = FaultPlan {
        api: vec![ApiFault {
            verbs: vec![ApiVerb::Watch],
            resources: vec!["pods".into()],
            probability: 1.0,
            window: Some(Window { start_ms: 4_000, end_ms: 4_100 }),
            action: ApiFaultAction::ExpireWatch,
        }],
        github: vec![],
    };
    let config = arc_sim::apiserver::ApiServerConfig { history_capacity: 3, ..Default::default() };
    let w = world_with(Seed(5), config, expire_once);
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let informer = Informer::new(w.pods(), watcher::Config::default().timeout(4));
    let store = informer.store();
    let mut events = informer.subscribe();
    let handle = informer.clone();
    tokio::spawn(informer.run());
    handle.wait_for_sync().await;
    assert_eq!(describe(&events.recv().await.unwrap()), "added a");

    w.pods()
        .patch("a", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}})))
        .await
        .unwrap();
    assert_eq!(describe(&events.recv().await.unwrap()), "updated a");

    tokio::time::sleep(Duration::from_secs(5)).await;
    for name in ["b", "c", "d", "e"] {
        w.pods().create(&PostParams::default(), &pod(name)).await.unwrap();
    }
    w.pods().delete("a", &DeleteParams::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(30)).await;

    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(describe(&event));
    }
    assert!(seen.contains(&"deleted a".to_string()), "{seen:?}");
    let cached: Vec<String> = store.list().iter().map(|p| p.metadata.name.clone().unwrap()).collect();
    assert_eq!(cached, ["b", "c", "d", "e"]);
    assert!(store.get(&ObjectKey::new("default", "a")).is_none());
    let lines = w.record.trace().lines();
    assert!(lines.iter().any(|l| l.contains("ERROR 410")), "the fault forced a 410");
    assert!(
        lines.iter().filter(|l| l.contains("apiserver list pods")).count() >= 2,
        "the 410 forced a relist"
    );
}
