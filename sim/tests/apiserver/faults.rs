//! The fault layer: injected errors, throttling, conflicts, watch drops and forced 410s, and writes that
//! commit and then fail (500, 504, a dropped connection), all seeded.

use std::time::Duration;

use arc_sim::Seed;
use arc_sim::apiserver::{self, ApiServerConfig, FaultEffect};
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb, FaultPlan};
use futures::StreamExt;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

use crate::apiserver::support::*;

fn plan(verbs: Vec<ApiVerb>, action: ApiFaultAction) -> FaultPlan {
    FaultPlan {
        api: vec![ApiFault { verbs, resources: vec!["pods".into()], probability: 1.0, window: None, action }],
        github: vec![],
        network: Vec::new(),
        perturbations: Vec::new(),
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
async fn a_stalled_watch_goes_silent_with_no_error_until_its_timeout() {
    let stalled = world_with(
        Seed(1),
        instant_requests(),
        plan(vec![ApiVerb::Watch], ApiFaultAction::StallWatch { min_ms: 2_000, max_ms: 2_000 }),
    );
    let start = tokio::time::Instant::now();
    let params = WatchParams::default().timeout(120).disable_bookmarks();
    let mut events = stalled.pods().watch(&params, "0").await.unwrap().boxed();
    stalled.pods().create(&PostParams::default(), &pod("before")).await.unwrap();
    match events.next().await.unwrap().unwrap() {
        WatchEvent::Added(p) => assert_eq!(p.metadata.name.as_deref(), Some("before")),
        other => panic!("the change before the stall arrives, got {other:?}"),
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    stalled.pods().create(&PostParams::default(), &pod("during")).await.unwrap();
    assert!(events.next().await.is_none(), "nothing after the stall, not even an error");
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(120),
        "the stream ends at the timeout its client asked for"
    );
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

#[tokio::test(start_paused = true)]
async fn an_injected_quota_refusal_is_the_resource_quota_plugins_403() {
    let w = world_with(Seed(1), ApiServerConfig::default(), plan(vec![], ApiFaultAction::ForbiddenQuota));
    let status = status_of(w.pods().create(&PostParams::default(), &pod("a")).await);
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        "pods \"a\" is forbidden: exceeded quota: compute-resources, requested: pods=1, used: pods=0, limited: pods=0"
    );
    assert!(w.server.object("pods", "default", "a").is_none());
    assert!(w.record.trace().lines().iter().any(|l| l.contains("apiserver fault 403 create pods default/*")));
}

#[tokio::test(start_paused = true)]
async fn an_injected_invalid_is_a_422_that_changes_nothing() {
    let w =
        world_with(Seed(1), ApiServerConfig::default(), plan(vec![ApiVerb::Create], ApiFaultAction::Invalid));
    let status = status_of(w.pods().create(&PostParams::default(), &pod("a")).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(status.message, "Pod \"a\" is invalid: spec.containers[0].image: Required value");
    let cause = &status.details.unwrap().causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.field.as_str()),
        ("FieldValueRequired", "spec.containers[0].image")
    );
    assert!(w.server.object("pods", "default", "a").is_none());
}

fn faults_fired(w: &World) -> Vec<apiserver::ApiFault> {
    w.record.events_of::<apiserver::ApiFault>().into_iter().map(|(_, f)| f).collect()
}

#[tokio::test(start_paused = true)]
async fn a_create_that_commits_then_times_out_lands_and_its_retry_meets_already_exists() {
    let w = world_with(
        Seed(1),
        ApiServerConfig::default(),
        plan(vec![ApiVerb::Create], ApiFaultAction::CommitThenError { code: 504 }),
    );
    let mut events = w.pods().watch(&WatchParams::default().disable_bookmarks(), "").await.unwrap().boxed();
    let status = status_of(w.pods().create(&PostParams::default(), &pod("a")).await);
    assert_eq!((status.code, status.reason.as_str()), (504, "Timeout"));
    assert_eq!(
        status.message,
        "Timeout: request did not complete within requested timeout - context deadline exceeded"
    );
    assert!(w.server.object("pods", "default", "a").is_some(), "the create committed");
    assert!(matches!(events.next().await.unwrap().unwrap(), WatchEvent::Added(_)), "watchers heard of it");

    let retry = status_of(w.pods().create(&PostParams::default(), &pod("a")).await);
    assert_eq!(
        (retry.code, retry.reason.as_str()),
        (409, "AlreadyExists"),
        "a failing request gets its own answer"
    );
    let fired = faults_fired(&w);
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].effect, FaultEffect::CommittedThenAnswered { code: 504 });
    assert_eq!((fired[0].verb, fired[0].name.as_str()), (ApiVerb::Create, "a"));
    let audit = w.server.audit();
    assert!(audit[audit.len() - 2].committed_then_failed && audit[audit.len() - 2].took_effect());
    assert!(!audit[audit.len() - 1].took_effect());
    assert!(
        w.record.trace().lines().iter().any(|l| l.ends_with("fault commit-then-504 create pods default/*"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_delete_that_commits_then_drops_the_connection_is_a_transport_error_and_its_retry_is_not_found() {
    let w = world_with(
        Seed(1),
        ApiServerConfig::default(),
        plan(vec![ApiVerb::Delete], ApiFaultAction::CommitThenDrop),
    );
    let mut unscheduled = pod("a");
    unscheduled.spec.as_mut().unwrap().termination_grace_period_seconds = Some(0);
    w.pods().create(&PostParams::default(), &unscheduled).await.unwrap();
    let err = w.pods().delete("a", &DeleteParams::default()).await.expect_err("no answer");
    assert!(!matches!(err, kube::Error::Api(_)), "a transport error, not a Status: {err:?}");
    assert!(w.server.object("pods", "default", "a").is_none(), "the delete committed");
    let retry = status_of(w.pods().delete("a", &DeleteParams::default()).await);
    assert_eq!((retry.code, retry.reason.as_str()), (404, "NotFound"));
    assert_eq!(faults_fired(&w)[0].effect, FaultEffect::CommittedThenDropped);
    let dropped = w.server.audit().into_iter().find(|a| a.committed_then_failed).expect("audited");
    assert_eq!((dropped.code, dropped.verb), (0, ApiVerb::Delete));
    assert_eq!(w.server.request_counts()[&(ApiVerb::Delete, "pods".to_string(), 0)], 1);
}

#[tokio::test(start_paused = true)]
async fn an_update_that_commits_then_fails_500_makes_its_retry_conflict() {
    let w = world_with(
        Seed(1),
        ApiServerConfig::default(),
        plan(vec![ApiVerb::Update], ApiFaultAction::CommitThenError { code: 500 }),
    );
    let mut current = w.pods().create(&PostParams::default(), &pod("a")).await.unwrap();
    current.metadata.labels = Some([("x".to_string(), "1".to_string())].into());
    let status = status_of(w.pods().replace("a", &PostParams::default(), &current).await);
    assert_eq!((status.code, status.reason.as_str()), (500, "InternalError"));
    let stored = w.server.object("pods", "default", "a").unwrap();
    assert_eq!(stored["metadata"]["labels"]["x"], "1", "the update committed");
    let retry = status_of(w.pods().replace("a", &PostParams::default(), &current).await);
    assert_eq!(
        (retry.code, retry.reason.as_str()),
        (409, "Conflict"),
        "the retry carries the old resourceVersion"
    );
}

#[tokio::test(start_paused = true)]
async fn commit_then_fail_spares_reads_and_requests_that_fail_on_their_own() {
    let w = world_with(Seed(1), ApiServerConfig::default(), plan(vec![], ApiFaultAction::CommitThenDrop));
    assert!(w.pods().list(&ListParams::default()).await.is_ok());
    let missing = status_of(w.pods().patch("nope", &PatchParams::default(), &Patch::Merge(json!({}))).await);
    assert_eq!(missing.code, 404);
    assert!(faults_fired(&w).is_empty());
}
