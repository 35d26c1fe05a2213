//! Serving latency around the commit: part before the write reaches the store, part after, so a
//! watcher can hear of a change before the writer has its answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_sim::Seed;
use arc_sim::apiserver::{ApiServerConfig, AuditEntry, LagRange, WatchLag};
use arc_sim::faults::{ApiVerb, FaultPlan};
use futures::StreamExt;
use kube::api::{PostParams, WatchEvent, WatchParams};
use tokio::time::Instant;

use crate::apiserver::support::*;

/// Requests take exactly 100 ms; watches and the watch cache add nothing.
fn hundred_ms_requests() -> ApiServerConfig {
    ApiServerConfig {
        request_latency: LagRange::fixed(100),
        watch_lag: WatchLag::default(),
        watch_cache_lag: WatchLag::default(),
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_watcher_can_hear_of_a_write_before_the_writer_gets_its_answer() {
    let w = world_with(Seed(4), hundred_ms_requests(), FaultPlan::none());
    let heard: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let mut events = w.pods().watch(&WatchParams::default().disable_bookmarks(), "").await.unwrap().boxed();
    let log = heard.clone();
    tokio::spawn(async move {
        while let Some(Ok(WatchEvent::Added(pod))) = events.next().await {
            log.lock().unwrap().push((pod.metadata.name.unwrap(), Instant::now())); // allow-nondeterminism: tokio clock, paused in the sim
        }
    });
    let mut answered = Vec::new();
    for i in 0..10 {
        let sent = Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        w.pods().create(&PostParams::default(), &pod(&format!("p{i}"))).await.unwrap();
        answered.push((sent, Instant::now())); // allow-nondeterminism: tokio clock, paused in the sim
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    let heard = heard.lock().unwrap().clone();
    assert_eq!(heard.len(), 10);
    let mut early = 0;
    for ((sent, answered), (_, at)) in answered.iter().zip(&heard) {
        assert_eq!(*answered - *sent, Duration::from_millis(100), "the whole serving time");
        assert!(*sent <= *at && *at <= *answered, "heard between sending and the answer");
        early += usize::from(at < answered);
    }
    assert!(early >= 5, "most watchers heard before the writer's answer ({early} of 10)");
}

#[tokio::test(start_paused = true)]
async fn the_audit_log_records_when_a_request_reached_the_store_and_when_it_was_answered() {
    let w = world_with(Seed(4), hundred_ms_requests(), FaultPlan::none());
    for i in 0..10 {
        w.pods().create(&PostParams::default(), &pod(&format!("p{i}"))).await.unwrap();
    }
    let creates: Vec<AuditEntry> =
        w.server.audit().into_iter().filter(|a| a.verb == ApiVerb::Create).collect();
    let after: Vec<u64> =
        creates.iter().filter(|a| a.resource == "pods").map(|a| a.ms - a.served_ms).collect();
    assert_eq!(after.len(), 10);
    assert!(after.iter().all(|ms| *ms <= 100));
    assert!(
        after.iter().any(|ms| *ms > 0) && after.iter().any(|ms| *ms < 100),
        "the split varies: {after:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_servers_timestamps_read_its_own_clock() {
    use arc_sim::clock::DEFAULT_EPOCH_SECONDS;
    use arc_sim::clock_skew::ClockSkew;
    use kube::api::DeleteParams;
    let config =
        ApiServerConfig { clock: ClockSkew { offset_ms: -90_000, drift_ppm: 0 }, ..Default::default() };
    let w = world_with(Seed(4), config, FaultPlan::none());
    tokio::time::sleep(Duration::from_secs(100)).await;
    let mut held = pod("p");
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let created = w.pods().create(&PostParams::default(), &held).await.unwrap();
    let stamp = created.metadata.creation_timestamp.unwrap().0.as_second();
    assert_eq!(stamp, DEFAULT_EPOCH_SECONDS + 100 - 90, "100 s in, on a clock 90 s behind");
    tokio::time::sleep(Duration::from_secs(60)).await;
    w.pods().delete("p", &DeleteParams::default()).await.unwrap();
    let deleting = w.pods().get("p").await.unwrap();
    let stamp = deleting.metadata.deletion_timestamp.unwrap().0.as_second();
    let grace = deleting.metadata.deletion_grace_period_seconds.unwrap_or(0);
    assert_eq!(
        stamp,
        DEFAULT_EPOCH_SECONDS + 160 - 90 + grace,
        "deletionTimestamp: the server's now plus the grace"
    );
}
