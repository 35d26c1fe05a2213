//! A runner's session over the fake GitHub's HTTP interface (`KubeletConfig::runner_sessions_over_http`):
//! a failed try is tried again 30 s later, as actions/runner does; a session whose answer was lost is
//! in the way (409) until the service gives up on it (or, under `unpolled-session=five-minutes`, the
//! runner gives up first); a removed registration stops the runner at once.

use std::time::Duration;

use arc_sim::faults::{FaultPlan, GitHubFault, GitHubFaultAction, Window};
use arc_sim::github::{Assumed, GitHubConfig, Operation, ServiceLatency};
use arc_sim::kubelet::KubeletEventKind;
use kube::api::PostParams;

use crate::kubelet::support::{Node, Setup, http_kubelet, jit_pod, node_with};

/// A node whose runners connect over HTTP, GitHub answering at once, under `faults`.
fn http_node(faults: Vec<GitHubFault>) -> Node {
    http_node_assuming(faults, &[])
}

/// The same, the fake GitHub under the alternatives `assumed` (`NAME=ALT`).
fn http_node_assuming(faults: Vec<GitHubFault>, assumed: &[&str]) -> Node {
    let kubelet = http_kubelet();
    let mut github = GitHubConfig { latency: ServiceLatency::ZERO, ..Setup::default().github };
    Assumed::parse(assumed.iter().copied()).expect("known alternatives").apply(&mut github);
    let faults = FaultPlan { github: faults, ..FaultPlan::none() };
    node_with(Setup { kubelet, github, faults, ..Setup::default() })
}

/// Every `create-runner-session` request in the first `until_ms` fails with `action`.
fn failing(action: GitHubFaultAction, until_ms: u64) -> GitHubFault {
    GitHubFault {
        operations: vec!["create-runner-session".into()],
        probability: 1.0,
        window: Some(Window { start_ms: 0, end_ms: until_ms }),
        action,
    }
}

fn failures(n: &Node, name: &str) -> Vec<(Option<u16>, Option<u64>)> {
    n.events_of(name)
        .into_iter()
        .filter_map(|e| match e {
            KubeletEventKind::SessionCreationFailed { status, retry_in_ms } => Some((status, retry_in_ms)),
            _ => None,
        })
        .collect()
}

fn connected_at(n: &Node, name: &str) -> Option<u64> {
    n.first(name, |e| matches!(e, KubeletEventKind::RunnerConnected { .. }))
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

#[tokio::test(start_paused = true)]
async fn a_session_answered_503_is_tried_again_thirty_seconds_later() {
    let n = http_node(vec![failing(GitHubFaultAction::Error { code: 503 }, 10_000)]);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    sleep_ms(60_000).await;
    assert_eq!(failures(&n, "r1"), vec![(Some(503), Some(30_000))]);
    let started = n.first("r1", |e| matches!(e, KubeletEventKind::ContainerStarted { .. })).unwrap();
    assert_eq!(connected_at(&n, "r1"), Some(started + 30_000), "online at the second try");
    assert_eq!(n.github.request_count(Operation::CreateRunnerSession, 503), 1);
    assert_eq!(n.github.request_count(Operation::CreateRunnerSession, 200), 1);
}

#[tokio::test(start_paused = true)]
async fn a_session_whose_answer_was_lost_is_in_the_way_until_the_service_gives_up_on_it() {
    let n = http_node(vec![failing(GitHubFaultAction::CommitThenDrop, 10_000)]);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    sleep_ms(120_000).await;
    // The first try created a session nobody polls: the second (30 s) conflicts with it; the service
    // gives up on it after one long poll (50 s), so the third (60 s) gets a session.
    assert_eq!(failures(&n, "r1"), vec![(None, Some(30_000)), (Some(409), Some(30_000))]);
    let started = n.first("r1", |e| matches!(e, KubeletEventKind::ContainerStarted { .. })).unwrap();
    assert_eq!(connected_at(&n, "r1"), Some(started + 60_000));
    assert_eq!(n.github.request_count(Operation::CreateRunnerSession, 409), 1);
}

#[tokio::test(start_paused = true)]
async fn a_removed_registration_stops_the_runner_without_a_retry() {
    let n = http_node(vec![failing(GitHubFaultAction::Error { code: 500 }, 2_000)]);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    let runner = n.jit_secret(set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    sleep_ms(5_000).await;
    n.actions.remove_runner(runner).await.unwrap();
    sleep_ms(60_000).await;
    assert_eq!(failures(&n, "r1"), vec![(Some(500), Some(30_000)), (Some(401), None)]);
    assert_eq!(connected_at(&n, "r1"), None);
    let stopped = n.events_of("r1").into_iter().find_map(|e| match e {
        KubeletEventKind::ContainerStopped { exit_code, .. } => Some(exit_code),
        _ => None,
    });
    assert_eq!(stopped, Some(1), "refused: the listener's TerminatedError");
}

#[tokio::test(start_paused = true)]
async fn under_five_minute_sessions_the_runner_gives_up_after_four_minutes_of_conflicts() {
    let lost = vec![failing(GitHubFaultAction::CommitThenDrop, 10_000)];
    let n = http_node_assuming(lost, &["unpolled-session=five-minutes"]);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    sleep_ms(300_000).await;
    let conflicts = failures(&n, "r1").iter().filter(|(status, _)| *status == Some(409)).count();
    assert_eq!(conflicts, 8, "tried through 4 minutes of conflicts: {:?}", failures(&n, "r1"));
    assert_eq!(failures(&n, "r1").last(), Some(&(Some(409), None)), "then gave up");
    assert_eq!(connected_at(&n, "r1"), None);
}
