//! Commit-then-fail faults: the request is served and its change committed, then the client gets a
//! 5xx or a dropped connection, and its retry meets the committed state.

use arc_controller::github::wire::JitRunnerSetting;
use arc_sim::faults::{FaultPlan, GitHubFault, GitHubFaultAction, Window};
use arc_sim::github::{EventKind, GitHubCall, GitHubConfig, GitHubFaultFired, JobSpec, JobState, Operation};
use arc_sim::github::{RemoveOutcome, RunnerState};

use crate::github::rig::{Rig, rig_with_faults};

/// `action` on the first request of `operation` only (a window of the first sim millisecond).
fn once(operation: &str, action: GitHubFaultAction) -> FaultPlan {
    let window = Some(Window { start_ms: 0, end_ms: 1 });
    let rule = GitHubFault { operations: vec![operation.into()], probability: 1.0, window, action };
    FaultPlan { api: Vec::new(), github: vec![rule], network: Vec::new(), perturbations: Vec::new() }
}

fn calls_of(rig: &Rig, operation: &str) -> Vec<GitHubCall> {
    rig.record
        .events_of::<GitHubCall>()
        .into_iter()
        .map(|(_, c)| c)
        .filter(|c| c.operation == operation)
        .collect()
}

fn setting(name: &str) -> JitRunnerSetting {
    JitRunnerSetting { name: name.into(), work_folder: "_work".into() }
}

#[tokio::test(start_paused = true)]
async fn a_jit_config_that_commits_then_answers_500_registered_the_runner_and_the_retry_meets_agent_exists() {
    let plan = once("generate-jit-config", GitHubFaultAction::CommitThenError { code: 500 });
    let rig = rig_with_faults(1, GitHubConfig::instant(), &plan);
    let set = rig.fake.create_scale_set("arc", 1, &["arc"]);
    let err = rig.client.generate_jit_runner_config(&setting("arc-runner-a"), set).await.unwrap_err();
    assert!(err.is_agent_exists(), "the retry 1 s later finds the name taken: {err}");
    let runners = rig.fake.runners();
    assert_eq!(runners.len(), 1, "the failed call registered the runner");
    assert_eq!((runners[0].name.as_str(), runners[0].state), ("arc-runner-a", RunnerState::Offline));
    let calls = calls_of(&rig, "generate-jit-config");
    assert_eq!(
        calls.iter().map(|c| (c.served, c.status)).collect::<Vec<_>>(),
        [(Some(200), Some(500)), (Some(409), Some(409))]
    );
    assert!(calls[0].committed_then_failed() && !calls[1].committed_then_failed());
    assert_eq!(calls[1].received_ms, 1_000);
    let fired: Vec<GitHubFaultFired> = rig.record.events_of().into_iter().map(|(_, f)| f).collect();
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].action, GitHubFaultAction::CommitThenError { code: 500 });
    assert!(rig.record.trace().text().contains("generate-jit-config 500 served=200"));
}

#[tokio::test(start_paused = true)]
async fn a_remove_runner_that_commits_then_drops_the_connection_removed_the_runner_and_the_retry_gets_204() {
    let rig = rig_with_faults(
        1,
        GitHubConfig::instant(),
        &once("remove-runner", GitHubFaultAction::CommitThenDrop),
    );
    let set = rig.fake.create_scale_set("arc", 1, &["arc"]);
    let jit = rig.client.generate_jit_runner_config(&setting("r"), set).await.unwrap();
    rig.client.remove_runner(jit.runner.id).await.expect("the retry succeeds");
    let outcomes: Vec<RemoveOutcome> = rig
        .fake
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::RemoveRunner { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes, [RemoveOutcome::Removed, RemoveOutcome::Unknown], "removed, then nothing to remove");
    assert_eq!(rig.fake.request_count(Operation::RemoveRunner, 0), 1, "one dropped connection");
    assert_eq!(rig.fake.request_count(Operation::RemoveRunner, 204), 1);
    let calls = calls_of(&rig, "remove-runner");
    assert_eq!((calls[0].served, calls[0].status), (Some(204), None));
    assert!(rig.record.trace().text().contains("remove-runner dropped served=204"));
}

#[tokio::test(start_paused = true)]
async fn a_create_session_that_commits_then_answers_504_leaves_its_session_open_so_the_retry_conflicts() {
    let plan = once("create-session", GitHubFaultAction::CommitThenError { code: 504 });
    let rig = rig_with_faults(1, GitHubConfig::instant(), &plan);
    let set = rig.fake.create_scale_set("arc", 1, &["arc"]);
    let err = rig.client.create_message_session(set, "listener").await.unwrap_err();
    assert!(err.is_session_conflict(), "{err}");
    let sessions = rig.fake.sessions();
    assert_eq!(sessions.len(), 1, "the first attempt's session is open");
    assert_eq!(sessions[0].owner, "listener");
}

#[tokio::test(start_paused = true)]
async fn acquire_jobs_that_commits_then_fails_acquired_the_jobs_and_the_retry_acquires_none() {
    let rig =
        rig_with_faults(1, GitHubConfig::instant(), &once("acquire-jobs", GitHubFaultAction::CommitThenDrop));
    let set = rig.fake.create_scale_set("arc", 1, &["arc"]);
    let session = rig.session(set).await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    rig.poll(&session, 0).await.expect("JobAvailable");
    let token = &session.message_queue_access_token;
    let acquired = rig.client.acquire_jobs(set, token, &[job]).await.unwrap();
    assert_eq!(acquired, Vec::<i64>::new(), "the retry finds the job already acquired");
    let job = rig.fake.job(job).unwrap();
    assert_eq!((job.state, job.acquired_by), (JobState::Acquired, Some(set)));
}

#[tokio::test(start_paused = true)]
async fn a_delete_message_that_commits_then_fails_acknowledged_the_message() {
    let plan = once("delete-message", GitHubFaultAction::CommitThenError { code: 500 });
    let rig = rig_with_faults(1, GitHubConfig::instant(), &plan);
    let set = rig.fake.create_scale_set("arc", 1, &["arc"]);
    let session = rig.session(set).await;
    rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (message, _) = rig.poll(&session, 0).await.expect("a message");
    let (url, token) = (&session.message_queue_url, &session.message_queue_access_token);
    rig.client.delete_message(url, token, message.message_id).await.expect("the retry answers 204");
    let successor_view = rig.poll(&session, 0).await;
    assert!(successor_view.is_none(), "an acknowledged message is not delivered again");
}

#[tokio::test(start_paused = true)]
async fn a_drop_before_the_commit_changes_nothing_and_ends_in_a_transport_error() {
    let plan = FaultPlan {
        api: Vec::new(),
        github: vec![GitHubFault {
            operations: vec!["generate-jit-config".into()],
            probability: 1.0,
            window: None,
            action: GitHubFaultAction::Drop,
        }],
        network: Vec::new(),
        perturbations: Vec::new(),
    };
    let rig = rig_with_faults(1, GitHubConfig::instant(), &plan);
    let set = rig.fake.create_scale_set("arc", 1, &["arc"]);
    let err = rig.client.generate_jit_runner_config(&setting("r"), set).await.unwrap_err();
    assert!(err.is_transport(), "{err}");
    assert!(rig.fake.runners().is_empty());
    let calls = calls_of(&rig, "generate-jit-config");
    assert_eq!(calls.len(), 5, "the first attempt and four retries");
    assert!(calls.iter().all(|c| c.served.is_none() && c.status.is_none() && !c.committed_then_failed()));
}
