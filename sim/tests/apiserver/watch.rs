//! Watches: resumption, 410 beyond history, server-side timeout, selector transitions, bookmarks,
//! seeded lag that keeps order.

use std::time::Duration;

use arc_sim::Seed;
use arc_sim::apiserver::{ApiServerConfig, LagRange, WatchCacheWindow, WatchItem, WatchSent};
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

#[tokio::test(start_paused = true)]
async fn a_watcher_that_falls_behind_its_backlog_is_closed_and_resumes_where_it_was() {
    let mut config = ApiServerConfig { slow_watcher_backlog: Some(3), ..Default::default() };
    config.watch_lag.per_resource.insert("pods".into(), LagRange::between(5_000, 5_000));
    let w = world_with(Seed(3), config, FaultPlan::none());
    let start = w.pods().create(&PostParams::default(), &pod("p0")).await.unwrap();
    let rv = rv_of(&start.metadata).to_string();
    let events = w.pods().watch(&WatchParams::default().disable_bookmarks(), &rv).await.unwrap();
    for i in 1..=5 {
        w.pods().create(&PostParams::default(), &pod(&format!("p{i}"))).await.unwrap();
    }
    let seen: Vec<String> = events.map(|e| describe(&e.unwrap())).collect().await;
    assert!(seen.is_empty(), "four events behind, more than 3: closed before any went out ({seen:?})");
    let closed = w.record.events_of::<WatchSent>().into_iter().find_map(|(_, sent)| match sent.item {
        WatchItem::ClosedSlow { backlog } => Some(backlog),
        _ => None,
    });
    assert_eq!(closed, Some(4), "the record says why it ended");
    let mut resumed = w.pods().watch(&WatchParams::default(), &rv).await.unwrap().boxed();
    assert_eq!(next(&mut resumed).await, "ADDED p1", "a resume from where it was still reaches back");
}

#[tokio::test(start_paused = true)]
async fn a_resume_older_than_the_watch_cache_window_gets_410_and_a_fresh_one_does_not() {
    let window = WatchCacheWindow { fresh_ms: 10_000, lower_bound: 2 };
    let config = ApiServerConfig { watch_cache_window: Some(window), ..instant_requests() };
    let w = world_with(Seed(1), config, FaultPlan::none());
    let old = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    w.pods().create(&PostParams::default(), &pod("b")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(11)).await;
    let fresh = w.pods().create(&PostParams::default(), &pod("c")).await.unwrap();
    w.pods().create(&PostParams::default(), &pod("d")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await; // until the watch cache has c and d
    let mut expired =
        w.pods().watch(&WatchParams::default(), &rv_of(&old.metadata).to_string()).await.unwrap().boxed();
    assert_eq!(
        next(&mut expired).await,
        "ERROR 410 Expired",
        "a and b are older than 10 s and beyond the newest 2"
    );
    let mut kept =
        w.pods().watch(&WatchParams::default(), &rv_of(&fresh.metadata).to_string()).await.unwrap().boxed();
    assert_eq!(next(&mut kept).await, "ADDED d");
}
