//! The same seeded request and watch script, run twice, gives byte-identical traces.

use std::time::Duration;

use arc_sim::Seed;
use arc_sim::apiserver::{ApiServerConfig, LagRange};
use arc_sim::faults::{ApiFault, ApiFaultAction, FaultPlan};
use futures::StreamExt;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, WatchParams};
use serde_json::json;

use crate::apiserver::support::*;

fn faults() -> FaultPlan {
    let rule = |probability, action| ApiFault {
        verbs: vec![],
        resources: vec![],
        probability,
        window: None,
        action,
    };
    FaultPlan {
        api: vec![
            rule(0.3, ApiFaultAction::Latency { min_ms: 1, max_ms: 400 }),
            rule(0.1, ApiFaultAction::Error { code: 503 }),
        ],
        github: vec![],
        network: Vec::new(),
        perturbations: Vec::new(),
    }
}

async fn script(seed: u64) -> String {
    let mut config = ApiServerConfig::default();
    config.watch_lag.per_resource.insert("pods".into(), LagRange::between(50, 2500));
    let w = world_with(Seed(seed), config, faults());
    let mut watch = w.pods().watch(&WatchParams::default().timeout(120), "0").await.unwrap().boxed();
    let watcher = tokio::spawn(async move { while watch.next().await.is_some() {} });
    let owner = loop {
        if let Ok(o) = w.runners().create(&PostParams::default(), &runner("owner")).await {
            break o;
        }
    };
    for i in 0..12 {
        let mut p = pod("");
        p.metadata.name = None;
        p.metadata.generate_name = Some("p-".into());
        if i % 3 == 0 {
            p.metadata.owner_references =
                Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    api_version: "actions.github.com/v1alpha1".into(),
                    kind: "EphemeralRunner".into(),
                    name: "owner".into(),
                    uid: owner.metadata.uid.clone().unwrap(),
                    ..Default::default()
                }]);
        }
        let _ = w.pods().create(&PostParams::default(), &p).await;
        let _ = w
            .runners()
            .patch(
                "owner",
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"i": i.to_string()}}})),
            )
            .await;
        tokio::time::sleep(Duration::from_millis(137)).await;
    }
    let _ = w.runners().delete("owner", &DeleteParams::default()).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let _ = watcher.await;
    w.record.trace().text()
}

fn run_in_fresh_runtime(seed: u64) -> String {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
    rt.block_on(script(seed))
}

#[test]
fn the_same_seed_gives_a_byte_identical_trace() {
    let first = run_in_fresh_runtime(42);
    let second = run_in_fresh_runtime(42);
    assert!(first.lines().count() > 50, "the script exercises the server:\n{first}");
    assert!(first.contains("apiserver gc delete pods"), "the script exercises the collector");
    assert!(first.contains("apiserver fault"), "the script exercises the fault layer");
    assert_eq!(first, second);
    assert_ne!(first, run_in_fresh_runtime(43), "a different seed gives a different trace");
}
