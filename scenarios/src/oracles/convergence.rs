//! Liveness: with the workload over and the faults healed, the world settles before the horizon (§9.8).

use arc_sim::github::EndReason;
use arc_sim::record::Interest;
use arc_sim::world::RunRecord;

use super::Oracle;
use super::view::is_deleting;
use crate::verdict::Violation;

/// The world settles: every job ended (none lost), the plug's convergence condition held, before the
/// horizon.
pub struct ConvergesAfterHeal;

impl Oracle for ConvergesAfterHeal {
    fn name(&self) -> &'static str {
        "converges-after-heal"
    }

    fn describe(&self) -> &'static str {
        "after the workload and faults end, the world settles (runners back to minimum, all jobs done)"
    }

    fn needs(&self) -> Interest {
        Interest::none()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        if run.settled_at_ms.is_some() {
            return Vec::new();
        }
        let unfinished = run.jobs.iter().filter(|j| !j.is_completed()).count();
        let runners = run.objects_of("ephemeralrunners");
        let deleting = runners.iter().filter(|r| is_deleting(r)).count();
        vec![Violation {
            oracle: self.name(),
            at_ms: run.end_ms,
            objects: vec![
                format!("{} runners ({deleting} deleting)", runners.len()),
                format!("{unfinished} unfinished jobs"),
            ],
            message: "the world did not settle before the horizon".into(),
        }]
    }
}

/// Every job the workload submitted ends without being lost (for fault-free worlds).
pub struct NoJobLost;

impl Oracle for NoJobLost {
    fn name(&self) -> &'static str {
        "no-job-lost"
    }

    fn describe(&self) -> &'static str {
        "no job ends runner-lost or canceled by its runner's shutdown"
    }

    fn needs(&self) -> Interest {
        Interest::none()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        run.jobs
            .iter()
            .filter(|j| matches!(j.end_reason(), Some(EndReason::RunnerLost | EndReason::RunnerShutdown)))
            .map(|j| Violation {
                oracle: self.name(),
                at_ms: j.finished_ms.unwrap_or(run.end_ms),
                objects: vec![
                    format!("job {}", j.request_id),
                    format!("runner {}", j.runner_id.unwrap_or(0)),
                ],
                message: match j.end_reason() {
                    Some(EndReason::RunnerShutdown) => "the job's runner was shut down mid-job".into(),
                    _ => "the job's runner was lost".into(),
                },
            })
            .collect()
    }
}
