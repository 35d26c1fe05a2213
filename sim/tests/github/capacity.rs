//! `X-ScaleSetMaxCapacity` on acquisition: AcquireJobs never leaves a scale set holding more jobs than
//! its listener's last capacity; the jobs it leaves are offered again when there is room.

use std::time::Duration;

use arc_controller::github::job_messages::JobMessage;
use arc_controller::github::wire::RunnerScaleSetSession;
use arc_sim::github::{EventKind, GitHubConfig, JobSpec, JobState};

use crate::github::rig::{Rig, rig};

/// One long poll carrying `capacity`; the JobAvailable ids in the message (empty on 202).
async fn poll_available(
    rig: &Rig,
    session: &RunnerScaleSetSession,
    last: i64,
    capacity: u32,
) -> (i64, Vec<i64>) {
    let (url, token) = (&session.message_queue_url, &session.message_queue_access_token);
    let Some(message) = rig.client.get_message(url, token, last, capacity).await.unwrap() else {
        return (last, Vec::new());
    };
    rig.client.delete_message(url, token, message.message_id).await.unwrap();
    let jobs = JobMessage::parse_batch(&message.body).unwrap();
    let available = jobs
        .iter()
        .filter_map(|j| match j {
            JobMessage::Available(a) => Some(a.base.runner_request_id),
            _ => None,
        })
        .collect();
    (message.message_id, available)
}

#[tokio::test(start_paused = true)]
async fn acquisition_never_takes_more_jobs_than_the_capacity_last_sent() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let jobs: Vec<i64> = (0..3).map(|_| rig.fake.submit_job(JobSpec::simple(&["arc"], 10_000))).collect();
    let (_, available) = poll_available(&rig, &session, 0, 2).await;
    assert_eq!(available, jobs);
    let token = &session.message_queue_access_token;
    let acquired = rig.client.acquire_jobs(set, token, &jobs).await.unwrap();
    assert_eq!(acquired, jobs[..2], "capacity 2: the third stays queued");
    assert_eq!(rig.fake.job(jobs[2]).unwrap().state, JobState::Queued);
    let deferred = rig.fake.events().into_iter().any(|e| {
        matches!(e.kind, EventKind::AcquireDeferred { request_id, max_capacity: 2, .. } if request_id == jobs[2])
    });
    assert!(deferred, "the deferral is in the record");
    assert_eq!(rig.fake.statistics(set).unwrap().total_assigned_jobs, 2);
}

#[tokio::test(start_paused = true)]
async fn a_job_left_for_capacity_is_offered_again_once_a_job_of_the_scale_set_ends() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runner = rig.runner(set, "a").await;
    let jobs: Vec<i64> = (0..2).map(|_| rig.fake.submit_job(JobSpec::simple(&["arc"], 3_000))).collect();
    let (last, available) = poll_available(&rig, &session, 0, 1).await;
    let token = &session.message_queue_access_token;
    assert_eq!(rig.client.acquire_jobs(set, token, &available).await.unwrap(), [jobs[0]]);
    runner.run_one_job().await.unwrap();
    let mut offered_again = Vec::new();
    let mut last = last;
    while offered_again.is_empty() {
        let (id, available) = poll_available(&rig, &session, last, 1).await;
        last = id;
        offered_again = available;
    }
    assert_eq!(offered_again, [jobs[1]]);
    assert_eq!(rig.client.acquire_jobs(set, token, &offered_again).await.unwrap(), [jobs[1]]);
}

#[tokio::test(start_paused = true)]
async fn a_higher_capacity_offers_the_left_jobs_again_at_once() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let jobs: Vec<i64> = (0..2).map(|_| rig.fake.submit_job(JobSpec::simple(&["arc"], 3_000))).collect();
    let (last, available) = poll_available(&rig, &session, 0, 1).await;
    let token = &session.message_queue_access_token;
    assert_eq!(rig.client.acquire_jobs(set, token, &available).await.unwrap(), [jobs[0]]);
    let start = rig.ms();
    let (_, again) = poll_available(&rig, &session, last, 2).await;
    assert_eq!((again, rig.ms()), (vec![jobs[1]], start), "re-offered as the poll raised the capacity");
    tokio::time::sleep(Duration::from_millis(1)).await;
}
