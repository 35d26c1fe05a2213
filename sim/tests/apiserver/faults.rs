//! The fault layer: injected errors, throttling, conflicts, watch drops and forced 410s, all seeded.

use std::time::Duration;

use arc_sim::Seed;
use arc_sim::apiserver::ApiServerConfig;
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb, FaultPlan};
use futures::StreamExt;
use kube::api::{ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

use crate::support::*;

fn plan(verbs: Vec<ApiVerb>, action: ApiFaultAction) -> FaultPlan {
    FaultPlan {
        api: vec![ApiFault { verbs, resources: vec!["pods".into()], probability: 1.0, window: None, action }],
        github: vec![],
    }
}

#[tokio::test(start_paused = true)]
async fn injected_server_errors_change_nothing() {
    let w = world_with(
        Seed(1),
        ApiServerConfig::default(),
        plan(vec![ApiVerb::Create], ApiFaultAction::Error { code: 500 }),
    );
    let status = status_of(w.pods().create(&PostParams::default(), &pod("a")).await);
    assert_eq!((status.code, status.reason.as_str()), (500, "InternalError"));
    assert!(w.server.object("pods", "default", "a").is_none());
    assert_eq!(w.server.request_counts()[&(ApiVerb::Create, "pods".to_string(), 500)], 1);
}

#[tokio::test(start_paused = true)]
async fn throttling_answers_429_with_retry_after() {
    let w = world_with(
        Seed(1),
        ApiServerConfig::default(),
        plan(vec![ApiVerb::List], ApiFaultAction::Throttle { retry_after_seconds: 3 }),
    );
    let status = status_of(w.pods().list(&ListParams::default()).await);
    assert_eq!((status.code, status.reason.as_str()), (429, "TooManyRequests"));
    assert_eq!(status.details.unwrap().retry_after_seconds, 3);
}

#[tokio::test(start_paused = true)]
async fn injected_conflicts_hit_writes_that_carry_a_precondition() {
    let w =
        world_with(Seed(1), ApiServerConfig::default(), plan(vec![ApiVerb::Patch], ApiFaultAction::Conflict));
    let created = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let rv = created.metadata.resource_version.clone().unwrap();
    let locked = Patch::Merge(json!({"metadata": {"resourceVersion": rv}}));
    let status = status_of(w.pods().patch("a", &PatchParams::default(), &locked).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    let plain = Patch::Merge(json!({"metadata": {"labels": {"x": "1"}}}));
    assert!(
        w.pods().patch("a", &PatchParams::default(), &plain).await.is_ok(),
        "a plain merge patch never conflicts"
    );
}

#[tokio::test(start_paused = true)]
async fn latency_delays_the_answer_in_sim_time() {
    let w = world_with(
        Seed(1),
        instant_requests(),
        plan(vec![ApiVerb::Get], ApiFaultAction::Latency { min_ms: 700, max_ms: 700 }),
    );
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let start = tokio::time::Instant::now();
    w.pods().get("a").await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(700));
}

#[tokio::test(start_paused = true)]
async fn dropped_watches_end_early_and_expired_ones_say_410() {
    let dropped = world_with(
        Seed(1),
        instant_requests(),
        plan(vec![ApiVerb::Watch], ApiFaultAction::DropWatch { min_ms: 5000, max_ms: 5000 }),
    );
    let start = tokio::time::Instant::now();
    let events = dropped.pods().watch(&WatchParams::default().disable_bookmarks(), "0").await.unwrap();
    assert_eq!(events.count().await, 0);
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    let expired = world_with(
        Seed(1),
        ApiServerConfig::default(),
        plan(vec![ApiVerb::Watch], ApiFaultAction::ExpireWatch),
    );
    let mut events = expired.pods().watch(&WatchParams::default(), "0").await.unwrap().boxed();
    match events.next().await.unwrap().unwrap() {
        WatchEvent::Error(e) => assert_eq!((e.code, e.reason.as_str()), (410, "Expired")),
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn requests_are_counted_by_verb_resource_and_code() {
    let w = world();
    w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    let _ = w.pods().create(&PostParams::default(), &pod("a")).await;
    w.pods().get("a").await.unwrap();
    let _ = w.pods().get("b").await;
    let counts = w.server.request_counts();
    let count = |verb, code| counts.get(&(verb, "pods".to_string(), code)).copied().unwrap_or(0);
    assert_eq!((count(ApiVerb::Create, 201), count(ApiVerb::Create, 409)), (1, 1));
    assert_eq!((count(ApiVerb::Get, 200), count(ApiVerb::Get, 404)), (1, 1));
    let lines = w.record.trace().lines();
    assert!(
        lines.iter().any(|l| l.contains("apiserver create pods default/* -> 409 AlreadyExists body=")),
        "{lines:#?}"
    );
}
