//! A legacy runner's `config.sh` over the fake GitHub's HTTP interface, as the summerwind image's
//! `startup.sh` runs it (`KubeletConfig::runner_sessions_over_http`): the token exchange and the
//! registration, each tried 3 times 1–5 s apart; a 404 (an expired token) ends `config.sh` at once,
//! and `startup.sh` runs it 10 times a second apart before the container exits 2.

use std::time::Duration;

use arc_sim::faults::{FaultPlan, GitHubFault, GitHubFaultAction, Window};
use arc_sim::github::{EventKind, GitHubConfig, Operation, RemovalReason, RunnerState, ServiceLatency};
use arc_sim::kubelet::KubeletEventKind;
use kube::api::PostParams;
use serde_json::json;

use crate::kubelet::support::{Node, Setup, http_kubelet, node_with, pod};

/// A node whose runners reach GitHub over HTTP, GitHub answering at once, under `faults`.
fn http_node(faults: Vec<GitHubFault>) -> Node {
    let kubelet = http_kubelet();
    let github = GitHubConfig { latency: ServiceLatency::ZERO, ..Setup::default().github };
    let faults = FaultPlan { github: faults, ..FaultPlan::none() };
    node_with(Setup { kubelet, github, faults, ..Setup::default() })
}

/// Every request of `operation` in the first `until_ms` fails with `action`.
fn failing(operation: &str, action: GitHubFaultAction, until_ms: u64) -> GitHubFault {
    GitHubFault {
        operations: vec![operation.into()],
        probability: 1.0,
        window: Some(Window { start_ms: 0, end_ms: until_ms }),
        action,
    }
}

/// Creates legacy runner pod `name` (restart policy `restart`) with `token`.
async fn legacy_pod(n: &Node, name: &str, restart: &str, token: &str) {
    let env = json!([
        {"name": "RUNNER_TOKEN", "value": token},
        {"name": "RUNNER_NAME", "value": name},
        {"name": "RUNNER_ORG", "value": "arcsim"},
        {"name": "RUNNER_LABELS", "value": "gpu"},
    ]);
    n.pods.create(&PostParams::default(), &pod(name, restart, env)).await.unwrap();
}

/// Each failed request of `config.sh`: its path, status and retry.
fn request_failures(n: &Node, name: &str) -> Vec<(String, Option<u16>, Option<u64>)> {
    n.events_of(name)
        .into_iter()
        .filter_map(|e| match e {
            KubeletEventKind::RegistrationRequestFailed { path, status, retry_in_ms } => {
                Some((path, status, retry_in_ms))
            }
            _ => None,
        })
        .collect()
}

fn exit_code(n: &Node, name: &str) -> Option<i32> {
    n.events_of(name).into_iter().find_map(|e| match e {
        KubeletEventKind::ContainerStopped { exit_code, .. } => Some(exit_code),
        _ => None,
    })
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

#[tokio::test(start_paused = true)]
async fn config_sh_exchanges_the_token_registers_and_the_runner_goes_online() {
    let n = http_node(vec![]);
    let token = n.github.issue_registration_token("/orgs/arcsim").token;
    legacy_pod(&n, "legacy", "OnFailure", &token).await;
    sleep_ms(30_000).await;
    assert!(n.first("legacy", |e| matches!(e, KubeletEventKind::RunnerConnected { .. })).is_some());
    assert_eq!(n.github.request_count(Operation::AdminToken, 200), 1);
    assert_eq!(n.github.request_count(Operation::RegisterRunner, 200), 1);
    let runners = n.github.runners();
    assert_eq!(runners.len(), 1);
    assert_eq!(runners[0].name, "legacy");
    assert_eq!(runners[0].scope.as_deref(), Some("/orgs/arcsim"));
    assert_eq!(runners[0].labels, ["self-hosted", "Linux", "X64", "gpu"]);
}

#[tokio::test(start_paused = true)]
async fn an_expired_token_fails_each_config_sh_at_once_and_startup_sh_exits_2_after_ten() {
    let n = http_node(vec![]);
    let token = n.github.issue_registration_token("/orgs/arcsim").token;
    sleep_ms(3_700_000).await;
    legacy_pod(&n, "legacy", "Never", &token).await;
    sleep_ms(60_000).await;
    let failures = request_failures(&n, "legacy");
    assert_eq!(failures.len(), 10, "one 404 per config.sh, never retried: {failures:?}");
    assert!(failures.iter().all(|f| *f == ("/actions/runner-registration".into(), Some(404), None)));
    let runs = n
        .events_of("legacy")
        .iter()
        .filter(|e| matches!(e, KubeletEventKind::RegistrationFailed { .. }))
        .count();
    assert_eq!(runs, 10);
    assert_eq!(exit_code(&n, "legacy"), Some(2), "startup.sh: Configuration failed!");
    let started = n.first("legacy", |e| matches!(e, KubeletEventKind::ContainerStarted { .. })).unwrap();
    let stopped = n.first("legacy", |e| matches!(e, KubeletEventKind::ContainerStopped { .. })).unwrap();
    assert_eq!(stopped - started, 10_000, "ten runs, a second apart");
    let refused = n.github_events().into_iter().filter(
        |e| matches!(&e.kind, EventKind::RegistrationTokenRefused { token: t, expired: true } if *t == token),
    );
    assert_eq!(refused.count(), 10, "the service knows why");
    assert!(n.github.runners().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_registration_answered_503_is_sent_again_one_to_five_seconds_later() {
    let n = http_node(vec![failing("register-runner", GitHubFaultAction::Error { code: 503 }, 4_000)]);
    let token = n.github.issue_registration_token("/orgs/arcsim").token;
    legacy_pod(&n, "legacy", "OnFailure", &token).await;
    sleep_ms(30_000).await;
    let failures = request_failures(&n, "legacy");
    assert!(!failures.is_empty(), "the fault fired");
    for (path, status, retry) in &failures {
        assert_eq!((path.as_str(), *status), ("/actions/runners/register", Some(503)));
        assert!(retry.is_some_and(|ms| (1_000..=5_000).contains(&ms)), "{retry:?}");
    }
    assert!(n.first("legacy", |e| matches!(e, KubeletEventKind::RunnerConnected { .. })).is_some());
    assert_eq!(n.github.request_count(Operation::AdminToken, 200), 1, "within one config.sh");
}

#[tokio::test(start_paused = true)]
async fn a_registration_whose_answer_was_lost_is_replaced_by_the_next_try() {
    let n = http_node(vec![failing("register-runner", GitHubFaultAction::CommitThenDrop, 2_000)]);
    let token = n.github.issue_registration_token("/orgs/arcsim").token;
    legacy_pod(&n, "legacy", "OnFailure", &token).await;
    sleep_ms(30_000).await;
    let runners = n.github.runners();
    assert_eq!(runners.len(), 2, "the lost registration and the one the runner runs as");
    assert!(matches!(runners[0].state, RunnerState::Removed { reason: RemovalReason::Replaced, .. }));
    assert!(!runners[1].is_removed());
    let connected = n.events_of("legacy").into_iter().find_map(|e| match e {
        KubeletEventKind::RunnerConnected { runner_id } => Some(runner_id),
        _ => None,
    });
    assert_eq!(connected, Some(runners[1].id));
}
