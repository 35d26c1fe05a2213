//! RemoveRunner against job assignment (ARC-MODEL §6.3, §8.3): serialised per runner, so exactly one
//! wins, and which one depends on the seeded assignment latency.

use std::time::Duration;

use arc_sim::github::{EventKind, GitHubConfig, JobSpec, JobState, RemoveOutcome, RunnerState};

use crate::github::rig::rig;

#[derive(Debug, PartialEq, Eq)]
enum Winner {
    Removal,
    Assignment,
}

/// One runner idle, one job acquired at t0; RemoveRunner at t0 + 1.1 s while the service assigns
/// after a latency drawn from [200 ms, 2 s].
async fn race(seed: u64) -> Winner {
    let rig = rig(seed, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let runner = rig.runner(set, "arc-runner-1").await;
    let session = rig.session(set).await;
    let job = rig.fake.submit_job(JobSpec::simple(&["arc"], 60_000));
    let (_, acquired) = rig.poll_and_acquire(set, &session, 0).await;
    assert_eq!(acquired, vec![job]);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let removal = rig.client.remove_runner(runner.runner_id()).await;
    tokio::time::sleep(Duration::from_secs(10)).await;

    let assigned_to_runner = rig.fake.events().iter().any(|e| {
        matches!(e.kind, EventKind::JobAssigned { request_id, runner_id } if request_id == job && runner_id == runner.runner_id())
    });
    let state = rig.fake.runner(runner.runner_id()).unwrap().state;
    let job_state = rig.fake.job(job).unwrap().state;
    match removal {
        Ok(()) => {
            assert!(!assigned_to_runner, "seed {seed}: a removed runner got the job");
            assert!(matches!(state, RunnerState::Removed { .. }), "seed {seed}: {state:?}");
            assert_eq!(job_state, JobState::Acquired, "seed {seed}: the job waits for another runner");
            assert!(runner.next_job().await.is_err(), "seed {seed}: the removed runner's process is told");
            Winner::Removal
        }
        Err(e) => {
            assert!(e.is_job_still_running(), "seed {seed}: {e}");
            assert!(assigned_to_runner, "seed {seed}: refused without an assignment");
            assert_eq!(state, RunnerState::Busy { request_id: job }, "seed {seed}");
            assert_eq!(job_state, JobState::Running, "seed {seed}");
            assert_eq!(runner.next_job().await.unwrap().request_id, job);
            Winner::Assignment
        }
    }
}

#[tokio::test(start_paused = true)]
async fn remove_runner_and_assignment_race_resolves_both_ways_across_seeds_and_never_both() {
    let mut removals = 0;
    let mut assignments = 0;
    for seed in 0..200 {
        match race(seed).await {
            Winner::Removal => removals += 1,
            Winner::Assignment => assignments += 1,
        }
    }
    assert!(removals > 20 && assignments > 20, "removals {removals}, assignments {assignments}");
}

#[tokio::test(start_paused = true)]
async fn the_same_seed_resolves_the_race_the_same_way_with_the_same_trace() {
    let run = |seed| async move {
        let winner = race(seed).await;
        (winner, seed)
    };
    for seed in [3, 77, 1234] {
        assert_eq!(run(seed).await, run(seed).await);
    }
    let trace_of = |seed| async move {
        let rig = crate::github::rig::rig(seed, GitHubConfig::instant());
        let set = rig.scale_set("arc").await;
        let _runner = rig.runner(set, "r").await;
        let session = rig.session(set).await;
        rig.fake.submit_job(JobSpec::simple(&["arc"], 5_000));
        rig.poll_and_acquire(set, &session, 0).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        rig.record.trace().text()
    };
    let (a, b) = (trace_of(42).await, trace_of(42).await);
    assert_eq!(a, b);
    assert!(a.contains("github job-assigned"), "{a}");
}

#[tokio::test(start_paused = true)]
async fn remove_outcomes_are_logged_with_their_sim_time() {
    let rig = rig(1, GitHubConfig::instant());
    let set = rig.scale_set("arc").await;
    let runner = rig.runner(set, "r").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    rig.client.remove_runner(runner.runner_id()).await.unwrap();
    rig.client.remove_runner(runner.runner_id()).await.unwrap();
    let outcomes: Vec<(u64, RemoveOutcome)> = rig
        .fake
        .events()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::RemoveRunner { outcome, .. } => Some((e.at_ms, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes, vec![(3_000, RemoveOutcome::Removed), (3_000, RemoveOutcome::Unknown)]);
}
