//! The removed-registration probe (issue 42, item 8): a runner whose registration was removed while it
//! polled for jobs, and whose poll then failed "Registration … was not found", ran on in its pod as
//! actions/runner retries, so the pod stayed Running with no runner behind it at GitHub.

use arc_sim::kubelet::KubeletEventKind;
use arc_world::RunRecord;

/// How long a pod must run on after its runner's registration is gone to count: longer than any
/// graceful stop (SIGTERM to exit takes at most a second or so) so that a removal the controller
/// follows with the pod's deletion at once does not count.
pub const RAN_ON_MS: u64 = 30_000;

/// Runner processes that began retrying a removed registration: the window itself, whatever the
/// controller then does with the pod.
pub fn registration_retried_after_removal(run: &RunRecord) -> u32 {
    let retrying = run
        .kubelet_events()
        .filter(|e| matches!(e.kind, KubeletEventKind::RetryingRemovedRegistration { .. }));
    retrying.count() as u32
}

/// Runner processes that went on retrying a removed registration for at least [`RAN_ON_MS`]: the
/// window left open, which `fixes.delete_removed_runner_first` mostly closes.
pub fn pod_ran_on_after_registration_removed(run: &RunRecord) -> u32 {
    let events: Vec<_> = run.kubelet_events().collect();
    let retrying =
        events.iter().filter(|e| matches!(e.kind, KubeletEventKind::RetryingRemovedRegistration { .. }));
    retrying
        .filter(|r| {
            let stopped = events
                .iter()
                .find(|e| {
                    e.uid == r.uid
                        && e.ms >= r.ms
                        && matches!(e.kind, KubeletEventKind::ContainerStopped { .. })
                })
                .map_or(run.end_ms, |e| e.ms);
            stopped >= r.ms + RAN_ON_MS
        })
        .count() as u32
}

#[cfg(test)]
mod tests {
    use arc_sim::kubelet::{KubeletEvent, StopCause};
    use arc_world::SyntheticRun;

    use super::*;

    fn event(ms: u64, uid: &str, kind: KubeletEventKind) -> KubeletEvent {
        KubeletEvent { ms, pod: format!("runners/{uid}"), uid: uid.into(), kind }
    }

    fn stopped(ms: u64, uid: &str) -> KubeletEvent {
        let kind = KubeletEventKind::ContainerStopped {
            container: "runner".into(),
            exit_code: 0,
            cause: StopCause::PodDeleted,
            runner_id: Some(1),
            running_job: None,
        };
        event(ms, uid, kind)
    }

    fn retrying(ms: u64, uid: &str) -> KubeletEvent {
        event(ms, uid, KubeletEventKind::RetryingRemovedRegistration { runner_id: 1, for_ms: 600_000 })
    }

    #[test]
    fn a_pod_that_runs_on_counts_and_one_deleted_at_once_does_not() {
        let run = SyntheticRun::new()
            .event(1_000, retrying(1_000, "a"))
            .event(2_000, retrying(2_000, "b"))
            .event(3_000, stopped(3_000, "b"))
            .event(40_000, stopped(40_000, "a"))
            .event(50_000, retrying(50_000, "c"))
            .ended_at(90_000)
            .build();
        // a: 39 s on; b: stopped after 1 s; c: still running when the run ended 40 s later.
        assert_eq!(pod_ran_on_after_registration_removed(&run), 2);
    }

    #[test]
    fn every_retrying_runner_opens_the_window_however_soon_its_pod_goes() {
        let run = SyntheticRun::new()
            .event(1_000, retrying(1_000, "a"))
            .event(2_000, retrying(2_000, "b"))
            .event(3_000, stopped(3_000, "b"))
            .ended_at(90_000)
            .build();
        assert_eq!(registration_retried_after_removal(&run), 2);
        assert_eq!(registration_retried_after_removal(&SyntheticRun::new().ended_at(1).build()), 0);
    }

    #[test]
    fn quiet_without_a_retrying_runner() {
        let run = SyntheticRun::new().event(1_000, stopped(1_000, "a")).ended_at(100_000).build();
        assert_eq!(pod_ran_on_after_registration_removed(&run), 0);
    }
}
