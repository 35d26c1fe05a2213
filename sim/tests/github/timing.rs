//! The timing model: call latency before and after the commit, the JobStarted delay and the runner's
//! pickup delay, all seeded.

use std::time::Duration;

use arc_controller::github::job_messages::JobMessage;
use arc_controller::github::wire::JitRunnerSetting;
use arc_sim::github::{
    CallLatency, DelayRange, EventKind, GitHubCall, GitHubConfig, JobResult, JobSpec, RunnerSession,
};

use crate::github::rig::{Rig, rig, types};

fn setting(name: &str) -> JitRunnerSetting {
    JitRunnerSetting { name: name.into(), work_folder: "_work".into() }
}

/// Instant, but JIT calls take 300 ms before their commit and 200 ms after.
fn slow_jit() -> GitHubConfig {
    let mut config = GitHubConfig::instant();
    config.latency.jit_config =
        CallLatency { before_commit: DelayRange::fixed(300), after_commit: DelayRange::fixed(200) };
    config
}

/// Instant, assigning at once, with the given JobStarted and pickup delays.
fn job_timing(job_started_ms: u64, pickup_ms: u64) -> GitHubConfig {
    GitHubConfig {
        assignment_latency_ms_min: 0,
        assignment_latency_ms_max: 0,
        job_started_delay: DelayRange::fixed(job_started_ms),
        runner_pickup_delay: DelayRange::fixed(pickup_ms),
        ..GitHubConfig::instant()
    }
}

/// Sim ms of the first event matching `pick`.
fn first_event_ms(rig: &Rig, pick: impl Fn(&EventKind) -> bool) -> Option<u64> {
    rig.fake.events().into_iter().find(|e| pick(&e.kind)).map(|e| e.at_ms)
}

#[tokio::test(start_paused = true)]
async fn a_call_commits_after_its_latency_before_and_is_answered_after_its_latency_after() {
    let rig = rig(1, slow_jit());
    let set = rig.fake.create_scale_set("arc", 1, &["arc"]);
    let client = rig.client.clone();
    let call = tokio::spawn(async move { client.generate_jit_runner_config(&setting("r"), set).await });
    tokio::time::sleep(Duration::from_millis(299)).await;
    assert!(rig.fake.runners().is_empty(), "not committed before 300 ms");
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert_eq!(rig.fake.runners().len(), 1, "committed at 300 ms");
    assert!(!call.is_finished(), "the answer is still on its way");
    call.await.unwrap().unwrap();
    assert_eq!(rig.ms(), 500);
    let (answered_ms, call) = rig.record.events_of::<GitHubCall>().into_iter().last().unwrap();
    assert_eq!((call.received_ms, answered_ms, call.status), (0, 500, Some(200)));
}

#[tokio::test(start_paused = true)]
async fn a_request_whose_client_gave_up_before_the_commit_still_commits() {
    let rig = rig(1, slow_jit());
    let set = rig.fake.create_scale_set("arc", 1, &["arc"]);
    let runner = setting("r");
    let call = rig.client.generate_jit_runner_config(&runner, set);
    assert!(tokio::time::timeout(Duration::from_millis(100), call).await.is_err(), "given up at 100 ms");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rig.fake.runners().len(), 1, "the request on the wire still registered the runner");
    assert!(rig.record.events_of::<GitHubCall>().iter().all(|(_, c)| c.operation != "generate-jit-config"));
}

/// How long each of six lookups takes under `seed` with the default latency.
async fn lookup_times(seed: u64) -> Vec<u64> {
    let rig = rig(seed, GitHubConfig::default());
    rig.client.get_runner_by_name("warm-up").await.unwrap();
    let mut times = Vec::new();
    for _ in 0..6 {
        let start = rig.ms();
        rig.client.get_runner_by_name("x").await.unwrap();
        times.push(rig.ms() - start);
    }
    times
}

#[tokio::test(start_paused = true)]
async fn default_latencies_are_seeded_per_call_and_lie_in_the_admin_class_range() {
    let a = lookup_times(7).await;
    assert_eq!(a, lookup_times(7).await, "the same seed, the same latencies");
    assert_ne!(a, lookup_times(8).await);
    assert!(a.iter().all(|ms| (30..=400).contains(ms)), "{a:?}: 20–250 before, 10–150 after");
    assert!(a.windows(2).any(|w| w[0] != w[1]), "{a:?}: drawn per call");
}

/// A scale set with a session, one connected runner and one job acquired at once. Returns the
/// session's queue URL and token, the runner and the job.
async fn acquired_job(
    rig: &Rig,
) -> (arc_controller::github::wire::RunnerScaleSetSession, RunnerSession, i64) {
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runner = rig.runner(set, "arc-runner-a").await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (_, acquired) = rig.poll_and_acquire(set, &session, 0).await;
    assert_eq!(acquired, [job]);
    (session, runner, job)
}

#[tokio::test(start_paused = true)]
async fn job_started_is_queued_for_the_listener_after_its_delay_not_at_assignment() {
    let rig = rig(1, job_timing(2_000, 0));
    let (_session, _runner, job) = acquired_job(&rig).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let assigned = first_event_ms(
        &rig,
        |k| matches!(k, EventKind::JobAssigned { request_id, .. } if *request_id == job),
    );
    let started = first_event_ms(
        &rig,
        |k| matches!(k, EventKind::JobStartedSent { request_id, .. } if *request_id == job),
    );
    let assigned = assigned.expect("assigned");
    assert_eq!(started, Some(assigned + 2_000));
}

#[tokio::test(start_paused = true)]
async fn a_listener_polling_meanwhile_sees_job_started_only_once_the_delay_has_passed() {
    let rig = rig(1, job_timing(2_000, 0));
    let (session, _runner, _job) = acquired_job(&rig).await;
    let (first, batch) = rig.poll(&session, 1).await.expect("JobAssigned");
    assert_eq!(types(&batch), ["JobAssigned"]);
    let polled_at = rig.ms();
    let (_, batch) = rig.poll(&session, first.message_id).await.expect("JobStarted");
    assert_eq!(types(&batch), ["JobStarted"]);
    assert_eq!(rig.ms(), polled_at + 2_000, "the assignment was at the acquisition's instant");
}

#[tokio::test(start_paused = true)]
async fn a_runner_process_gets_its_job_after_the_pickup_delay() {
    let rig = rig(1, job_timing(0, 700));
    let (_session, runner, job) = acquired_job(&rig).await;
    let start = rig.ms();
    let handed = runner.next_job().await.unwrap();
    assert_eq!((handed.request_id, rig.ms() - start), (job, 700));
    let picked = first_event_ms(
        &rig,
        |k| matches!(k, EventKind::JobPickedUp { request_id, .. } if *request_id == job),
    );
    assert_eq!(picked, Some(start + 700));
    assert_eq!(runner.next_job().await.unwrap().request_id, job, "asked again: at once");
    assert_eq!(rig.ms(), start + 700);
}

#[tokio::test(start_paused = true)]
async fn a_job_that_ends_before_its_job_started_went_out_announces_the_start_first() {
    let rig = rig(1, job_timing(60_000, 0));
    let (session, runner, job) = acquired_job(&rig).await;
    assert_eq!(runner.run_one_job().await.unwrap(), JobResult::Succeeded);
    let mut seen = Vec::new();
    let mut last = 1;
    while let Some((message, batch)) = rig.poll(&session, last).await {
        last = message.message_id;
        seen.extend(batch);
        if seen.iter().any(|j| matches!(j, JobMessage::Completed(_))) {
            break;
        }
    }
    assert_eq!(types(&seen), ["JobAssigned", "JobStarted", "JobCompleted"]);
    let started = first_event_ms(
        &rig,
        |k| matches!(k, EventKind::JobStartedSent { request_id, .. } if *request_id == job),
    );
    let completed = first_event_ms(
        &rig,
        |k| matches!(k, EventKind::JobCompleted { request_id, .. } if *request_id == job),
    );
    assert_eq!(started, completed, "sent with the completion, not 60 s after the assignment");
}
