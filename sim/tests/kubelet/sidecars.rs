//! Native sidecars (issue 42, item 8): an init container with `restartPolicy: Always` starts before
//! the main container and runs beside it; one that crashes is reported `terminated` (the status ARC's
//! #4457 check reads) until the kubelet's next sync restarts it, and later crashes back off; the pod
//! stays Running after its main container exits until the kubelet has stopped its sidecars.

use std::time::Duration;

use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{KubeletConfig, KubeletEventKind, SidecarCrashes};
use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use serde_json::{Value, json};

use crate::kubelet::support::{Setup, condition, node, node_with};

fn pod_with_dind(name: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": "Never",
            "initContainers": [{"name": "dind", "image": "docker:dind", "restartPolicy": "Always"}],
            "containers": [{"name": "runner", "image": "runner:1"}]}
    }))
    .unwrap()
}

fn dind(version: &Value) -> &Value {
    &version["status"]["initContainerStatuses"][0]
}

fn runner_state(version: &Value) -> &Value {
    &version["status"]["containerStatuses"][0]["state"]
}

async fn sleep_s(s: u64) {
    tokio::time::sleep(Duration::from_secs(s)).await;
}

#[tokio::test(start_paused = true)]
async fn a_crashed_sidecar_shows_terminated_while_the_pod_runs_then_restarts_and_backs_off() {
    let crashes = SidecarCrashes { percent: 100, after: LagRange::fixed(5_000), oom_percent: 100 };
    let kubelet = KubeletConfig { sidecar_crashes: Some(crashes), ..KubeletConfig::default() };
    let n = node_with(Setup { kubelet, ..Setup::default() });
    n.pods.create(&PostParams::default(), &pod_with_dind("p")).await.unwrap();
    sleep_s(30).await;
    let versions = n.versions("p");
    let crashed =
        versions.iter().find(|v| dind(v)["state"]["terminated"]["exitCode"] == 137).expect("a crash");
    assert_eq!(dind(crashed)["state"]["terminated"]["reason"], "OOMKilled");
    assert_eq!(crashed["status"]["phase"], "Running", "the runner runs on");
    assert!(runner_state(crashed).get("running").is_some());
    let ready = condition(crashed, "Ready").unwrap();
    assert_eq!(
        (ready["status"].as_str(), ready["message"].as_str()),
        (Some("False"), Some("containers with unready status: [dind]"))
    );
    assert_eq!(
        condition(crashed, "Initialized").unwrap()["status"],
        "True",
        "a sidecar's crash does not undo it"
    );
    let restarted = versions
        .iter()
        .find(|v| dind(v)["restartCount"] == 1 && dind(v)["state"].get("running").is_some())
        .unwrap();
    assert_eq!(dind(restarted)["lastState"]["terminated"]["exitCode"], 137);
    let backoff =
        versions.iter().find(|v| dind(v)["state"]["waiting"]["reason"] == "CrashLoopBackOff").unwrap();
    assert_eq!(dind(backoff)["restartCount"], 2, "the second crash backs off");
    let events = n.events_of("p");
    let crashes = events
        .iter()
        .filter(|e| matches!(e, KubeletEventKind::SidecarCrashed { exit_code: 137, .. }))
        .count();
    assert!(crashes >= 2, "{events:?}");
}

#[tokio::test(start_paused = true)]
async fn the_sidecar_starts_first_and_the_pod_ends_only_once_it_is_stopped() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod_with_dind("p")).await.unwrap();
    sleep_s(10).await;
    let versions = n.versions("p");
    let sidecar_up = versions.iter().position(|v| dind(v)["state"].get("running").is_some()).unwrap();
    let runner_up = versions.iter().position(|v| runner_state(v).get("running").is_some()).unwrap();
    assert!(sidecar_up < runner_up);
    assert_eq!(condition(&versions[sidecar_up], "Initialized").unwrap()["status"], "True");
    assert_eq!(versions[sidecar_up]["status"]["phase"], "Pending", "the runner is not created yet");
    assert_eq!(dind(&versions[runner_up])["ready"], true);
    assert!(n.kubelet.oom_kill("default", "p"));
    sleep_s(5).await;
    let versions = n.versions("p");
    let runner_gone = versions.iter().find(|v| runner_state(v)["terminated"]["exitCode"] == 137).unwrap();
    assert_eq!(runner_gone["status"]["phase"], "Running", "dind still runs");
    assert!(dind(runner_gone)["state"].get("running").is_some());
    let last = versions.last().unwrap();
    assert_eq!(dind(last)["state"]["terminated"]["reason"], "Completed");
    assert_eq!(last["status"]["phase"], "Failed", "the runner's exit decides, the sidecar's does not");
}

#[tokio::test(start_paused = true)]
async fn a_deleted_pod_reports_its_sidecar_stopped_with_its_runner() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod_with_dind("p")).await.unwrap();
    sleep_s(10).await;
    n.pods.delete("p", &Default::default()).await.unwrap();
    sleep_s(40).await;
    let versions = n.versions("p");
    let last = versions.iter().rev().find(|v| v["status"]["phase"] != "Running").unwrap();
    assert_eq!(dind(last)["state"]["terminated"]["exitCode"], 0);
    assert!(runner_state(last).get("terminated").is_some());
}
