//! The client against the fake: retries under injected faults, typed errors, the admin token.

use std::time::Duration;

use arc_controller::runtime::metrics::{GITHUB_CALLS_TOTAL, GITHUB_HTTP_REQUESTS_TOTAL};
use arc_sim::faults::{FaultPlan, GitHubFault, GitHubFaultAction, Window};
use arc_sim::github::Operation;
use arc_sim::github::{GitHubConfig, UnknownRunnerAnswer};

use crate::github::rig::{rig, rig_with_faults};

fn fault(operation: &str, window: Option<Window>, action: GitHubFaultAction) -> FaultPlan {
    let rule = GitHubFault { operations: vec![operation.into()], probability: 1.0, window, action };
    FaultPlan { api: Vec::new(), github: vec![rule], network: Vec::new(), perturbations: Vec::new() }
}

#[tokio::test(start_paused = true)]
async fn injected_server_errors_are_retried_with_backoff_until_they_stop() {
    let window = Some(Window { start_ms: 0, end_ms: 2_500 });
    let rig = rig_with_faults(
        1,
        GitHubConfig::instant(),
        &fault("get-runner-by-name", window, GitHubFaultAction::Error { code: 503 }),
    );
    assert_eq!(rig.client.get_runner_by_name("x").await.unwrap(), None);
    assert_eq!(rig.ms(), 3_000, "attempts at 0, 1 s and 3 s");
    assert_eq!(rig.fake.request_count(Operation::GetRunnerByName, 503), 2);
    assert_eq!(rig.fake.request_count(Operation::GetRunnerByName, 200), 1);
    let http = |code| {
        rig.metrics.get(GITHUB_HTTP_REQUESTS_TOTAL, &[("operation", "get-runner-by-name"), ("code", code)])
    };
    assert_eq!((http("503"), http("200")), (2, 1));
    assert_eq!(
        rig.metrics.get(GITHUB_CALLS_TOTAL, &[("operation", "get-runner-by-name"), ("outcome", "ok")]),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn a_throttle_is_retried_after_its_retry_after() {
    let window = Some(Window { start_ms: 0, end_ms: 1 });
    let throttle = GitHubFaultAction::Throttle { retry_after_seconds: 5 };
    let rig = rig_with_faults(1, GitHubConfig::instant(), &fault("get-runner-group", window, throttle));
    let group = rig.client.get_runner_group_by_name("Default").await.unwrap();
    assert_eq!((group.id, group.is_default), (1, true));
    assert_eq!(rig.ms(), 5_000);
}

#[tokio::test(start_paused = true)]
async fn a_fault_that_never_stops_ends_in_a_typed_http_error_after_four_retries() {
    let rig = rig_with_faults(
        1,
        GitHubConfig::instant(),
        &fault("remove-runner", None, GitHubFaultAction::Error { code: 500 }),
    );
    let err = rig.client.remove_runner(7).await.unwrap_err();
    assert_eq!(err.status(), Some(500), "{err}");
    assert_eq!(rig.ms(), 15_000, "waits of 1, 2, 4 and 8 s");
    assert_eq!(rig.fake.request_count(Operation::RemoveRunner, 500), 5);
    assert_eq!(
        rig.metrics.get(GITHUB_CALLS_TOTAL, &[("operation", "remove-runner"), ("outcome", "http_error")]),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn injected_latency_delays_the_answer() {
    let latency = GitHubFaultAction::Latency { min_ms: 700, max_ms: 700 };
    let rig = rig_with_faults(1, GitHubConfig::instant(), &fault("get-runner-by-name", None, latency));
    rig.client.get_runner_by_name("x").await.unwrap();
    assert_eq!(rig.ms(), 700);
}

#[tokio::test(start_paused = true)]
async fn unknown_objects_come_back_as_typed_errors() {
    let rig = rig(1, GitHubConfig::instant());
    rig.client.remove_runner(424_242).await.expect("204 for an unknown runner by default");
    assert!(rig.client.get_runner(424_242).await.unwrap_err().is_runner_not_found());
    assert!(rig.client.get_runner_scale_set_by_id(9).await.unwrap_err().is_not_found());
    assert_eq!(rig.client.get_runner_scale_set(1, "none").await.unwrap(), None);
    assert!(rig.client.get_runner_group_by_name("nope").await.unwrap_err().is_not_found());
    assert!(rig.client.refresh_message_session(9, "nope").await.unwrap_err().is_not_found());

    let strict = crate::github::rig::rig(
        1,
        GitHubConfig { remove_unknown_runner: UnknownRunnerAnswer::NotFound, ..GitHubConfig::instant() },
    );
    assert!(strict.client.remove_runner(424_242).await.unwrap_err().is_runner_not_found());
}

#[tokio::test(start_paused = true)]
async fn scale_sets_are_created_found_updated_and_runner_groups_resolved() {
    let config = GitHubConfig { runner_groups: vec!["gpu-group".into()], ..GitHubConfig::instant() };
    let rig = rig(1, config);
    let group = rig.client.get_runner_group_by_name("gpu-group").await.unwrap();
    assert_eq!((group.id, group.is_default), (2, false));
    let id = rig.scale_set("arc").await;
    let found = rig.client.get_runner_scale_set(1, "arc").await.unwrap().expect("found");
    assert_eq!((found.id, found.runner_group_name.as_str()), (id, "Default"));
    assert!(found.runner_setting.disable_update && found.statistics.is_some());
    let moved = arc_controller::github::wire::RunnerScaleSet { runner_group_id: 2, ..Default::default() };
    let updated = rig.client.update_runner_scale_set(id, &moved).await.unwrap();
    assert_eq!((updated.runner_group_id, updated.name.as_str()), (2, "arc"));
    assert_eq!(rig.client.get_runner_scale_set(2, "arc").await.unwrap().map(|s| s.id), Some(id));
}

#[tokio::test(start_paused = true)]
async fn the_admin_token_is_fetched_once_and_refreshed_within_a_minute_of_expiry() {
    let config = GitHubConfig { admin_token_ttl_ms: 300_000, ..GitHubConfig::instant() };
    let rig = rig(1, config);
    rig.client.get_runner_by_name("a").await.unwrap();
    tokio::time::sleep(Duration::from_secs(239)).await;
    rig.client.get_runner_by_name("b").await.unwrap();
    assert_eq!(rig.fake.request_count(Operation::AdminToken, 200), 1);
    assert_eq!(rig.fake.request_count(Operation::RegistrationToken, 201), 1);
    tokio::time::sleep(Duration::from_secs(2)).await;
    rig.client.get_runner_by_name("c").await.unwrap();
    assert_eq!(rig.fake.request_count(Operation::AdminToken, 200), 2, "refreshed 59 s before expiry");
    tokio::time::sleep(Duration::from_secs(3600)).await;
    rig.client.get_runner_by_name("d").await.expect("an expired token is replaced, never sent");
    assert_eq!(rig.fake.request_count(Operation::GetRunnerByName, 401), 0);
}
