//! Graceful termination as the kubelet sees it through its lagged watch: SIGTERM after a delay, the
//! grace period, SIGKILL; and the window in which a runner whose pod is being deleted is still
//! connected to GitHub. The runner's model: on SIGTERM it stops taking jobs, cancels a running job
//! (reported canceled, reason runner-shutdown), deletes its session and exits 0; a job assigned
//! before the session is deleted is never acquired and fails as runner-lost.

use std::time::Duration;

use arc_sim::apiserver::LagRange;
use arc_sim::github::{EndReason, EventKind, GitHubConfig, JobResult, JobSpec};
use arc_sim::kubelet::{KubeletConfig, KubeletEventKind, StopCause};
use kube::api::{DeleteParams, PostParams};

use crate::kubelet::support::{Node, Setup, jit_pod, jit_pod_with_grace, node_with};

/// A node whose timings are fixed: watch lag `lag_ms`, SIGTERM 100 ms after the deletion is seen, a
/// runner that needs `stop_ms` to delete its session and `cancel_ms` to cancel a job; GitHub assigns
/// at once.
fn fixed_node(lag_ms: u64, stop_ms: u64, cancel_ms: u64) -> Node {
    let kubelet = KubeletConfig {
        pod_watch_lag: LagRange::fixed(lag_ms),
        sigterm_delay: LagRange::fixed(100),
        runner_stop: LagRange::fixed(stop_ms),
        runner_job_cancel: LagRange::fixed(cancel_ms),
        ..KubeletConfig::default()
    };
    let github = GitHubConfig {
        lost_runner_timeout_ms: 60_000,
        assignment_latency_ms_min: 0,
        assignment_latency_ms_max: 0,
        ..GitHubConfig::default()
    };
    node_with(Setup { kubelet, github, ..Setup::default() })
}

fn assigned_at(n: &Node, job: i64) -> Option<u64> {
    n.github_events().into_iter().find_map(|e| match e.kind {
        EventKind::JobAssigned { request_id, .. } if request_id == job => Some(e.at_ms),
        _ => None,
    })
}

fn stopped(n: &Node, pod: &str) -> Option<KubeletEventKind> {
    n.events_of(pod).into_iter().find(|e| matches!(e, KubeletEventKind::ContainerStopped { .. }))
}

/// Starts runner pod `name` (grace `grace` s) in scale set `set`, and lets it connect.
async fn started_runner(n: &Node, set: i64, name: &str, grace: i64) {
    n.jit_secret(set, name).await;
    n.pods.create(&PostParams::default(), &jit_pod_with_grace(name, grace)).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(n.events_of(name).iter().any(|e| matches!(e, KubeletEventKind::RunnerConnected { .. })));
}

#[tokio::test(start_paused = true)]
async fn sigterm_comes_after_the_watch_lag_and_the_kubelets_delay() {
    let n = fixed_node(400, 200, 1_000);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    started_runner(&n, set, "r1", 30).await;
    let deleted_at = n.now_ms();
    n.pods.delete("r1", &DeleteParams::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let seen = n.first("r1", |e| matches!(e, KubeletEventKind::Terminating { grace_seconds: 30 })).unwrap();
    let sigterm = n.first("r1", |e| matches!(e, KubeletEventKind::Sigterm { .. })).unwrap();
    assert!((deleted_at + 400..deleted_at + 420).contains(&seen), "seen {seen} ms, deleted {deleted_at} ms");
    assert_eq!(sigterm, seen + 100);
    let stop = n.first("r1", |e| matches!(e, KubeletEventKind::ContainerStopped { .. })).unwrap();
    assert_eq!(stop, sigterm + 200, "an idle runner stops once its session is deleted");
    assert!(matches!(
        stopped(&n, "r1"),
        Some(KubeletEventKind::ContainerStopped {
            exit_code: 0,
            cause: StopCause::PodDeleted,
            running_job: None,
            ..
        })
    ));
    assert!(n.apiserver.object("pods", "default", "r1").is_none(), "removed with grace 0");
}

#[tokio::test(start_paused = true)]
async fn a_job_assigned_before_sigterm_is_canceled_by_the_runners_shutdown() {
    let n = fixed_node(2_000, 200, 3_000);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    started_runner(&n, set, "r1", 30).await;
    n.pods.delete("r1", &DeleteParams::default()).await.unwrap();
    let job = n.github.submit_job(JobSpec::simple(&["set"], 600_000));
    n.acquire_all(set).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let sigterm = n.first("r1", |e| matches!(e, KubeletEventKind::Sigterm { .. })).unwrap();
    assert!(assigned_at(&n, job).unwrap() < sigterm, "assigned inside the watch lag");
    let ended = n.github.job(job).unwrap();
    assert_eq!(ended.result(), Some(JobResult::Canceled));
    assert_eq!(ended.end_reason(), Some(EndReason::RunnerShutdown));
    assert_eq!(ended.finished_ms, Some(sigterm + 3_000));
    assert!(matches!(
        stopped(&n, "r1"),
        Some(KubeletEventKind::ContainerStopped { exit_code: 0, cause: StopCause::PodDeleted, running_job: Some(j), .. }) if j == job
    ));
}

#[tokio::test(start_paused = true)]
async fn a_job_assigned_after_sigterm_is_never_acquired_and_fails_as_runner_lost() {
    let n = fixed_node(300, 3_000, 1_000);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    started_runner(&n, set, "r1", 30).await;
    n.pods.delete("r1", &DeleteParams::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let sigterm = n.first("r1", |e| matches!(e, KubeletEventKind::Sigterm { .. })).expect("SIGTERM by now");
    let job = n.github.submit_job(JobSpec::simple(&["set"], 60_000));
    n.acquire_all(set).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let assigned = assigned_at(&n, job).expect("the runner was still online");
    assert!(sigterm < assigned && assigned < sigterm + 3_000, "inside the shutdown window");
    assert!(!n.events_of("r1").iter().any(|e| matches!(e, KubeletEventKind::JobStarted { .. })));
    assert!(matches!(
        stopped(&n, "r1"),
        Some(KubeletEventKind::ContainerStopped { exit_code: 0, running_job: None, .. })
    ));
    tokio::time::sleep(Duration::from_secs(70)).await;
    assert_eq!(n.github.job(job).unwrap().end_reason(), Some(EndReason::RunnerLost));
}

#[tokio::test(start_paused = true)]
async fn a_runner_still_canceling_when_the_grace_period_ends_is_killed_and_its_job_lost() {
    let n = fixed_node(300, 200, 20_000);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    started_runner(&n, set, "r1", 5).await;
    let job = n.github.submit_job(JobSpec::simple(&["set"], 600_000));
    n.acquire_all(set).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(n.events_of("r1").iter().any(|e| matches!(e, KubeletEventKind::JobStarted { .. })));
    n.pods.delete("r1", &DeleteParams::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let sigterm = n.first("r1", |e| matches!(e, KubeletEventKind::Sigterm { .. })).unwrap();
    let sigkill = n.first("r1", |e| matches!(e, KubeletEventKind::Sigkill { .. })).unwrap();
    assert_eq!(sigkill, sigterm + 5_000, "the grace period counts from SIGTERM");
    assert!(matches!(
        stopped(&n, "r1"),
        Some(KubeletEventKind::ContainerStopped { exit_code: 137, cause: StopCause::PodDeleted, running_job: Some(j), .. }) if j == job
    ));
    let pod_gone = n.apiserver.object("pods", "default", "r1").is_none();
    assert!(pod_gone, "deleted with grace 0 after the kill");
    tokio::time::sleep(Duration::from_secs(70)).await;
    assert_eq!(n.github.job(job).unwrap().end_reason(), Some(EndReason::RunnerLost));
}

#[tokio::test(start_paused = true)]
async fn a_shorter_grace_from_a_second_delete_takes_effect_at_once() {
    let n = fixed_node(300, 200, 60_000);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    started_runner(&n, set, "r1", 30).await;
    n.github.submit_job(JobSpec::simple(&["set"], 600_000));
    n.acquire_all(set).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    n.pods.delete("r1", &DeleteParams::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let second = n.now_ms();
    n.pods.delete("r1", &DeleteParams::default().grace_period(3)).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    let sigkill = n.first("r1", |e| matches!(e, KubeletEventKind::Sigkill { .. })).unwrap();
    assert!((second + 3_300..second + 3_400).contains(&sigkill), "3 s after the kubelet saw it: {sigkill}");
}

#[tokio::test(start_paused = true)]
async fn a_pod_deleted_before_its_container_starts_is_removed_without_running() {
    let n = fixed_node(100, 200, 1_000);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(n.events_of("r1").contains(&KubeletEventKind::Scheduled));
    n.pods.delete("r1", &DeleteParams::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let events = n.events_of("r1");
    assert!(!events.iter().any(|e| matches!(e, KubeletEventKind::ContainerStarted { .. })), "{events:?}");
    assert!(events.contains(&KubeletEventKind::PodRemoved));
}
