//! Jobs: none lost to a pod the controller killed (races 2 and 3).

use arc_sim::github::EndReason;
use arc_sim::kubelet::KubeletEvent;
use arc_sim::kubelet::{KubeletEventKind, StopCause};
use arc_sim::record::Interest;
use arc_sim::world::RunRecord;

use super::Oracle;
use crate::verdict::Violation;

/// No job is lost because the controller deleted the pod its runner ran it in: it ends neither
/// "runner lost" (the process was killed with it) nor canceled by its runner's shutdown (the runner
/// got SIGTERM mid-job). Evictions and crashes are not the controller's doing and are not counted.
pub struct NoJobLostToControllerKill;

impl Oracle for NoJobLostToControllerKill {
    fn name(&self) -> &'static str {
        "no-job-lost-to-controller-kill"
    }

    fn describe(&self) -> &'static str {
        "no job is lost (runner-lost or canceled by its runner's shutdown) after the controller deleted its runner's pod mid-job"
    }

    fn needs(&self) -> Interest {
        Interest::of::<KubeletEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut out = Vec::new();
        for event in run.kubelet_events() {
            let KubeletEventKind::ContainerStopped { cause, running_job: Some(job), runner_id, .. } =
                &event.kind
            else {
                continue;
            };
            if !matches!(cause, StopCause::PodDeleted | StopCause::PodRemoved) {
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
