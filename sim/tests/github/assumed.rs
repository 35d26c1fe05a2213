//! The fake under the alternatives of its assumptions that change its behaviour over time
//! (`arcsim list assumptions`): a dead runner noticed late, reads from a stale view, unconnected
//! registrations that expire, and sessions that end with their queue token. Each default is covered
//! by the other files here; these check what the other alternative does.

use std::time::Duration;

use arc_controller::github::wire::JitRunnerSetting;
use arc_sim::github::{
    Assumed, ConnectRefused, EndReason, EventKind, GitHubConfig, JobSpec, JobState, Operation, RemovalReason,
    RunnerState,
};

use crate::github::rig::{Rig, rig};

/// The instant fake under the alternative `choice`, with a 60 s lost-runner timeout.
fn assuming(choice: &str) -> GitHubConfig {
    let mut config = GitHubConfig { lost_runner_timeout_ms: 60_000, ..GitHubConfig::instant() };
    Assumed::parse([choice]).unwrap().apply(&mut config);
    config
}

/// Registers runner `name` without connecting it; its JIT config.
async fn registered(rig: &Rig, set: i64, name: &str) -> arc_controller::github::wire::JitRunnerConfig {
    let setting = JitRunnerSetting { name: name.into(), work_folder: String::new() };
    rig.client.generate_jit_runner_config(&setting, set).await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_runner_that_died_idle_is_assigned_until_noticed_and_its_job_is_lost() {
    let rig = rig(1, assuming("dead-runner-detection=after-3-min"));
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let runner = rig.runner(set, "r").await;
    runner.process_died();
    assert_eq!(rig.fake.runner(runner.runner_id()).unwrap().state, RunnerState::Idle, "not noticed yet");
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 10_000));
    rig.poll_and_acquire(set, &session, 0).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Running, "dispatched to the dead runner");
    tokio::time::sleep(Duration::from_secs(180)).await;
    let noticed = rig.fake.events().into_iter().find_map(|e| match e.kind {
        EventKind::DeadRunnerNoticed { lost_job, .. } => Some((e.at_ms, lost_job)),
        _ => None,
    });
    assert_eq!(noticed, Some((180_000, Some(job))));
    assert!(matches!(rig.fake.runner(runner.runner_id()).unwrap().state, RunnerState::Lost { .. }));
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(rig.fake.job(job).unwrap().end_reason(), Some(EndReason::RunnerLost));
    assert!(rig.fake.runner(runner.runner_id()).unwrap().is_removed());
}

#[tokio::test(start_paused = true)]
async fn a_dead_idle_runner_goes_offline_when_noticed_and_a_new_process_may_take_over_before() {
    let rig = rig(1, assuming("dead-runner-detection=after-3-min"));
    let set = rig.scale_set("arc").await;
    let jit = registered(&rig, set, "r").await;
    let first = rig.fake.connect_runner(&jit.encoded_jit_config).unwrap();
    first.process_died();
    let second = rig.fake.connect_runner(&jit.encoded_jit_config).expect("replaces the dead process");
    assert_eq!(rig.fake.runner(second.runner_id()).unwrap().connections, 2);
    second.process_died();
    tokio::time::sleep(Duration::from_secs(181)).await;
    assert_eq!(rig.fake.runner(second.runner_id()).unwrap().state, RunnerState::Offline);
}

#[tokio::test(start_paused = true)]
async fn by_default_a_runner_that_died_idle_is_offline_at_once() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let runner = rig.runner(set, "r").await;
    runner.process_died();
    assert_eq!(rig.fake.runner(runner.runner_id()).unwrap().state, RunnerState::Offline);
}

#[tokio::test(start_paused = true)]
async fn stale_reads_find_a_removed_runner_until_the_view_is_30_s_old() {
    let rig = rig(1, assuming("service-reads=stale-30s"));
    let set = rig.scale_set("arc").await;
    let jit = registered(&rig, set, "r").await;
    assert_eq!(rig.client.get_runner_by_name("r").await.unwrap(), Some(jit.runner.clone()), "view taken");
    rig.client.remove_runner(jit.runner.id).await.unwrap();
    assert_eq!(rig.client.get_runner(jit.runner.id).await.unwrap(), jit.runner, "the view is stale");
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(rig.client.get_runner(jit.runner.id).await.unwrap_err().is_runner_not_found());
    assert_eq!(rig.client.get_runner_by_name("r").await.unwrap(), None);
}

#[tokio::test(start_paused = true)]
async fn stale_reads_give_a_message_the_statistics_of_its_view() {
    let rig = rig(1, assuming("service-reads=stale-30s"));
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    assert_eq!(session.statistics.unwrap().total_available_jobs, 0);
    rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (message, _) = rig.poll(&session, 0).await.expect("a message");
    assert_eq!(message.statistics.unwrap().total_available_jobs, 0, "the session's view, taken before");
    tokio::time::sleep(Duration::from_secs(30)).await;
    rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (later, _) = rig.poll(&session, message.message_id).await.expect("a message");
    assert_eq!(later.statistics.unwrap().total_available_jobs, 2, "a fresh view");
}

#[tokio::test(start_paused = true)]
async fn an_unconnected_registration_expires_and_its_process_is_refused() {
    let rig = rig(1, assuming("registration-lifetime=unconnected-5-min"));
    let set = rig.scale_set("arc").await;
    let idle = registered(&rig, set, "never").await;
    let connected = rig.runner(set, "early").await;
    tokio::time::sleep(Duration::from_secs(301)).await;
    let expired = rig.fake.runner(idle.runner.id).unwrap();
    assert!(matches!(expired.state, RunnerState::Removed { reason: RemovalReason::Expired, .. }));
    let refused = rig.fake.connect_runner(&idle.encoded_jit_config).unwrap_err();
    assert_eq!(refused, ConnectRefused::Removed);
    assert_eq!(rig.fake.runner(connected.runner_id()).unwrap().state, RunnerState::Idle, "it connected");
}

#[tokio::test(start_paused = true)]
async fn a_session_that_ended_with_its_token_cannot_be_refreshed_and_frees_the_scale_set() {
    let config = GitHubConfig { queue_token_ttl_ms: 60_000, ..assuming("session-refresh=ends-with-token") };
    let rig = rig(1, config);
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(rig.client.create_message_session(set, "other").await.unwrap_err().is_session_conflict());
    tokio::time::sleep(Duration::from_secs(30)).await;
    let gone = rig.client.refresh_message_session(set, &session.session_id).await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
    rig.session(set).await;
}

#[tokio::test(start_paused = true)]
async fn with_acquisition_on_delivery_a_received_offer_is_the_scale_sets_without_acquire_jobs() {
    let rig = rig(1, assuming("job-acquisition=on-delivery"));
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    rig.poll(&session, 0).await.expect("the offer");
    let acquired = rig.fake.job(job).unwrap();
    assert_eq!((acquired.state, acquired.acquired_by), (JobState::Acquired, Some(set)));
    let token = &session.message_queue_access_token;
    assert_eq!(rig.client.acquire_jobs(set, token, &[job]).await.unwrap(), Vec::<i64>::new(), "a no-op");
    rig.runner(set, "r").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Running);
}

#[tokio::test(start_paused = true)]
async fn an_acquired_job_no_runner_takes_is_offered_again_every_5_min() {
    let rig = rig(1, assuming("unstarted-dispatch=reoffered-every-5-min"));
    let set = rig.scale_set("arc").await;
    let session = rig.session(set).await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 1_000));
    let (first, acquired) = rig.poll_and_acquire(set, &session, 0).await;
    assert_eq!(acquired, [job]);
    tokio::time::sleep(Duration::from_secs(301)).await;
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Queued, "offered again");
    let (_, again) = rig.poll_and_acquire(set, &session, first).await;
    assert_eq!(again, [job], "the JobAvailable comes again and the job can be acquired anew");
    rig.runner(set, "r").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(rig.fake.job(job).unwrap().state, JobState::Running);
    tokio::time::sleep(Duration::from_secs(300)).await;
    assert_ne!(rig.fake.job(job).unwrap().state, JobState::Queued, "a taken job is not offered again");
}

#[tokio::test(start_paused = true)]
async fn a_metered_token_is_refused_403_with_its_reset_until_the_hour_is_over() {
    let rig = rig(1, assuming("rest-rate-limits=shared-installation"));
    let set = rig.scale_set("arc").await;
    for _ in 0..499 {
        rig.client.list_runners().await.expect("within the budget");
    }
    let refused = rig.client.create_registration_token().await.unwrap_err();
    assert_eq!(refused.status(), Some(403), "{refused}");
    assert!(refused.to_string().contains("API rate limit exceeded"), "{refused}");
    rig.session(set).await;
    assert_eq!(
        rig.fake.request_count(Operation::RegistrationToken, 403),
        1,
        "the service's calls spend nothing"
    );
    tokio::time::sleep(Duration::from_secs(3_600)).await;
    rig.client.create_registration_token().await.expect("a new hour");
}

#[tokio::test(start_paused = true)]
async fn unmetered_rest_is_never_refused_for_volume() {
    let rig = rig(1, GitHubConfig::instant());
    for _ in 0..600 {
        rig.client.list_runners().await.expect("unmetered");
    }
}
