//! A pod's life on the node: bound, started, run to its end or restarted, evicted, crashed, waiting
//! for its secret.

use std::time::Duration;

use arc_sim::github::{GitHubConfig, JobSpec};
use arc_sim::kubelet::{KubeletEventKind, StopCause};
use kube::api::{DeleteParams, PostParams};
use serde_json::json;

use crate::kubelet::support::{Node, Setup, condition, jit_pod, node, node_with, pod};

#[tokio::test(start_paused = true)]
async fn a_pod_is_bound_started_and_removed_after_a_graceful_delete() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod("idle", "Always", json!([]))).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(n.phase("idle").as_deref(), Some("Running"));
    let stored = n.apiserver.object("pods", "default", "idle").unwrap();
    assert_eq!(stored["spec"]["nodeName"], "arcsim-node-1");
    assert_eq!(condition(&stored, "Ready").unwrap()["status"], "True");
    n.pods.delete("idle", &DeleteParams::default()).await.unwrap();
    assert!(n.apiserver.object("pods", "default", "idle").is_some(), "graceful: still there");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(n.apiserver.object("pods", "default", "idle").is_none());
    let events = n.events_of("idle");
    assert!(events.contains(&KubeletEventKind::PodRemoved), "{events:?}");
    let stopped = events.iter().find(|e| matches!(e, KubeletEventKind::ContainerStopped { .. }));
    assert!(
        matches!(
            stopped,
            Some(KubeletEventKind::ContainerStopped { exit_code: 143, cause: StopCause::PodDeleted, .. })
        ),
        "an idle process dies of SIGTERM: {stopped:?}"
    );
    let actors: Vec<String> = n.apiserver.audit().iter().map(|a| a.actor.clone()).collect();
    assert!(actors.iter().filter(|a| *a == "kubelet").count() >= 6, "bind, statuses, delete: {actors:?}");
}

#[tokio::test(start_paused = true)]
async fn a_jit_runner_takes_one_job_and_its_pod_succeeds() {
    let n = node();
    let scale_set = n.github.create_scale_set("set", 1, &["set"]);
    let runner_id = n.jit_secret(scale_set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    let job = n.github.submit_job(JobSpec::simple(&["set"], 30_000));
    n.acquire_all(scale_set).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(n.phase("r1").as_deref(), Some("Succeeded"));
    let done = n.github.job(job).unwrap();
    assert_eq!(done.runner_id, Some(runner_id));
    assert!(done.is_completed());
    let stopped =
        n.events_of("r1").into_iter().find(|e| matches!(e, KubeletEventKind::ContainerStopped { .. }));
    assert!(matches!(
        stopped,
        Some(KubeletEventKind::ContainerStopped { exit_code: 0, cause: StopCause::Exited, .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn a_container_waits_for_its_missing_secret() {
    let n = node();
    let scale_set = n.github.create_scale_set("set", 1, &["set"]);
    n.pods.create(&PostParams::default(), &jit_pod("late")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(n.events_of("late").iter().any(|e| matches!(e, KubeletEventKind::ContainerConfigError { .. })));
    let stored = n.apiserver.object("pods", "default", "late").unwrap();
    assert_eq!(
        stored["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "CreateContainerConfigError"
    );
    assert_eq!(stored["status"]["phase"], "Pending");
    n.jit_secret(scale_set, "late").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(n.events_of("late").iter().any(|e| matches!(e, KubeletEventKind::RunnerConnected { .. })));
}

#[tokio::test(start_paused = true)]
async fn a_legacy_runner_with_an_expired_token_crash_loops() {
    let n = node();
    let token = n.github.issue_registration_token("arcsim/app");
    let env =
        json!([{"name": "RUNNER_TOKEN", "value": token.token}, {"name": "RUNNER_NAME", "value": "legacy"}]);
    tokio::time::sleep(Duration::from_secs(3700)).await;
    n.pods.create(&PostParams::default(), &pod("legacy", "OnFailure", env)).await.unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let failures = n
        .events_of("legacy")
        .into_iter()
        .filter(|e| matches!(e, KubeletEventKind::RegistrationFailed { .. }))
        .count();
    assert!(failures >= 2, "it restarted and failed again: {failures}");
    let stored = n.apiserver.object("pods", "default", "legacy").unwrap();
    assert!(stored["status"]["containerStatuses"][0]["restartCount"].as_u64().unwrap() >= 1);
    assert_eq!(stored["status"]["phase"], "Running", "OnFailure keeps restarting a failed container");
}

#[tokio::test(start_paused = true)]
async fn an_evicted_pod_fails_with_its_reason_and_a_crash_restarts_the_container() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod("victim", "Never", json!([]))).await.unwrap();
    n.pods.create(&PostParams::default(), &pod("crashy", "Always", json!([]))).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(n.kubelet.evict("default", "victim", "Evicted"));
    assert!(n.kubelet.crash("default", "crashy", 137));
    tokio::time::sleep(Duration::from_secs(20)).await;
    let victim = n.apiserver.object("pods", "default", "victim").unwrap();
    assert_eq!(
        (victim["status"]["phase"].as_str(), victim["status"]["reason"].as_str()),
        (Some("Failed"), Some("Evicted"))
    );
    assert!(
        victim["status"]["containerStatuses"][0]["state"].get("terminated").is_none(),
        "ARC's rule (a) shape"
    );
    assert_eq!(condition(&victim, "DisruptionTarget").unwrap()["reason"], "TerminationByKubelet");
    assert_eq!(condition(&victim, "Ready").unwrap()["reason"], "PodFailed");
    let crashy = n.apiserver.object("pods", "default", "crashy").unwrap();
    assert_eq!(crashy["status"]["containerStatuses"][0]["restartCount"], 1);
    assert_eq!(crashy["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"], 137);
    assert_eq!(crashy["status"]["phase"], "Running");
}

/// Removes an idle JIT runner 20 s after its pod starts; returns the node and the pod's exit.
async fn removed_while_idle(github: GitHubConfig) -> (Node, Vec<(u64, KubeletEventKind)>) {
    let n = node_with(Setup { github, ..Setup::default() });
    let scale_set = n.github.create_scale_set("set", 1, &["set"]);
    let runner_id = n.jit_secret(scale_set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(20)).await;
    n.actions.remove_runner(runner_id).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1_200)).await;
    let events = n.timed_events_of("r1");
    (n, events)
}

#[tokio::test(start_paused = true)]
async fn a_removed_idle_runner_stops_at_once_when_told_it_is_gone() {
    let (n, events) = removed_while_idle(Setup::default().github).await;
    let stopped = events.iter().find(|(_, e)| matches!(e, KubeletEventKind::ContainerStopped { .. }));
    let Some((at, KubeletEventKind::ContainerStopped { exit_code: 0, cause: StopCause::Exited, .. })) =
        stopped
    else {
        panic!("the runner exits 0 by itself: {events:?}");
    };
    assert!(*at < 22_000, "within a second or so of the removal, at {at} ms");
    assert_eq!(n.phase("r1").as_deref(), Some("Succeeded"));
}

#[tokio::test(start_paused = true)]
async fn a_removed_idle_runner_retries_registration_not_found_for_minutes_then_exits_0() {
    let github = GitHubConfig { removed_registration_retried: true, ..Setup::default().github };
    let (n, events) = removed_while_idle(github).await;
    let retrying = events.iter().find_map(|(at, e)| match e {
        KubeletEventKind::RetryingRemovedRegistration { for_ms, .. } => Some((*at, *for_ms)),
        _ => None,
    });
    let (from, for_ms) = retrying.expect("the runner retries");
    assert!((400_000..=995_000).contains(&for_ms), "6.6 to 16.5 minutes: {for_ms} ms");
    let stopped = events.iter().find(|(_, e)| matches!(e, KubeletEventKind::ContainerStopped { .. }));
    let Some((at, KubeletEventKind::ContainerStopped { exit_code: 0, cause: StopCause::Exited, .. })) =
        stopped
    else {
        panic!("the runner exits 0 by itself in the end: {events:?}");
    };
    assert_eq!(*at, from + for_ms, "it ran on for as long as it retried");
    assert_eq!(n.phase("r1").as_deref(), Some("Succeeded"));
}
