//! Message sessions, the message queue and job acquisition.

use arc_controller::github::JobMessage;
use arc_controller::github::wire::{RunnerScaleSetSession, RunnerScaleSetStatistic, RunnerSetting};

use crate::github_wire::fixture::{Case, Stub};
use crate::github_wire::scale_sets::arc_runner_set;

const SESSION_ID: &str = "6f7a0c2e-9d41-4f3b-8a51-2c7e5b8d1f90";

/// The session the create-session case answers, as the client must decode it.
fn session(queue_token: String) -> RunnerScaleSetSession {
    let setting = RunnerSetting { disable_update: true, ..RunnerSetting::default() };
    RunnerScaleSetSession {
        session_id: SESSION_ID.into(),
        owner_name: "arc-runner-set-754b578d-listener".into(),
        runner_scale_set: Some(arc_runner_set(2, "arc-runners", setting)),
        message_queue_url: format!(
            "https://broker.actions.githubusercontent.com/zNkWqfFt4dpDx6dR1mNjn6Hx1UzNc8PDyU3PHpxA/_apis/runtime/runnerscalesets/5/messages?sessionId={SESSION_ID}"
        ),
        message_queue_access_token: queue_token,
        statistics: Some(RunnerScaleSetStatistic::default()),
    }
}

/// The queue URL and token the create-session case hands out.
fn queue() -> (String, String) {
    let created = Case::load("create-session");
    (created.text("/response/body/messageQueueUrl"), created.text("/response/body/messageQueueAccessToken"))
}

#[tokio::test]
async fn a_session_is_created_for_its_owner() {
    let stub = Stub::via_admin(&["create-session"]);
    let created = stub.client().create_message_session(5, "arc-runner-set-754b578d-listener").await.unwrap();
    stub.assert_done();
    assert_eq!(created, session(queue().1));
}

#[tokio::test]
async fn a_session_refresh_brings_a_new_queue_token() {
    let stub = Stub::via_admin(&["refresh-session"]);
    let refreshed = stub.client().refresh_message_session(5, SESSION_ID).await.unwrap();
    stub.assert_done();
    let token = Case::load("refresh-session").text("/response/body/messageQueueAccessToken");
    assert_ne!(token, queue().1);
    assert_eq!(refreshed, session(token));
}

#[tokio::test]
async fn a_session_is_deleted() {
    let stub = Stub::via_admin(&["delete-session"]);
    stub.client().delete_message_session(5, SESSION_ID).await.unwrap();
    stub.assert_done();
}

#[tokio::test]
async fn a_message_carries_statistics_and_a_batch_of_every_job_message_type() {
    let stub = Stub::new(&["get-message.job-messages"]);
    let (url, token) = queue();
    let message = stub.client().get_message(&url, &token, 0, 10).await.unwrap().expect("a message");
    stub.assert_done();
    assert_eq!((message.message_id, message.message_type.as_str()), (1, "RunnerScaleSetJobMessages"));
    assert_eq!(message.statistics, Some(RunnerScaleSetStatistic::default()));
    let batch = JobMessage::parse_batch(&message.body).unwrap();
    let [available, assigned, started, completed] = batch.as_slice() else { panic!("four: {batch:?}") };
    let JobMessage::Available(available) = available else { panic!("{available:?}") };
    assert!(available.acquire_job_url.ends_with("/_apis/runtime/runnerscalesets/5/acquirejobs"));
    let base = &available.base;
    assert_eq!((base.runner_request_id, base.workflow_run_id), (1001, 9_876_543_210));
    assert_eq!((base.owner_name.as_str(), base.repository_name.as_str()), ("octo-org", "octo-repo"));
    assert_eq!((base.job_display_name.as_str(), base.event_name.as_str()), ("build", "push"));
    assert_eq!(base.job_workflow_ref, "octo-org/octo-repo/.github/workflows/ci.yml@refs/heads/main");
    assert_eq!(
        (base.job_id.as_str(), base.request_labels.as_slice()),
        ("8d0c5a4e-1b7f-4e2a-9c3d-6f5e4d3c2b1a", ["arc-runner-set".to_string()].as_slice())
    );
    assert_eq!(base.queue_time.map(|t| t.to_string()).as_deref(), Some("2026-01-01T00:00:01Z"));
    assert!(matches!(assigned, JobMessage::Assigned(m) if m.base.runner_request_id == 1001));
    let JobMessage::Started(started) = started else { panic!("{started:?}") };
    assert_eq!((started.runner_id, started.runner_name.as_str()), (12, "arc-runner-set-tq2wx-runner-8k4lz"));
    let JobMessage::Completed(completed) = completed else { panic!("{completed:?}") };
    assert_eq!((completed.result.as_str(), completed.runner_id), ("succeeded", 12));
    assert_eq!(completed.base.finish_time.map(|t| t.to_string()).as_deref(), Some("2026-01-01T00:00:09Z"));
}

#[tokio::test]
async fn an_empty_long_poll_is_no_message() {
    let stub = Stub::new(&["get-message.empty"]);
    let (url, token) = queue();
    assert_eq!(stub.client().get_message(&url, &token, 1, 10).await.unwrap(), None);
    stub.assert_done();
}

#[tokio::test]
async fn a_message_is_acknowledged_at_its_own_url_under_the_queue() {
    let stub = Stub::new(&["delete-message"]);
    let (url, token) = queue();
    stub.client().delete_message(&url, &token, 1).await.unwrap();
    stub.assert_done();
}

#[tokio::test]
async fn jobs_are_acquired_with_the_queue_token() {
    let stub = Stub::via_admin(&["acquire-jobs"]);
    let (_, token) = queue();
    let acquired = stub.client().acquire_jobs(5, &token, &[1001]).await.unwrap();
    stub.assert_done();
    assert_eq!(acquired, [1001]);
}
