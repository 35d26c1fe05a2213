//! Runner registration and the runner process life cycle (ARC-MODEL §6.2, §6.4).

use std::time::Duration;

use arc_controller::github::job_messages::JobMessage;
use arc_controller::github::wire::JitRunnerSetting;
use arc_sim::github::{
    ConnectRefused, EndReason, GitHubConfig, JobResult, JobSpec, JobState, RemovalReason, RunnerState,
    SessionEnded,
};

use crate::github::rig::rig;

#[tokio::test(start_paused = true)]
async fn a_jit_config_for_a_taken_name_is_409_agent_exists_and_the_name_can_be_looked_up() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let setting = JitRunnerSetting { name: "arc-runner-a".into(), work_folder: "_work".into() };
    let jit = rig.client.generate_jit_runner_config(&setting, set).await.unwrap();
    assert_eq!((jit.runner.name.as_str(), jit.runner.runner_scale_set_id), ("arc-runner-a", set));
    let err = rig.client.generate_jit_runner_config(&setting, set).await.unwrap_err();
    assert!(err.is_agent_exists(), "{err}");
    let found = rig.client.get_runner_by_name("arc-runner-a").await.unwrap().expect("registered");
    assert_eq!(found, jit.runner);
    assert_eq!(rig.client.get_runner(jit.runner.id).await.unwrap(), jit.runner);
    assert_eq!(rig.client.get_runner_by_name("nobody").await.unwrap(), None);
    assert_eq!(
        rig.fake.runner(jit.runner.id).unwrap().state,
        RunnerState::Offline,
        "registered, not connected"
    );

    rig.client.remove_runner(jit.runner.id).await.unwrap();
    assert!(rig.client.get_runner(jit.runner.id).await.unwrap_err().is_runner_not_found());
    let again = rig.client.generate_jit_runner_config(&setting, set).await.unwrap();
    assert_ne!(again.runner.id, jit.runner.id, "the name is free once the runner is removed");
}

#[tokio::test(start_paused = true)]
async fn a_removed_runner_is_refused_on_connect_and_never_gets_a_job() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let setting = JitRunnerSetting { name: "r".into(), work_folder: String::new() };
    let jit = rig.client.generate_jit_runner_config(&setting, set).await.unwrap();
    rig.client.remove_runner(jit.runner.id).await.unwrap();
    assert_eq!(rig.fake.connect_runner(&jit.encoded_jit_config).unwrap_err(), ConnectRefused::Removed);
    assert_eq!(rig.fake.connect_runner("garbage").unwrap_err(), ConnectRefused::InvalidConfig);
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    rig.poll_and_acquire(set, &session, 0).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Acquired);
}

#[tokio::test(start_paused = true)]
async fn a_process_that_dies_idle_leaves_its_runner_offline_and_may_reconnect() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let setting = JitRunnerSetting { name: "r".into(), work_folder: String::new() };
    let jit = rig.client.generate_jit_runner_config(&setting, set).await.unwrap();
    let first = rig.fake.connect_runner(&jit.encoded_jit_config).unwrap();
    assert_eq!(
        rig.fake.connect_runner(&jit.encoded_jit_config).unwrap_err(),
        ConnectRefused::AlreadyConnected
    );
    first.process_died();
    assert_eq!(rig.fake.runner(first.runner_id()).unwrap().state, RunnerState::Offline);
    let second = rig.fake.connect_runner(&jit.encoded_jit_config).unwrap();
    assert_eq!(first.next_job().await.unwrap_err(), SessionEnded::Disconnected, "the old handle is stale");
    assert_eq!(rig.fake.runner(second.runner_id()).unwrap().connections, 2);
}

#[tokio::test(start_paused = true)]
async fn a_busy_runner_whose_process_dies_keeps_its_job_until_the_lost_runner_timeout() {
    let config = GitHubConfig { lost_runner_timeout_ms: 30_000, ..GitHubConfig::instant() };
    let rig = rig(1, config);
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runner = rig.runner(set, "r").await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 600_000));
    let (last, _) = rig.poll_and_acquire(set, &session, 0).await;
    runner.next_job().await.unwrap();
    let died_at = rig.ms();
    runner.process_died();

    tokio::time::sleep(Duration::from_millis(29_999)).await;
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Running, "still running until the timeout");
    assert!(rig.client.remove_runner(runner.runner_id()).await.unwrap_err().is_job_still_running());
    tokio::time::sleep(Duration::from_millis(2)).await;

    let lost = rig.fake.job(job).unwrap();
    assert_eq!(lost.state, JobState::Completed { result: JobResult::Failed, reason: EndReason::RunnerLost });
    assert_eq!(lost.finished_ms, Some(died_at + 30_000));
    let state = rig.fake.runner(runner.runner_id()).unwrap().state;
    assert!(matches!(state, RunnerState::Removed { reason: RemovalReason::Lost, .. }), "{state:?}");
    rig.client.remove_runner(runner.runner_id()).await.expect("204 for a runner that is gone");
    let mut messages = Vec::new();
    let mut last = last;
    while let Some((message, jobs)) = rig.poll(&session, last).await {
        last = message.message_id;
        messages.extend(jobs);
        if messages.iter().any(|m| matches!(m, JobMessage::Completed(_))) {
            break;
        }
    }
    let Some(JobMessage::Completed(done)) = messages.last() else { panic!("JobCompleted, got {messages:?}") };
    assert_eq!(done.result, "failed");
}

#[tokio::test(start_paused = true)]
async fn an_ephemeral_runner_deregisters_after_its_job_and_a_canceled_job_ends_at_once() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runner = rig.runner(set, "r").await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 600_000));
    rig.poll_and_acquire(set, &session, 0).await;
    let worker = runner.clone();
    let run = tokio::spawn(async move { worker.run_one_job().await });
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Running);
    rig.fake.cancel_job(job).unwrap();
    assert_eq!(run.await.unwrap(), Ok(JobResult::Canceled));
    let ended = rig.fake.job(job).unwrap();
    assert_eq!(ended.state, JobState::Completed { result: JobResult::Canceled, reason: EndReason::Canceled });
    let state = rig.fake.runner(runner.runner_id()).unwrap().state;
    assert!(matches!(state, RunnerState::Removed { reason: RemovalReason::Deregistered, .. }), "{state:?}");
    assert_eq!(runner.next_job().await.unwrap_err(), SessionEnded::Removed);
    assert!(rig.fake.cancel_job(job).is_err(), "already over");
}

#[tokio::test(start_paused = true)]
async fn a_deprecated_runner_version_is_refused_and_stays_registered() {
    let config = GitHubConfig { runner_version_deprecated: true, ..GitHubConfig::instant() };
    let rig = rig(1, config);
    let set = rig.scale_set("arc").await;
    let setting = JitRunnerSetting { name: "old".into(), work_folder: String::new() };
    let jit = rig.client.generate_jit_runner_config(&setting, set).await.unwrap();
    assert_eq!(
        rig.fake.connect_runner(&jit.encoded_jit_config).unwrap_err(),
        ConnectRefused::VersionDeprecated
    );
    assert_eq!(rig.fake.runner(jit.runner.id).unwrap().state, RunnerState::Offline);
}

#[tokio::test(start_paused = true)]
async fn deleting_a_scale_set_is_refused_while_a_runner_has_a_job_and_then_requeues_its_waiting_jobs() {
    let rig = rig(1, GitHubConfig::instant());
    let (a, b) = (rig.scale_set("a").await, rig.scale_set("b").await);
    rig.client
        .update_runner_scale_set(
            b,
            &arc_controller::github::wire::RunnerScaleSet {
                labels: vec![arc_controller::github::wire::Label::system("a")],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let session = rig.session(a).await;
    let runner = rig.runner(a, "busy").await;
    let running = rig.fake.submit_job(JobSpec::simple(&["a"], 60_000));
    let (last, _) = rig.poll_and_acquire(a, &session, 0).await;
    runner.next_job().await.unwrap();
    let waiting = rig.fake.submit_job(JobSpec::simple(&["a"], 60_000));
    rig.poll_and_acquire(a, &session, last).await;
    assert_eq!(rig.client.delete_runner_scale_set(a).await.unwrap_err().status(), Some(400));
    runner.complete_job(JobResult::Succeeded).unwrap();
    rig.client.delete_runner_scale_set(a).await.unwrap();
    assert!(rig.client.get_runner_scale_set_by_id(a).await.unwrap_err().is_not_found());
    let job = rig.fake.job(waiting).unwrap();
    assert_eq!((job.state, job.offered_to.into_iter().collect::<Vec<_>>()), (JobState::Queued, vec![b]));
    assert!(rig.fake.job(running).unwrap().is_completed());
}
