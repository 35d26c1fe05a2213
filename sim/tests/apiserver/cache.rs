//! The watch cache: lists and watches at resourceVersion `0` see a cache that lags the store and
//! catches up; `NotOlderThan` waits for it (504 after 3 s); `Exact` rewinds the store (410 once
//! compacted); an unset resourceVersion reads the store; bad parameter combinations get the real 422.

use std::time::Duration;

use arc_sim::Seed;
use arc_sim::apiserver::{ApiServerConfig, CacheRead, LagRange, WatchLag};
use arc_sim::faults::{ApiVerb, FaultPlan};
use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, Patch, PatchParams, PostParams, VersionMatch, WatchEvent, WatchParams};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::apiserver::support::*;

/// Pods reach the watch cache `lag_ms` after they commit; requests take no time.
fn lagging_cache(lag_ms: u64) -> ApiServerConfig {
    let mut config = instant_requests();
    config.watch_cache_lag = WatchLag { default: LagRange::fixed(lag_ms), ..WatchLag::default() };
    config
}

fn names(list: &kube::api::ObjectList<Pod>) -> Vec<String> {
    list.items.iter().map(|p| p.metadata.name.clone().unwrap()).collect()
}

fn list_rv(list: &kube::api::ObjectList<Pod>) -> u64 {
    list.metadata.resource_version.as_deref().unwrap().parse().unwrap()
}

/// A GET through the fake's tower service (for queries kube's `ListParams` will not build).
async fn raw_get(w: &World, path_and_query: &str) -> (u16, Value) {
    let request = http::Request::get(path_and_query).body(Full::new(Bytes::new())).unwrap();
    let response = w.server.service().oneshot(request).await.unwrap();
    let code = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (code, serde_json::from_slice(&body).unwrap())
}

#[tokio::test(start_paused = true)]
async fn a_list_at_resource_version_0_is_served_from_the_lagging_cache_until_it_catches_up() {
    let w = world_with(Seed(1), lagging_cache(1_000), FaultPlan::none());
    let created = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let stale = w.pods().list(&ListParams::default().match_any()).await.unwrap();
    assert!(names(&stale).is_empty(), "the cache has not received the create yet");
    assert!(list_rv(&stale) < rv_of(&created.metadata));
    let reads: Vec<CacheRead> = w.record.events_of::<CacheRead>().into_iter().map(|(_, r)| r).collect();
    assert_eq!(reads.len(), 1);
    assert!(reads[0].stale() && reads[0].behind == 1 && reads[0].verb == ApiVerb::List, "{reads:?}");

    tokio::time::sleep(Duration::from_secs(1)).await;
    let caught_up = w.pods().list(&ListParams::default().at("0")).await.unwrap();
    assert_eq!(names(&caught_up), ["a"]);
    assert_eq!(list_rv(&caught_up), rv_of(&created.metadata));
}

#[tokio::test(start_paused = true)]
async fn a_list_without_resource_version_is_a_consistent_read_of_the_store() {
    let w = world_with(Seed(1), lagging_cache(60_000), FaultPlan::none());
    let created = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let list = w.pods().list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&list), ["a"]);
    assert_eq!(list_rv(&list), w.server.resource_version());
    assert!(list_rv(&list) >= rv_of(&created.metadata));
    assert!(w.record.events_of::<CacheRead>().is_empty(), "the cache served nothing");
}

#[tokio::test(start_paused = true)]
async fn the_cacher_ignores_limit_at_resource_version_0() {
    let w = world_with(Seed(1), lagging_cache(0), FaultPlan::none());
    for name in ["a", "b", "c"] {
        w.pods().create(&PostParams::default(), &pod(name)).await.unwrap();
    }
    let (code, body) = raw_get(&w, "/api/v1/namespaces/default/pods?resourceVersion=0&limit=1").await;
    assert_eq!(code, 200);
    assert_eq!(body["items"].as_array().unwrap().len(), 3);
    assert!(body["metadata"].get("continue").is_none());
    let paged = w.pods().list(&ListParams::default().limit(1)).await.unwrap();
    assert_eq!(names(&paged), ["a"], "without a resourceVersion the store pages");
}

#[tokio::test(start_paused = true)]
async fn not_older_than_waits_for_the_cache_to_reach_the_version() {
    let w = world_with(Seed(1), lagging_cache(1_000), FaultPlan::none());
    let created = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let rv = rv_of(&created.metadata).to_string();
    let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
    let list =
        w.pods().list(&ListParams::default().at(&rv).matching(VersionMatch::NotOlderThan)).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(1), "it waited for the cache, no longer");
    assert_eq!(names(&list), ["a"]);
    assert!(list_rv(&list) >= rv_of(&created.metadata));
}

#[tokio::test(start_paused = true)]
async fn not_older_than_a_version_the_cache_never_reaches_is_504_after_3_seconds() {
    let w = world_with(Seed(1), lagging_cache(0), FaultPlan::none());
    let future = (w.server.resource_version() + 10).to_string();
    let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
    let params = ListParams::default().at(&future).matching(VersionMatch::NotOlderThan);
    let status = status_of(w.pods().list(&params).await);
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    assert_eq!((status.code, status.reason.as_str()), (504, "Timeout"));
    let current = w.server.resource_version();
    assert_eq!(status.message, format!("Timeout: Too large resource version: {future}, current: {current}"));
    let details = status.details.unwrap();
    assert_eq!(details.retry_after_seconds, 1);
    assert_eq!(details.causes[0].reason, "ResourceVersionTooLarge");
}

#[tokio::test(start_paused = true)]
async fn an_exact_list_reads_the_store_as_it_was_and_is_410_once_compacted() {
    let config = ApiServerConfig { history_capacity: 3, ..instant_requests() };
    let w = world_with(Seed(1), config, FaultPlan::none());
    let a = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let at = rv_of(&a.metadata).to_string();
    let label = Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}}));
    w.pods().patch("a", &PatchParams::default(), &label).await.unwrap();
    w.pods().create(&PostParams::default(), &pod("b")).await.unwrap();

    let exact = w.pods().list(&ListParams::default().at(&at).matching(VersionMatch::Exact)).await.unwrap();
    assert_eq!(names(&exact), ["a"]);
    assert_eq!(list_rv(&exact).to_string(), at);
    assert!(exact.items[0].metadata.labels.is_none(), "a as it was, before the patch");
    let legacy = w.pods().list(&ListParams::default().at(&at).limit(10)).await.unwrap();
    assert_eq!(names(&legacy), ["a"], "a resourceVersion with a limit and no match is exact (legacy)");

    for name in ["c", "d", "e"] {
        w.pods().create(&PostParams::default(), &pod(name)).await.unwrap();
    }
    let status = status_of(w.pods().list(&ListParams::default().at(&at).matching(VersionMatch::Exact)).await);
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    assert_eq!(status.message, "The resourceVersion for the provided list is too old.");
}

#[tokio::test(start_paused = true)]
async fn a_watch_at_0_starts_from_the_caches_older_state_and_then_catches_up() {
    let w = world_with(Seed(1), lagging_cache(1_000), FaultPlan::none());
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let label = Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}}));
    let patched = w.pods().patch("a", &PatchParams::default(), &label).await.unwrap();
    let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
    let wp = WatchParams::default().disable_bookmarks();
    let mut events = w.pods().watch(&wp, "0").await.unwrap().boxed();

    let first = events.next().await.unwrap().unwrap();
    let WatchEvent::Added(old) = first else { panic!("{first:?}") };
    assert!(old.metadata.labels.is_none(), "the cache still held a before the patch");
    assert!(rv_of(&old.metadata) < rv_of(&patched.metadata));
    assert!(start.elapsed() < Duration::from_millis(100));

    let second = events.next().await.unwrap().unwrap();
    let WatchEvent::Modified(new) = second else { panic!("{second:?}") };
    assert_eq!(rv_of(&new.metadata), rv_of(&patched.metadata));
    assert!(start.elapsed() >= Duration::from_secs(1), "the patch arrives once the cache has it");
    let read = &w.record.events_of::<CacheRead>()[0].1;
    assert!(read.verb == ApiVerb::Watch && read.stale(), "{read:?}");
}

#[tokio::test(start_paused = true)]
async fn a_watch_delivers_a_change_no_earlier_than_the_cache_has_it() {
    let w = world_with(Seed(1), lagging_cache(500), FaultPlan::none());
    let rv = w.server.resource_version().to_string();
    let mut events = w.pods().watch(&WatchParams::default().disable_bookmarks(), &rv).await.unwrap().boxed();
    let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let event = events.next().await.unwrap().unwrap();
    assert!(matches!(event, WatchEvent::Added(_)));
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(500), "delivered before the cache had it: {waited:?}");
    assert!(
        waited <= Duration::from_millis(520),
        "more than the cache's lag and the watch's own: {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn send_initial_events_waits_for_the_cache_and_ends_the_initial_objects_with_a_bookmark() {
    let w = world_with(Seed(1), lagging_cache(700), FaultPlan::none());
    let created = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let rv = rv_of(&created.metadata).to_string();
    let start = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
    let mut events = w.pods().watch(&WatchParams::streaming_lists(), &rv).await.unwrap().boxed();
    let first = events.next().await.unwrap().unwrap();
    assert!(
        matches!(first, WatchEvent::Added(ref p) if p.metadata.name.as_deref() == Some("a")),
        "{first:?}"
    );
    assert!(start.elapsed() >= Duration::from_millis(700), "the watch waited for the cache");
    let WatchEvent::Bookmark(end) = events.next().await.unwrap().unwrap() else { panic!("a bookmark") };
    assert_eq!(end.metadata.annotations.get("k8s.io/initial-events-end").map(String::as_str), Some("true"));
    assert_eq!(end.metadata.resource_version, rv);
}

#[tokio::test(start_paused = true)]
async fn bad_version_parameters_get_kube_apiservers_answers() {
    let w = world();
    let cases = [
        (
            "/api/v1/namespaces/default/pods?resourceVersionMatch=Exact",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "/api/v1/namespaces/default/pods?resourceVersion=0&resourceVersionMatch=Exact",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ),
        (
            "/api/v1/namespaces/default/pods?resourceVersion=1&resourceVersionMatch=Newest",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
        ),
        (
            "/api/v1/namespaces/default/pods?resourceVersion=5&continue=abc",
            400,
            "specifying resource version is not allowed when using continue",
        ),
        (
            "/api/v1/namespaces/default/pods?watch=true&resourceVersion=0&resourceVersionMatch=NotOlderThan",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
        (
            "/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
    ];
    for (path, code, message) in cases {
        let (got, body) = raw_get(&w, path).await;
        assert_eq!((got, body["message"].as_str().unwrap()), (code, message), "{path}");
    }
    let (_, invalid) = raw_get(&w, cases[0].0).await;
    assert_eq!(invalid["details"]["kind"], "ListOptions");
    assert_eq!(invalid["details"]["group"], "meta.k8s.io");
    assert_eq!(invalid["details"]["causes"][0]["reason"], "FieldValueForbidden");
    assert_eq!(invalid["details"]["causes"][0]["field"], "resourceVersionMatch");
}
