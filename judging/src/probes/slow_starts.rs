//! The slow-start probes (issue 42, item 3): a pod that took a minute or more from its binding to its
//! container running, a pod whose image pull failed and backed off, a runner whose registration was
//! removed while its container ran but before it was online at GitHub (it was still booting), and a
//! pod that waited Pending Unschedulable for room on a node.

use std::collections::BTreeMap;

use arc_sim::github::{EventKind, GitHubEvent, RemovalReason};
use arc_sim::kubelet::{KubeletEvent, KubeletEventKind};
use arc_world::RunRecord;

/// From binding to the first container start, at least this long to count: a start on a node that
/// starts quickly takes a few seconds (sandbox, pull, a missing secret retried every 2 s).
pub const SLOW_START_MS: u64 = 60_000;

/// Pods whose first container start came [`SLOW_START_MS`] or more after the kubelet bound them.
pub fn pod_started_a_minute_after_binding(run: &RunRecord) -> u32 {
    let mut bound: BTreeMap<&str, u64> = BTreeMap::new();
    let mut slow = 0;
    for event in run.kubelet_events() {
        match event.kind {
            KubeletEventKind::Scheduled => {
                bound.insert(&event.uid, event.ms);
            }
            KubeletEventKind::ContainerStarted { restart_count: 0, .. } => {
                let since = bound.get(event.uid.as_str()).copied().unwrap_or(event.ms);
                slow += u32::from(event.ms >= since + SLOW_START_MS);
            }
            _ => {}
        }
    }
    slow
}

/// Pods whose image pull failed at least once (`ErrImagePull`, then `ImagePullBackOff`).
pub fn image_pull_backed_off(run: &RunRecord) -> u32 {
    let first_failures = run
        .kubelet_events()
        .filter(|e| matches!(e.kind, KubeletEventKind::ImagePullFailed { attempt: 1, .. }));
    first_failures.count() as u32
}

/// Pods the scheduler found no room for (Pending, PodScheduled False `Unschedulable`).
pub fn pod_waited_unschedulable(run: &RunRecord) -> u32 {
    run.kubelet_events().filter(|e| matches!(e.kind, KubeletEventKind::Unschedulable { .. })).count() as u32
}

/// Runners removed at GitHub while their pod's container ran and they had not connected since it
/// started: the scale-down of a runner that was still booting. A runner's pod is named as the runner
/// (ARC names the JIT runner after its EphemeralRunner, and the pod after it too).
pub fn runner_removed_while_booting(run: &RunRecord) -> u32 {
    let mut names: BTreeMap<i64, String> = BTreeMap::new();
    let mut booting: BTreeMap<String, bool> = BTreeMap::new();
    let mut hits = 0;
    for event in &run.events {
        if let Some(kubelet) = event.get::<KubeletEvent>() {
            let name = kubelet.pod.rsplit('/').next().unwrap_or_default().to_string();
            match kubelet.kind {
                KubeletEventKind::ContainerStarted { .. } => booting.insert(name, true),
                KubeletEventKind::RunnerConnected { .. } | KubeletEventKind::ContainerStopped { .. } => {
                    booting.insert(name, false)
                }
                _ => None,
            };
        } else if let Some(github) = event.get::<GitHubEvent>() {
            match &github.kind {
                EventKind::RunnerRegistered { runner_id, name, .. } => {
                    names.insert(*runner_id, name.clone());
                }
                EventKind::RunnerRemoved { runner_id, reason: RemovalReason::Removed } => {
                    let name = names.get(runner_id);
                    hits += u32::from(name.is_some_and(|n| booting.get(n).copied().unwrap_or(false)));
                }
                _ => {}
            }
        }
    }
    hits
}

#[cfg(test)]
mod tests {
    use arc_world::SyntheticRun;

    use super::*;

    fn kubelet(ms: u64, pod: &str, kind: KubeletEventKind) -> KubeletEvent {
        KubeletEvent { ms, pod: format!("runners/{pod}"), uid: format!("uid-{pod}"), kind }
    }

    fn started(ms: u64, pod: &str) -> KubeletEvent {
        kubelet(ms, pod, KubeletEventKind::ContainerStarted { container: "runner".into(), restart_count: 0 })
    }

    fn github(at_ms: u64, kind: EventKind) -> GitHubEvent {
        GitHubEvent { at_ms, kind, by: None }
    }

    fn registered(ms: u64, id: i64, name: &str) -> GitHubEvent {
        github(ms, EventKind::RunnerRegistered { runner_id: id, name: name.into(), scale_set_id: Some(1) })
    }

    fn removed(ms: u64, id: i64) -> GitHubEvent {
        github(ms, EventKind::RunnerRemoved { runner_id: id, reason: RemovalReason::Removed })
    }

    #[test]
    fn a_start_a_minute_after_binding_counts_and_a_quick_one_does_not() {
        let run = SyntheticRun::new()
            .event(1_000, kubelet(1_000, "a", KubeletEventKind::Scheduled))
            .event(2_000, kubelet(2_000, "b", KubeletEventKind::Scheduled))
            .event(4_000, started(4_000, "b"))
            .event(61_000, started(61_000, "a"))
            .build();
        assert_eq!(pod_started_a_minute_after_binding(&run), 1);
    }

    #[test]
    fn each_pod_whose_pull_failed_counts_once() {
        let failed = |attempt| KubeletEventKind::ImagePullFailed { container: "runner".into(), attempt };
        let run = SyntheticRun::new()
            .event(1_000, kubelet(1_000, "a", failed(1)))
            .event(12_000, kubelet(12_000, "a", failed(2)))
            .event(13_000, kubelet(13_000, "b", failed(1)))
            .build();
        assert_eq!(image_pull_backed_off(&run), 2);
    }

    #[test]
    fn each_unschedulable_pod_counts() {
        let unschedulable =
            |pod| kubelet(1_000, pod, KubeletEventKind::Unschedulable { message: "0/1".into() });
        let run = SyntheticRun::new()
            .event(1_000, unschedulable("a"))
            .event(1_000, unschedulable("b"))
            .event(2_000, kubelet(2_000, "c", KubeletEventKind::Scheduled))
            .build();
        assert_eq!(pod_waited_unschedulable(&run), 2);
    }

    #[test]
    fn only_a_removal_between_the_start_and_the_connection_counts() {
        let connected = |ms, pod, id| kubelet(ms, pod, KubeletEventKind::RunnerConnected { runner_id: id });
        let run = SyntheticRun::new()
            .event(1_000, registered(1_000, 1, "booting"))
            .event(1_000, registered(1_000, 2, "online"))
            .event(1_000, registered(1_000, 3, "unstarted"))
            .event(2_000, started(2_000, "booting"))
            .event(2_000, started(2_000, "online"))
            .event(2_000, connected(2_000, "online", 2))
            .event(3_000, removed(3_000, 1))
            .event(3_000, removed(3_000, 2))
            .event(3_000, removed(3_000, 3))
            .build();
        assert_eq!(runner_removed_while_booting(&run), 1);
    }
}
