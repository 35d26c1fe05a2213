//! Watches: resumption, 410 beyond history, server-side timeout, selector transitions, bookmarks,
//! seeded lag that keeps order.

use std::time::Duration;

use arc_sim::Seed;
use arc_sim::apiserver::{ApiServerConfig, LagRange};
use arc_sim::faults::FaultPlan;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

use crate::apiserver::support::*;

fn describe(event: &WatchEvent<Pod>) -> String {
    match event {
        WatchEvent::Added(p) => format!("ADDED {}", p.metadata.name.as_deref().unwrap()),
        WatchEvent::Modified(p) => format!("MODIFIED {}", p.metadata.name.as_deref().unwrap()),
        WatchEvent::Deleted(p) => format!("DELETED {}", p.metadata.name.as_deref().unwrap()),
        WatchEvent::Bookmark(b) => format!("BOOKMARK {}", b.metadata.resource_version),
        WatchEvent::Error(e) => format!("ERROR {} {}", e.code, e.reason),
    }
}

async fn next(events: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<Pod>>> + Unpin)) -> String {
    let event = tokio::time::timeout(Duration::from_secs(30), events.next()).await.expect("an event in time");
    describe(&event.expect("stream open").expect("decodes"))
}

#[tokio::test(start_paused = true)]
async fn a_watch_resumes_after_its_resource_version_in_order() {
    let w = world();
    let a = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    w.pods().create(&PostParams::default(), &pod("b")).await.unwrap();
    w.pods()
        .patch("a", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}})))
        .await
        .unwrap();
    let mut events =
        w.pods().watch(&WatchParams::default(), &rv_of(&a.metadata).to_string()).await.unwrap().boxed();
    assert_eq!(next(&mut events).await, "ADDED b");
    assert_eq!(next(&mut events).await, "MODIFIED a");
}

#[tokio::test(start_paused = true)]
async fn a_watch_without_a_version_starts_with_the_current_objects() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let mut events = w.pods().watch(&WatchParams::default(), "0").await.unwrap().boxed();
    assert_eq!(next(&mut events).await, "ADDED a");
}

#[tokio::test(start_paused = true)]
async fn a_watch_from_beyond_the_retained_history_gets_410_expired() {
    let config = ApiServerConfig { history_capacity: 2, ..Default::default() };
    let w = world_with(Seed(1), config, FaultPlan::none());
    let first = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    for name in ["b", "c", "d"] {
        w.pods().create(&PostParams::default(), &pod(name)).await.unwrap();
    }
    let mut events =
        w.pods().watch(&WatchParams::default(), &rv_of(&first.metadata).to_string()).await.unwrap().boxed();
    assert_eq!(next(&mut events).await, "ERROR 410 Expired");
    assert!(events.next().await.is_none(), "the stream ends after the error");
}

#[tokio::test(start_paused = true)]
async fn the_server_ends_a_watch_after_its_timeout_in_sim_time() {
    let w = world_with(Seed(1), instant_requests(), FaultPlan::none());
    let start = tokio::time::Instant::now();
    let events = w.pods().watch(&WatchParams::default().timeout(45).disable_bookmarks(), "0").await.unwrap();
    let all: Vec<_> = events.try_collect().await.unwrap();
    assert!(all.is_empty());
    assert_eq!(start.elapsed(), Duration::from_secs(45));
}

#[tokio::test(start_paused = true)]
async fn objects_crossing_a_selector_arrive_as_added_and_deleted() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let mut events = w.pods().watch(&WatchParams::default().labels("app=web"), "0").await.unwrap().boxed();
    let label = |v: &str| Patch::Merge(json!({"metadata": {"labels": {"app": v}}}));
    w.pods().patch("a", &PatchParams::default(), &label("web")).await.unwrap();
    assert_eq!(next(&mut events).await, "ADDED a");
    w.pods().patch("a", &PatchParams::default(), &label("db")).await.unwrap();
    assert_eq!(next(&mut events).await, "DELETED a");
}

#[tokio::test(start_paused = true)]
async fn watches_that_allow_bookmarks_get_them_periodically() {
    let config = ApiServerConfig { bookmark_interval_ms: 10_000, ..Default::default() };
    let w = world_with(Seed(1), config, FaultPlan::none());
    let created = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let rv = rv_of(&created.metadata).to_string();
    let mut events = w.pods().watch(&WatchParams::default(), &rv).await.unwrap().boxed();
    assert_eq!(next(&mut events).await, format!("BOOKMARK {rv}"));
}

#[tokio::test(start_paused = true)]
async fn seeded_watch_lag_delays_events_but_keeps_them_in_order() {
    let mut config = ApiServerConfig::default();
    config.watch_lag.per_resource.insert("pods".into(), LagRange::between(1000, 3000));
    let w = world_with(Seed(3), config, FaultPlan::none());
    let mut events = w.pods().watch(&WatchParams::default().disable_bookmarks(), "0").await.unwrap().boxed();
    let start = tokio::time::Instant::now();
    for i in 0..5 {
        w.pods().create(&PostParams::default(), &pod(&format!("p{i}"))).await.unwrap();
    }
    for i in 0..5 {
        assert_eq!(next(&mut events).await, format!("ADDED p{i}"));
        assert!(start.elapsed() >= Duration::from_secs(1), "no event arrives before the minimum lag");
    }
    assert!(start.elapsed() <= Duration::from_millis(3020), "lag stays within its range plus serving time");
}
