//! The controller's informer (kube's own watcher underneath) against the fake: initial list, live
//! updates, a forced 410 and the relist it causes, and the cache staying exact throughout; which reads
//! the watch cache serves it (with kube's default `watcher::Config`, none: it lists without a
//! resourceVersion); and a write of its own that commits and then fails.

use std::time::Duration;

use arc_controller::runtime::informer::{Informer, InformerEvent};
use arc_controller::runtime::object_key::ObjectKey;
use arc_sim::Seed;
use arc_sim::apiserver::{CacheRead, LagRange, WatchLag, WatchOpened};
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb, FaultPlan, Window};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::json;

use crate::apiserver::support::*;

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
        network: Vec::new(),
        perturbations: Vec::new(),
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

/// Pods reach the watch cache a fixed `lag_ms` after they commit; requests take no time.
fn lagging_cache(lag_ms: u64) -> arc_sim::apiserver::ApiServerConfig {
    let mut config = instant_requests();
    config.watch_cache_lag = WatchLag { default: LagRange::fixed(lag_ms), ..WatchLag::default() };
    config
}

fn cached_names(cached: &[std::sync::Arc<Pod>]) -> Vec<String> {
    cached.iter().map(|p| p.metadata.name.clone().unwrap()).collect()
}

#[tokio::test(start_paused = true)]
async fn the_informer_lists_consistently_and_hears_of_changes_once_the_watch_cache_has_them() {
    let w = world_with(Seed(2), lagging_cache(2_000), FaultPlan::none());
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let informer = Informer::new(w.pods(), watcher::Config::default());
    let store = informer.store();
    let mut events = informer.subscribe();
    let handle = informer.clone();
    tokio::spawn(informer.run());
    handle.wait_for_sync().await;
    assert_eq!(cached_names(&store.list()), ["a"], "the list read the store, not the lagging cache");
    assert!(w.record.events_of::<CacheRead>().is_empty(), "kube's default watcher never reads at rv 0");
    let opened = &w.record.events_of::<WatchOpened>()[0].1;
    assert_ne!(opened.from, "0", "the watch resumes from the list's version");
    assert_eq!(describe(&events.recv().await.unwrap()), "added a");

    let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
    w.pods().create(&PostParams::default(), &pod("b")).await.unwrap();
    assert_eq!(describe(&events.recv().await.unwrap()), "added b");
    assert!(start.elapsed() >= Duration::from_secs(2), "the watch waited for the cache");
}

#[tokio::test(start_paused = true)]
async fn an_informer_that_lists_from_the_cache_starts_from_its_older_state() {
    let w = world_with(Seed(2), lagging_cache(2_000), FaultPlan::none());
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let mut any = watcher::Config::default().any_semantic();
    any.page_size = None;
    let informer = Informer::new(w.pods(), any);
    let store = informer.store();
    let handle = informer.clone();
    tokio::spawn(informer.run());
    handle.wait_for_sync().await;
    assert!(cached_names(&store.list()).is_empty(), "synced on the cache's state, which lacks a");
    let read = &w.record.events_of::<CacheRead>()[0].1;
    assert!(read.stale() && read.requested_rv == "0", "{read:?}");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(cached_names(&store.list()), ["a"], "the watch from the cache's version caught up");
}

#[tokio::test(start_paused = true)]
async fn kubes_any_semantic_with_its_default_page_size_still_lists_the_store() {
    let w = world_with(Seed(2), lagging_cache(2_000), FaultPlan::none());
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let informer = Informer::new(w.pods(), watcher::Config::default().any_semantic());
    let store = informer.store();
    let handle = informer.clone();
    tokio::spawn(informer.run());
    handle.wait_for_sync().await;
    assert_eq!(cached_names(&store.list()), ["a"], "kube drops resourceVersion=0 from a list with a limit");
    assert!(w.record.events_of::<CacheRead>().is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_informer_sees_a_write_that_committed_even_when_its_answer_was_a_timeout() {
    let timeout = FaultPlan {
        api: vec![ApiFault {
            verbs: vec![ApiVerb::Patch],
            resources: vec!["pods".into()],
            probability: 1.0,
            window: None,
            action: ApiFaultAction::CommitThenError { code: 504 },
        }],
        github: vec![],
        network: Vec::new(),
        perturbations: Vec::new(),
    };
    let w = world_with(Seed(2), arc_sim::apiserver::ApiServerConfig::default(), timeout);
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let informer = Informer::new(w.pods(), watcher::Config::default());
    let mut events = informer.subscribe();
    let handle = informer.clone();
    tokio::spawn(informer.run());
    handle.wait_for_sync().await;
    assert_eq!(describe(&events.recv().await.unwrap()), "added a");
    let label = Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}}));
    let status = status_of(w.pods().patch("a", &PatchParams::default(), &label).await);
    assert_eq!(status.code, 504);
    let InformerEvent::Updated { new, .. } = events.recv().await.unwrap() else { panic!("an update") };
    assert_eq!(new.metadata.labels.as_ref().unwrap()["x"], "1");
}
