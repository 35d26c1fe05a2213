//! Regular sidecars (issue 42, item 8): a second entry of `spec.containers`, as ARC's chart renders
//! `dind` on clusters before 1.29. The status lists containers by name (`dind` before `runner`); the
//! sidecar starts with the runner and is never stopped by the kubelet, so a pod whose runner exited
//! stays Running until it is deleted; under `Never` a crashed sidecar stays down, and the pod turns
//! Failed when the runner ends, whatever the runner's exit code.

use std::time::Duration;

use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{KubeletConfig, KubeletEventKind, SidecarCrashes};
use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use serde_json::{Value, json};

use crate::kubelet::support::{Setup, condition, node, node_with};

fn pod_beside_dind(name: &str, restart_policy: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": restart_policy,
            "containers": [{"name": "runner", "image": "runner:1"}, {"name": "dind", "image": "docker:dind"}]}
    }))
    .unwrap()
}

/// Where container `name` stands in `containerStatuses`, and its entry (none before the kubelet's
/// first write).
fn status_of<'a>(version: &'a Value, name: &str) -> Option<(usize, &'a Value)> {
    let statuses = version["status"]["containerStatuses"].as_array()?;
    statuses.iter().enumerate().find(|(_, s)| s["name"] == name)
}

/// The entry of container `name` (`null` before the kubelet's first write).
fn entry<'a>(version: &'a Value, name: &str) -> &'a Value {
    status_of(version, name).map_or(&Value::Null, |(_, s)| s)
}

fn state<'a>(version: &'a Value, name: &str) -> &'a Value {
    &entry(version, name)["state"]
}

async fn sleep_s(s: u64) {
    tokio::time::sleep(Duration::from_secs(s)).await;
}

fn crashing_sidecars() -> Setup {
    let crashes = SidecarCrashes { percent: 100, after: LagRange::fixed(5_000), oom_percent: 0 };
    Setup {
        kubelet: KubeletConfig { sidecar_crashes: Some(crashes), ..KubeletConfig::default() },
        ..Setup::default()
    }
}

#[tokio::test(start_paused = true)]
async fn statuses_are_listed_by_name_and_the_sidecar_starts_with_the_runner() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod_beside_dind("p", "Never")).await.unwrap();
    sleep_s(10).await;
    let versions = n.versions("p");
    for version in versions.iter().filter(|v| v["status"].get("containerStatuses").is_some()) {
        let at = |name| status_of(version, name).map(|(i, _)| i);
        assert_eq!((at("dind"), at("runner")), (Some(0), Some(1)), "sorted by name");
    }
    let up = versions.iter().find(|v| state(v, "runner").get("running").is_some()).unwrap();
    assert!(state(up, "dind").get("running").is_some(), "started in the same write");
    assert_eq!(condition(up, "Ready").unwrap()["status"], "True");
    let started = n.events_of("p");
    assert!(started.contains(&KubeletEventKind::SidecarStarted {
        container: "dind".into(),
        restart_count: 0,
        regular: true
    }));
}

#[tokio::test(start_paused = true)]
async fn a_runner_that_exits_leaves_the_pod_running_until_it_is_deleted() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod_beside_dind("p", "Never")).await.unwrap();
    sleep_s(10).await;
    assert!(n.kubelet.crash("default", "p", 0));
    sleep_s(60).await;
    let last = n.versions("p").last().cloned().unwrap();
    assert_eq!(state(&last, "runner")["terminated"]["exitCode"], 0);
    assert!(state(&last, "dind").get("running").is_some(), "the kubelet leaves it running");
    assert_eq!(last["status"]["phase"], "Running");
    let ready = condition(&last, "Ready").unwrap();
    assert_eq!(
        (ready["status"].as_str(), ready["message"].as_str()),
        (Some("False"), Some("containers with unready status: [runner]"))
    );
    assert!(
        n.events_of("p")
            .contains(&KubeletEventKind::SidecarsOutlivedMain { containers: vec!["dind".into()] })
    );
    n.pods.delete("p", &Default::default()).await.unwrap();
    sleep_s(40).await;
    let versions = n.versions("p");
    let ended = versions.iter().rev().find(|v| v["status"]["phase"] != "Running").unwrap();
    assert_eq!(ended["status"]["phase"], "Succeeded", "both exited 0");
    assert_eq!(state(ended, "dind")["terminated"]["exitCode"], 0, "dockerd exits 0 on SIGTERM");
}

#[tokio::test(start_paused = true)]
async fn under_never_a_crashed_sidecar_stays_down_and_fails_the_pod_when_the_runner_succeeds() {
    let n = node_with(crashing_sidecars());
    n.pods.create(&PostParams::default(), &pod_beside_dind("p", "Never")).await.unwrap();
    sleep_s(30).await;
    let last = n.versions("p").last().cloned().unwrap();
    assert_eq!(state(&last, "dind")["terminated"]["exitCode"], 1);
    assert_eq!(entry(&last, "dind")["restartCount"], 0, "never restarted");
    assert_eq!(last["status"]["phase"], "Running", "the runner runs on");
    assert!(n.kubelet.crash("default", "p", 0));
    sleep_s(30).await;
    let versions = n.versions("p");
    let failed = versions.iter().find(|v| v["status"]["phase"] == "Failed").expect("a terminal phase");
    assert_eq!(state(failed, "runner")["terminated"]["exitCode"], 0, "the runner itself succeeded");
    let events = n.events_of("p");
    assert!(
        events.contains(&KubeletEventKind::FailedBesideSucceededMain { containers: vec!["dind".into()] })
    );
    assert!(!events.iter().any(|e| matches!(e, KubeletEventKind::SidecarsOutlivedMain { .. })));
}

#[tokio::test(start_paused = true)]
async fn under_on_failure_a_crashed_sidecar_restarts_and_backs_off() {
    let n = node_with(crashing_sidecars());
    n.pods.create(&PostParams::default(), &pod_beside_dind("p", "OnFailure")).await.unwrap();
    sleep_s(60).await;
    let versions = n.versions("p");
    let restarted = versions
        .iter()
        .find(|v| entry(v, "dind")["restartCount"] == 1 && state(v, "dind").get("running").is_some())
        .expect("restarted at the next sync");
    assert_eq!(entry(restarted, "dind")["lastState"]["terminated"]["exitCode"], 1);
    assert!(versions.iter().any(|v| state(v, "dind")["waiting"]["reason"] == "CrashLoopBackOff"));
    assert!(versions.iter().all(|v| v["status"]["phase"] != "Failed"));
}
