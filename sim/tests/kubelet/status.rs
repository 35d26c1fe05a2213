//! The kubelet's status writes through `pods/status`, in a real kubelet's sequence and shapes.

use std::time::Duration;

use arc_sim::faults::ApiVerb;
use arc_sim::github::JobSpec;
use kube::api::PostParams;
use serde_json::Value;

use crate::kubelet::support::{condition, jit_pod, node};

/// What one version of a pod's status says, in short.
fn summary(pod: &Value) -> (String, String, String, String) {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str).unwrap_or("").to_string();
    let flag =
        |kind| condition(pod, kind).map_or("-".to_string(), |c| c["status"].as_str().unwrap().to_string());
    let state = pod
        .pointer("/status/containerStatuses/0/state")
        .and_then(Value::as_object)
        .and_then(|s| s.keys().next().cloned())
        .unwrap_or_else(|| "-".into());
    (phase, flag("PodReadyToStartContainers"), flag("Ready"), state)
}

#[tokio::test(start_paused = true)]
async fn a_runner_pods_status_goes_through_a_kubelets_six_writes() {
    let n = node();
    let scale_set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(scale_set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    n.github.submit_job(JobSpec::simple(&["set"], 20_000));
    n.acquire_all(scale_set).await;
    tokio::time::sleep(Duration::from_secs(60)).await;

    let writes = n
        .apiserver
        .audit()
        .into_iter()
        .filter(|a| {
            a.resource == "pods" && a.status_subresource && a.verb == ApiVerb::Patch && a.actor == "kubelet"
        })
        .count();
    assert_eq!(writes, 6, "scheduled, admitted, sandbox, running, terminated, sandbox gone");

    let mut seen: Vec<(String, String, String, String)> = Vec::new();
    for version in n.versions("r1") {
        let s = summary(&version);
        if seen.last() != Some(&s) {
            seen.push(s);
        }
    }
    let expected = [
        ("Pending", "-", "-", "-"),
        ("Pending", "False", "False", "waiting"),
        ("Pending", "True", "False", "waiting"),
        ("Running", "True", "True", "running"),
        ("Succeeded", "True", "False", "terminated"),
        ("Succeeded", "False", "False", "terminated"),
    ];
    let seen: Vec<(&str, &str, &str, &str)> =
        seen.iter().map(|(a, b, c, d)| (a.as_str(), b.as_str(), c.as_str(), d.as_str())).collect();
    assert_eq!(seen, expected);
}

#[tokio::test(start_paused = true)]
async fn each_status_carries_the_fields_a_kubelet_sets_at_that_stage() {
    let n = node();
    let scale_set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(scale_set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    n.github.submit_job(JobSpec::simple(&["set"], 20_000));
    n.acquire_all(scale_set).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let versions = n.versions("r1");
    let find = |pick: &dyn Fn(&Value) -> bool| versions.iter().find(|v| pick(v)).cloned().unwrap();

    let scheduled = find(&|v| condition(v, "PodScheduled").is_some());
    let scheduled_at = condition(&scheduled, "PodScheduled").unwrap()["lastTransitionTime"].clone();
    let admitted = find(&|v| condition(v, "PodReadyToStartContainers").is_some());
    assert_eq!(admitted["spec"]["nodeName"], "arcsim-node-1");
    assert_eq!(admitted["status"]["hostIP"], "10.0.0.1");
    assert_eq!(admitted["status"]["hostIPs"][0]["ip"], "10.0.0.1");
    assert!(admitted["status"]["startTime"].is_string());
    assert!(admitted["status"].get("podIP").is_none(), "no IP before the sandbox");
    assert_eq!(condition(&admitted, "Initialized").unwrap()["status"], "True");
    assert_eq!(condition(&admitted, "ContainersReady").unwrap()["reason"], "ContainersNotReady");
    assert_eq!(condition(&admitted, "Ready").unwrap()["message"], "containers with unready status: [runner]");
    let waiting = &admitted["status"]["containerStatuses"][0];
    assert_eq!(waiting["state"]["waiting"]["reason"], "ContainerCreating");
    assert_eq!((waiting["ready"].as_bool(), waiting["started"].as_bool()), (Some(false), Some(false)));
    assert!(waiting.get("containerID").is_none());

    let sandbox = find(&|v| v["status"].get("podIP").is_some());
    assert_eq!(sandbox["status"]["podIPs"][0]["ip"], sandbox["status"]["podIP"]);

    let running = find(&|v| v["status"]["phase"] == "Running");
    let container = &running["status"]["containerStatuses"][0];
    assert!(container["state"]["running"]["startedAt"].is_string());
    assert_eq!((container["ready"].as_bool(), container["started"].as_bool()), (Some(true), Some(true)));
    assert!(container["containerID"].as_str().unwrap().starts_with("containerd://"));
    assert!(container["imageID"].as_str().unwrap().starts_with("runner:1@sha256:"));
    assert_eq!(condition(&running, "ContainersReady").unwrap()["status"], "True");

    let done = versions.last().unwrap();
    let terminated = &done["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (terminated["exitCode"].as_i64(), terminated["reason"].as_str()),
        (Some(0), Some("Completed"))
    );
    assert!(terminated["startedAt"].is_string() && terminated["finishedAt"].is_string());
    assert_eq!(condition(done, "Ready").unwrap()["reason"], "PodCompleted");
    assert_eq!(condition(done, "PodReadyToStartContainers").unwrap()["status"], "False");
    assert_eq!(
        condition(done, "PodScheduled").unwrap()["lastTransitionTime"],
        scheduled_at,
        "kept throughout"
    );
    assert_eq!(
        condition(done, "Initialized").unwrap()["lastTransitionTime"],
        condition(&admitted, "Initialized").unwrap()["lastTransitionTime"],
        "a condition keeps its time while its status holds"
    );
}
