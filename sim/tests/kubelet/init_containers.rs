//! Init containers and OOMKilled (issue 42, item 8): init containers run in order before the main
//! container; one that fails to start (`StartError`, exit 128) fails a pod that never restarts, and is
//! reported with the pod still Pending, then backed off and tried again, under `OnFailure` (ARC's
//! #4457 window); the OOM killer's kill is reported `OOMKilled`.

use std::time::Duration;

use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{InitContainers, KubeletConfig, KubeletEventKind};
use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use serde_json::{Value, json};

use crate::kubelet::support::{Node, Setup, condition, node, node_with};

fn failing_node(max_failures: u32) -> Node {
    let init = InitContainers { run: LagRange::fixed(1_000), failed_percent: 100, max_failures };
    let kubelet = KubeletConfig { init_containers: Some(init), ..KubeletConfig::default() };
    node_with(Setup { kubelet, ..Setup::default() })
}

fn pod_with_init(name: &str, restart: &str) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": restart,
            "initContainers": [{"name": "init-dind-externals", "image": "runner:1"}, {"name": "setup", "image": "busybox"}],
            "containers": [{"name": "runner", "image": "runner:1"}]}
    }))
    .unwrap()
}

async fn sleep_s(s: u64) {
    tokio::time::sleep(Duration::from_secs(s)).await;
}

fn init_state(version: &Value, i: usize) -> &Value {
    &version["status"]["initContainerStatuses"][i]["state"]
}

#[tokio::test(start_paused = true)]
async fn init_containers_run_in_order_before_the_main_container() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod_with_init("p", "Never")).await.unwrap();
    sleep_s(20).await;
    let versions = n.versions("p");
    let first_running = versions.iter().position(|v| init_state(v, 0).get("running").is_some()).unwrap();
    let second_running = versions.iter().position(|v| init_state(v, 1).get("running").is_some()).unwrap();
    assert!(first_running < second_running);
    assert_eq!(init_state(&versions[second_running], 0)["terminated"]["reason"], "Completed");
    let waiting = &versions[first_running]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"];
    assert_eq!(waiting, "PodInitializing");
    let initializing = condition(&versions[first_running], "Initialized").unwrap();
    assert_eq!(initializing["reason"], "ContainersNotInitialized");
    assert_eq!(initializing["message"], "containers with incomplete status: [init-dind-externals setup]");
    let last = versions.last().unwrap();
    assert_eq!(n.phase("p").as_deref(), Some("Running"));
    assert_eq!(condition(last, "Initialized").unwrap()["status"], "True");
    assert_eq!(last["status"]["initContainerStatuses"][1]["ready"], true);
}

#[tokio::test(start_paused = true)]
async fn an_init_container_that_fails_to_start_fails_a_pod_that_never_restarts() {
    let n = failing_node(3);
    n.pods.create(&PostParams::default(), &pod_with_init("p", "Never")).await.unwrap();
    sleep_s(30).await;
    assert_eq!(n.phase("p").as_deref(), Some("Failed"));
    let pod = n.apiserver.object("pods", "default", "p").unwrap();
    let terminated = &init_state(&pod, 0)["terminated"];
    assert_eq!(
        (terminated["exitCode"].as_i64(), terminated["reason"].as_str()),
        (Some(128), Some("StartError"))
    );
    assert_eq!(pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "PodInitializing");
    assert_eq!(condition(&pod, "Initialized").unwrap()["status"], "False");
    let versions = n.versions("p");
    let failed_write = versions.iter().find(|v| init_state(v, 0).get("terminated").is_some()).unwrap();
    assert_eq!(failed_write["status"]["phase"], "Failed", "in the same write, as getPhase decides it");
    let events = n.events_of("p");
    assert!(events.iter().all(|e| !matches!(e, KubeletEventKind::ContainerStarted { .. })), "{events:?}");
}

#[tokio::test(start_paused = true)]
async fn under_on_failure_a_failed_init_container_shows_while_the_pod_is_pending_then_retries() {
    let n = failing_node(1);
    n.pods.create(&PostParams::default(), &pod_with_init("p", "OnFailure")).await.unwrap();
    sleep_s(40).await;
    let versions = n.versions("p");
    let window = versions
        .iter()
        .find(|v| init_state(v, 0)["terminated"]["exitCode"] == 128)
        .expect("the failure reported");
    assert_eq!(window["status"]["phase"], "Pending", "ARC's #4457 window");
    let backoff =
        versions.iter().find(|v| init_state(v, 0)["waiting"]["reason"] == "CrashLoopBackOff").unwrap();
    assert_eq!(backoff["status"]["initContainerStatuses"][0]["lastState"]["terminated"]["exitCode"], 128);
    assert_eq!(backoff["status"]["initContainerStatuses"][0]["restartCount"], 1);
    assert_eq!(n.phase("p").as_deref(), Some("Running"), "the retry started and the runner runs");
}

#[tokio::test(start_paused = true)]
async fn the_oom_killer_is_reported_as_oom_killed() {
    let n = node();
    let pod: Pod =
        serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "runner", "image": "runner:1"}]}}))
        .unwrap();
    n.pods.create(&PostParams::default(), &pod).await.unwrap();
    sleep_s(10).await;
    assert!(n.kubelet.oom_kill("default", "p"));
    sleep_s(5).await;
    let pod = n.apiserver.object("pods", "default", "p").unwrap();
    let terminated = &pod["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (terminated["exitCode"].as_i64(), terminated["reason"].as_str()),
        (Some(137), Some("OOMKilled"))
    );
    assert_eq!(n.phase("p").as_deref(), Some("Failed"));
}
