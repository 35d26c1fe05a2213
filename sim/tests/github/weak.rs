//! Weak removal: off by default (RemoveRunner and assignment serialised, ARC-MODEL §6.3); when on,
//! RemoveRunner wins over an assignment whose JobStarted has not gone out, and the job fails.

use std::time::Duration;

use arc_controller::github::job_messages::JobMessage;
use arc_sim::github::{
    DelayRange, EndReason, EventKind, GitHubConfig, JobResult, JobSpec, JobState, RemoveOutcome, RunnerState,
    SessionEnded,
};

use crate::github::rig::{Rig, rig, types};

/// Assigns at once, announces JobStarted 5 s later, hands the job to the runner at once.
fn config(weak_removal: bool) -> GitHubConfig {
    GitHubConfig {
        assignment_latency_ms_min: 0,
        assignment_latency_ms_max: 0,
        job_started_delay: DelayRange::fixed(5_000),
        runner_pickup_delay: DelayRange::ZERO,
        weak_removal,
        ..GitHubConfig::instant()
    }
}

/// A runner holding an acquired job, 1 s after its assignment. Returns the runner id and the job.
async fn assigned(rig: &Rig) -> (arc_sim::github::RunnerSession, i64) {
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runner = rig.runner(set, "arc-runner-a").await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 60_000));
    rig.poll_and_acquire(set, &session, 0).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(rig.fake.runner(runner.runner_id()).unwrap().state, RunnerState::Busy { request_id: job });
    (runner, job)
}

fn remove_outcomes(rig: &Rig) -> Vec<RemoveOutcome> {
    rig.fake
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::RemoveRunner { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn by_default_remove_runner_refuses_an_assigned_runner_even_before_its_job_started_went_out() {
    let rig = rig(1, config(false));
    let (runner, job) = assigned(&rig).await;
    let err = rig.client.remove_runner(runner.runner_id()).await.unwrap_err();
    assert!(err.is_job_still_running(), "{err}");
    assert_eq!(remove_outcomes(&rig), [RemoveOutcome::JobStillRunning]);
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Running);
}

#[tokio::test(start_paused = true)]
async fn with_weak_removal_remove_runner_before_job_started_answers_204_and_the_job_fails() {
    let rig = rig(1, config(true));
    let (runner, job) = assigned(&rig).await;
    rig.client.remove_runner(runner.runner_id()).await.expect("204");
    assert_eq!(remove_outcomes(&rig), [RemoveOutcome::RemovedAssigned]);
    assert!(rig.fake.runner(runner.runner_id()).unwrap().is_removed());
    let ended = rig.fake.job(job).unwrap();
    assert_eq!(
        (ended.result(), ended.end_reason()),
        (Some(JobResult::Failed), Some(EndReason::RunnerRemoved))
    );
    assert_eq!(runner.complete_job(JobResult::Succeeded).unwrap_err(), SessionEnded::Removed);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let started = rig.fake.events().iter().any(|e| matches!(e.kind, EventKind::JobStartedSent { .. }));
    assert!(!started, "a job that never started is never announced as started");
}

#[tokio::test(start_paused = true)]
async fn with_weak_removal_the_listener_hears_of_the_failed_job_without_a_job_started() {
    let rig = rig(1, config(true));
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runner = rig.runner(set, "arc-runner-a").await;
    rig.fake.submit_job(JobSpec::simple(&["arc"], 60_000));
    let (last, _) = rig.poll_and_acquire(set, &session, 0).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    rig.client.remove_runner(runner.runner_id()).await.unwrap();
    let (_, batch) = rig.poll(&session, last).await.expect("the news");
    assert_eq!(types(&batch), ["JobAssigned", "JobCompleted"]);
    let JobMessage::Completed(done) = &batch[1] else { panic!("JobCompleted") };
    assert_eq!(done.result, "failed");
}

#[tokio::test(start_paused = true)]
async fn with_weak_removal_an_announced_job_still_refuses_removal() {
    let rig = rig(1, config(true));
    let (runner, job) = assigned(&rig).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let err = rig.client.remove_runner(runner.runner_id()).await.unwrap_err();
    assert!(err.is_job_still_running(), "{err}");
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Running);
}
