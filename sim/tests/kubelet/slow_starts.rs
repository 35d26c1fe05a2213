//! Slow starts (issue 42, item 3): a failed image pull reported `ErrImagePull` and then
//! `ImagePullBackOff` until the image backoff lets the kubelet pull again; a slow pull; a runner that
//! boots after its container runs, so its pod is Running before it is online, and that a removal
//! during the boot turns away.

use std::time::Duration;

use arc_sim::apiserver::LagRange;
use arc_sim::kubelet::{KubeletConfig, KubeletEventKind, SlowStarts};
use kube::api::PostParams;
use serde_json::Value;

use crate::kubelet::support::{Node, Setup, jit_pod, node_with};

/// A node whose every delay is fixed, starting pods as `slow` says.
fn slow_node(slow: SlowStarts) -> Node {
    let kubelet = KubeletConfig {
        pod_watch_lag: LagRange::fixed(100),
        scheduling_delay: LagRange::fixed(100),
        sandbox_delay: LagRange::fixed(100),
        start_delay: LagRange::fixed(1_000),
        slow_starts: Some(slow),
        ..KubeletConfig::default()
    };
    node_with(Setup { kubelet, ..Setup::default() })
}

fn quick() -> SlowStarts {
    SlowStarts {
        slow_pull_percent: 0,
        slow_pull: LagRange::fixed(0),
        failed_pull_percent: 0,
        max_failed_pulls: 0,
        failed_pull: LagRange::fixed(0),
        runner_boot: LagRange::fixed(0),
    }
}

fn waiting_reason(n: &Node, name: &str) -> Option<String> {
    let pod = n.apiserver.object("pods", "default", name)?;
    pod.pointer("/status/containerStatuses/0/state/waiting/reason")
        .and_then(Value::as_str)
        .map(str::to_string)
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_pull_shows_err_image_pull_then_image_pull_back_off_until_the_next_try() {
    let slow = SlowStarts {
        failed_pull_percent: 100,
        max_failed_pulls: 1,
        failed_pull: LagRange::fixed(2_000),
        ..quick()
    };
    let n = slow_node(slow);
    let set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    sleep_ms(5_000).await;
    let failed =
        n.first("r1", |e| matches!(e, KubeletEventKind::ImagePullFailed { attempt: 1, .. })).unwrap();
    assert_eq!(waiting_reason(&n, "r1").as_deref(), Some("ErrImagePull"));
    assert_eq!(n.phase("r1").as_deref(), Some("Pending"));
    sleep_ms(failed + 5_500 - n.now_ms()).await;
    assert_eq!(waiting_reason(&n, "r1").as_deref(), Some("ImagePullBackOff"), "half-way through 10 s");
    sleep_ms(10_000).await;
    let started = n.first("r1", |e| matches!(e, KubeletEventKind::ContainerStarted { .. })).unwrap();
    let due = failed + 10_000 + 1_000; // the next try after the 10 s backoff, then the start delay
    assert!((due..due + 100).contains(&started), "started at {started} ms, due {due} ms (+ status writes)");
    assert_eq!(n.phase("r1").as_deref(), Some("Running"));
}

#[tokio::test(start_paused = true)]
async fn a_slow_pull_holds_the_pod_pending() {
    let n = slow_node(SlowStarts { slow_pull_percent: 100, slow_pull: LagRange::fixed(90_000), ..quick() });
    let set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    sleep_ms(60_000).await;
    assert_eq!(n.phase("r1").as_deref(), Some("Pending"));
    assert_eq!(waiting_reason(&n, "r1").as_deref(), Some("ContainerCreating"));
    sleep_ms(40_000).await;
    assert_eq!(n.phase("r1").as_deref(), Some("Running"));
    assert!(n.events_of("r1").iter().all(|e| !matches!(e, KubeletEventKind::ImagePullFailed { .. })));
}

#[tokio::test(start_paused = true)]
async fn a_booting_runner_runs_before_it_is_online_and_a_removal_meanwhile_turns_it_away() {
    let n = slow_node(SlowStarts { runner_boot: LagRange::fixed(8_000), ..quick() });
    let set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(set, "r1").await;
    let removed = n.jit_secret(set, "r2").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    n.pods.create(&PostParams::default(), &jit_pod("r2")).await.unwrap();
    sleep_ms(4_000).await;
    assert_eq!(n.phase("r2").as_deref(), Some("Running"));
    n.actions.remove_runner(removed).await.unwrap();
    sleep_ms(10_000).await;
    let started = n.first("r1", |e| matches!(e, KubeletEventKind::ContainerStarted { .. })).unwrap();
    let online = n.first("r1", |e| matches!(e, KubeletEventKind::RunnerConnected { .. })).unwrap();
    assert_eq!(online, started + 8_000, "online once booted");
    let r2 = n.events_of("r2");
    assert!(r2.iter().all(|e| !matches!(e, KubeletEventKind::RunnerConnected { .. })), "{r2:?}");
    assert!(
        r2.iter().any(|e| matches!(e, KubeletEventKind::ContainerStopped { runner_id: None, .. })),
        "refused at the end of its boot: {r2:?}"
    );
}
