//! Jobs: none lost to a pod the controller killed (races 2 and 3).

use arc_sim::github::EndReason;
use arc_sim::kubelet::KubeletEvent;
use arc_sim::kubelet::{KubeletEventKind, StopCause};
use arc_sim::record::Interest;
use arc_world::RunRecord;

use super::Oracle;
use crate::violation::Violation;

/// No job is lost because the controller deleted the pod its runner ran it in: it ends neither
/// "runner lost" (the process was killed with it) nor canceled by its runner's shutdown (the runner
/// got SIGTERM mid-job). Evictions, crashes and the control plane's deletes of a lost node's pods
/// (taint eviction, pod GC, an operator's force delete) are not the controller's doing and are not
/// counted.
pub struct NoJobLostToControllerKill;

impl Oracle for NoJobLostToControllerKill {
    fn name(&self) -> &'static str {
        "no-job-lost-to-controller-kill"
    }

    /// Judges a record so far: a job's end is final.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "no job is lost (runner-lost or canceled by its runner's shutdown) after the controller deleted its runner's pod mid-job"
    }

    fn needs(&self) -> Interest {
        Interest::of::<KubeletEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut out = Vec::new();
        let mut lost_node_deletes = std::collections::BTreeSet::new();
        for event in run.kubelet_events() {
            if matches!(
                event.kind,
                KubeletEventKind::TaintEvicted { .. } | KubeletEventKind::ForceDeleted { .. }
            ) {
                lost_node_deletes.insert(event.uid.as_str());
            }
            let KubeletEventKind::ContainerStopped { cause, running_job: Some(job), runner_id, .. } =
                &event.kind
            else {
                continue;
            };
            if !matches!(cause, StopCause::PodDeleted | StopCause::PodRemoved)
                || lost_node_deletes.contains(event.uid.as_str())
            {
                continue;
            }
            let lost = run.jobs.iter().any(|j| {
                j.request_id == *job
                    && matches!(j.end_reason(), Some(EndReason::RunnerLost | EndReason::RunnerShutdown))
            });
            if lost {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: event.ms,
                    objects: vec![
                        format!("pod {}", event.pod),
                        format!("runner {}", runner_id.unwrap_or(0)),
                        format!("job {job}"),
                    ],
                    message: "the pod was deleted while its runner ran the job; the job was lost".into(),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::github::JobState;
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{NS, ended_job, job};

    /// The runner pod `r` stopped at 50 ms for `cause` while its runner 41 ran job 7.
    fn stopped(cause: StopCause) -> KubeletEvent {
        KubeletEvent {
            ms: 50,
            pod: format!("{NS}/r"),
            uid: "pod-r".into(),
            kind: KubeletEventKind::ContainerStopped {
                container: "runner".into(),
                exit_code: 137,
                cause,
                runner_id: Some(41),
                running_job: Some(7),
            },
        }
    }

    fn run(cause: StopCause, job_7: arc_sim::github::Job) -> RunRecord {
        SyntheticRun::new().event(50, stopped(cause)).jobs(vec![job_7]).build()
    }

    #[test]
    fn a_job_lost_after_the_controller_deleted_its_pod_is_a_violation() {
        for cause in [StopCause::PodDeleted, StopCause::PodRemoved] {
            let found =
                NoJobLostToControllerKill.check(&run(cause, ended_job(7, EndReason::RunnerLost, Some(41))));
            assert_eq!(found.len(), 1, "{cause:?}: {found:?}");
            assert_eq!(found[0].at_ms, 50);
            assert_eq!(found[0].objects, vec![format!("pod {NS}/r"), "runner 41".into(), "job 7".into()]);
        }
    }

    #[test]
    fn a_deleted_pod_whose_job_survived_is_clean() {
        let completed = run(StopCause::PodDeleted, ended_job(7, EndReason::Completed, Some(41)));
        assert!(NoJobLostToControllerKill.check(&completed).is_empty());
        let still_running = run(StopCause::PodDeleted, job(7, JobState::Running, Some(41)));
        assert!(NoJobLostToControllerKill.check(&still_running).is_empty());
        let other_job_lost = run(StopCause::PodDeleted, ended_job(8, EndReason::RunnerLost, Some(41)));
        assert!(NoJobLostToControllerKill.check(&other_job_lost).is_empty(), "job 8 ran elsewhere");
    }

    #[test]
    fn a_job_lost_to_the_control_planes_delete_of_a_lost_nodes_pod_is_not_the_controllers_doing() {
        let evicted = KubeletEvent {
            ms: 20,
            kind: KubeletEventKind::TaintEvicted { node: "arcsim-node-2".into() },
            ..stopped(StopCause::PodDeleted)
        };
        let lost = SyntheticRun::new()
            .event(20, evicted)
            .event(50, stopped(StopCause::PodDeleted))
            .jobs(vec![ended_job(7, EndReason::RunnerShutdown, Some(41))])
            .build();
        assert!(NoJobLostToControllerKill.check(&lost).is_empty());
    }

    #[test]
    fn a_job_lost_to_an_eviction_or_a_crash_is_not_the_controllers_doing() {
        for cause in [StopCause::Evicted, StopCause::Exited] {
            let lost = run(cause, ended_job(7, EndReason::RunnerLost, Some(41)));
            assert!(NoJobLostToControllerKill.check(&lost).is_empty(), "{cause:?}");
        }
    }
}
