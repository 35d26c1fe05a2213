//! Sessions, the long poll, message delivery, acquisition and statistics (ARC-MODEL §4.1, §6.5).

use std::time::Duration;

use arc_controller::github::job_messages::JobMessage;
use arc_controller::github::wire::MESSAGE_TYPE_JOB_MESSAGES;
use arc_sim::github::{GitHubConfig, JobSpec, JobState, RunnerSession};

use crate::github::rig::{Rig, rig, types};

#[tokio::test(start_paused = true)]
async fn an_empty_long_poll_answers_202_exactly_at_the_timeout() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let start = rig.ms();
    assert!(rig.poll(&session, 0).await.is_none());
    assert_eq!(rig.ms() - start, 50_000);
}

#[tokio::test(start_paused = true)]
async fn a_long_poll_answers_as_soon_as_a_job_arrives() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let fake = rig.fake.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(7_250)).await;
        fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    });
    let (message, jobs) = rig.poll(&session, 0).await.expect("a message");
    assert_eq!(rig.ms(), 7_250);
    assert_eq!(message.message_type, MESSAGE_TYPE_JOB_MESSAGES);
    assert_eq!(types(&jobs), ["JobAvailable"]);
    let stats = message.statistics.expect("statistics on every message");
    assert_eq!((stats.total_available_jobs, stats.total_assigned_jobs), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_second_session_conflicts_until_the_first_is_deleted() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let first = rig.session(set).await;
    let err = rig.client.create_message_session(set, "other").await.unwrap_err();
    assert!(err.is_session_conflict(), "{err}");
    rig.client.delete_message_session(set, &first.session_id).await.unwrap();
    let second = rig.session(set).await;
    assert_ne!(second.session_id, first.session_id);
    let gone = rig.client.delete_message_session(set, &first.session_id).await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
}

#[tokio::test(start_paused = true)]
async fn an_abandoned_session_stops_blocking_after_the_idle_expiry_but_a_polled_one_does_not() {
    let config = GitHubConfig { session_idle_expiry_ms: 120_000, ..GitHubConfig::instant() };
    let rig = rig(1, config);
    let set = rig.scale_set("arc").await;
    let polled = rig.session(set).await;
    for _ in 0..3 {
        assert!(rig.poll(&polled, 0).await.is_none());
    }
    assert!(rig.client.create_message_session(set, "successor").await.unwrap_err().is_session_conflict());
    tokio::time::sleep(Duration::from_millis(119_999)).await;
    assert!(rig.client.create_message_session(set, "successor").await.unwrap_err().is_session_conflict());
    tokio::time::sleep(Duration::from_millis(1)).await;
    let successor = rig.session(set).await;
    assert_eq!(successor.owner_name, "listener");
    let err =
        rig.client.get_message(&polled.message_queue_url, &polled.message_queue_access_token, 0, 1).await;
    assert!(err.unwrap_err().is_queue_token_expired(), "the abandoned session's token is dead");
}

#[tokio::test(start_paused = true)]
async fn an_expired_queue_token_gets_401_until_the_session_is_refreshed() {
    let config = GitHubConfig { queue_token_ttl_ms: 60_000, ..GitHubConfig::instant() };
    let rig = rig(1, config);
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let url = &session.message_queue_url;
    let expired = rig.client.get_message(url, &session.message_queue_access_token, 0, 1).await.unwrap_err();
    assert!(expired.is_queue_token_expired(), "{expired}");
    let ack = rig.client.delete_message(url, &session.message_queue_access_token, 1).await.unwrap_err();
    assert!(ack.is_queue_token_expired(), "{ack}");
    let acquire = rig.client.acquire_jobs(set, &session.message_queue_access_token, &[1]).await.unwrap_err();
    assert!(acquire.is_queue_token_expired(), "{acquire}");
    let refreshed = rig.client.refresh_message_session(set, &session.session_id).await.unwrap();
    assert_ne!(refreshed.message_queue_access_token, session.message_queue_access_token);
    rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    assert!(rig.poll(&refreshed, 0).await.is_some());
}

#[tokio::test(start_paused = true)]
async fn unacknowledged_messages_are_redelivered_to_the_next_session_and_acked_ones_are_not() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let first = rig.session(set).await;
    rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (message, _) = rig.poll(&first, 0).await.unwrap();
    assert!(rig.poll(&first, message.message_id).await.is_none(), "nothing newer");
    rig.client.delete_message_session(set, &first.session_id).await.unwrap();

    let second = rig.session(set).await;
    let (again, _) = rig.poll(&second, 0).await.unwrap();
    assert_eq!(again, message, "redelivered unchanged");
    let token = &second.message_queue_access_token;
    rig.client.delete_message(&second.message_queue_url, token, again.message_id).await.unwrap();
    rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (next, _) = rig.poll(&second, 0).await.unwrap();
    assert_eq!(next.message_id, message.message_id + 1, "monotonic ids; the acked one is gone");
}

/// Assumption `unacknowledged-messages=dropped`: the next session starts past what the last received.
#[tokio::test(start_paused = true)]
async fn with_unacknowledged_messages_dropped_the_next_session_does_not_get_them() {
    let rig = rig(1, GitHubConfig { redeliver_unacknowledged: false, ..GitHubConfig::instant() });
    let set = rig.scale_set("arc").await;
    let first = rig.session(set).await;
    rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (message, _) = rig.poll(&first, 0).await.unwrap();
    rig.client.delete_message_session(set, &first.session_id).await.unwrap();

    let second = rig.session(set).await;
    rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (next, _) = rig.poll(&second, 0).await.unwrap();
    assert_eq!(next.message_id, message.message_id + 1, "the unacknowledged message is gone");
}

#[tokio::test(start_paused = true)]
async fn only_jobs_offered_to_a_scale_set_can_be_acquired_by_it_and_statistics_follow() {
    let rig = rig(1, GitHubConfig::instant());
    let (linux, gpu) = (rig.scale_set("linux").await, rig.scale_set("gpu").await);
    let (linux_session, gpu_session) = (rig.session(linux).await, rig.session(gpu).await);
    let job = rig.fake.submit_job(JobSpec::simple(&["linux"], 1_000));
    let stolen = rig.client.acquire_jobs(gpu, &gpu_session.message_queue_access_token, &[job]).await.unwrap();
    assert!(stolen.is_empty(), "gpu was never offered the job");
    let (_, acquired) = rig.poll_and_acquire(linux, &linux_session, 0).await;
    assert_eq!(acquired, vec![job]);
    let again =
        rig.client.acquire_jobs(linux, &linux_session.message_queue_access_token, &[job]).await.unwrap();
    assert!(again.is_empty(), "already acquired");

    let (message, jobs) = rig.poll(&linux_session, 0).await.unwrap();
    assert_eq!(types(&jobs), ["JobAssigned"]);
    let stats = message.statistics.unwrap();
    assert_eq!((stats.total_available_jobs, stats.total_acquired_jobs, stats.total_assigned_jobs), (0, 1, 1));
    assert_eq!(rig.fake.job(job).unwrap().acquired_by, Some(linux));
}

/// Two idle runners and two 30-second jobs, both acquired by a listener that then sends capacity 1;
/// 10 s later.
async fn two_jobs_acquired_under_capacity_one(config: GitHubConfig) -> (Rig, [RunnerSession; 2]) {
    let rig = rig(1, config);
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runners = [rig.runner(set, "a").await, rig.runner(set, "b").await];
    let jobs = [
        rig.fake.submit_job(JobSpec::simple(&["arc"], 30_000)),
        rig.fake.submit_job(JobSpec::simple(&["arc"], 30_000)),
    ];
    let (message, batch) = rig.poll(&session, 0).await.unwrap();
    assert_eq!(batch.len(), 2);
    let token = &session.message_queue_access_token;
    rig.client.acquire_jobs(set, token, &jobs).await.unwrap();
    rig.client.get_message(&session.message_queue_url, token, message.message_id, 1).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    (rig, runners)
}

fn running(rig: &Rig) -> usize {
    rig.fake.jobs().iter().filter(|j| j.state == JobState::Running).count()
}

#[tokio::test(start_paused = true)]
async fn the_listeners_max_capacity_caps_jobs_running_at_once() {
    let (rig, [a, b]) = two_jobs_acquired_under_capacity_one(GitHubConfig::instant()).await;
    assert_eq!(running(&rig), 1, "capacity 1: one job runs, one waits");
    let first = if rig.fake.runner(a.runner_id()).unwrap().job().is_some() { a } else { b };
    first.run_one_job().await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(running(&rig), 1, "the waiting job starts once the first is done");
    let completed = rig.fake.jobs().iter().filter(|j| j.is_completed()).count();
    assert_eq!(completed, 1);
}

/// Assumption `capacity-header=advisory`: the capacity a listener sends limits nothing.
#[tokio::test(start_paused = true)]
async fn with_the_capacity_header_advisory_both_jobs_run_at_once() {
    let advisory = GitHubConfig { honour_max_capacity: false, ..GitHubConfig::instant() };
    let (rig, _runners) = two_jobs_acquired_under_capacity_one(advisory).await;
    assert_eq!(running(&rig), 2, "capacity 1 sent, not honoured");
}

#[tokio::test(start_paused = true)]
async fn a_job_travels_through_every_message_type_with_its_runner_named() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runner = rig.runner(set, "arc-runner-x").await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 4_000));
    let (first, _) = rig.poll_and_acquire(set, &session, 0).await;
    let handle = tokio::spawn(async move { runner.run_one_job().await });
    let mut seen = Vec::new();
    let mut last = first;
    while !seen.iter().any(|j| matches!(j, JobMessage::Completed(_))) {
        let (message, jobs) = rig.poll(&session, last).await.expect("more messages");
        last = message.message_id;
        seen.extend(jobs);
    }
    assert_eq!(types(&seen), ["JobAssigned", "JobStarted", "JobCompleted"]);
    let JobMessage::Started(started) = &seen[1] else { panic!("JobStarted") };
    assert_eq!((started.runner_name.as_str(), started.base.runner_request_id), ("arc-runner-x", job));
    assert!(started.base.runner_assign_time.is_some() && started.base.queue_time.is_some());
    let JobMessage::Completed(done) = &seen[2] else { panic!("JobCompleted") };
    assert_eq!((done.result.as_str(), done.runner_name.as_str()), ("succeeded", "arc-runner-x"));
    assert_eq!(handle.await.unwrap().unwrap(), arc_sim::github::JobResult::Succeeded);
}

#[tokio::test(start_paused = true)]
async fn a_listener_killed_mid_poll_does_not_keep_its_session_alive() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let poll = rig.client.get_message(&session.message_queue_url, &session.message_queue_access_token, 0, 1);
    assert!(tokio::time::timeout(Duration::from_secs(10), poll).await.is_err(), "killed after 10 s");
    assert_eq!(rig.fake.sessions()[0].polls_in_flight, 0);
    tokio::time::sleep(Duration::from_secs(120)).await;
    rig.session(set).await;
}
