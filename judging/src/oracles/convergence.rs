//! Liveness: with the workload over and the faults healed, the world settles before the horizon (§9.8).

use arc_sim::github::EndReason;
use arc_sim::record::Interest;
use arc_world::RunRecord;

use super::Oracle;
use super::registrations::orphan_registrations;
use crate::view::{is_deleting, str_at};
use crate::violation::Violation;

/// The world settles before the horizon (every job ended, runners back to the minimum, nothing left
/// deleting), and what it settles into is healthy: no registration leaked at GitHub, and every
/// AutoscalingRunnerSet's listener holds a message session.
pub struct ConvergesAfterHeal;

impl Oracle for ConvergesAfterHeal {
    fn name(&self) -> &'static str {
        "converges-after-heal"
    }

    fn describe(&self) -> &'static str {
        "after the workload and faults end, the world settles with no leaked registration and a live session"
    }

    fn needs(&self) -> Interest {
        Interest::none()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let Some(settled) = run.settled_at_ms else { return vec![self.unsettled(run)] };
        let leaked = orphan_registrations(run).into_iter().map(|r| format!("runner {} ({})", r.id, r.name));
        let no_session = scale_sets_without_session(run).into_iter().map(|id| format!("scale set {id}"));
        let objects: Vec<String> = leaked.chain(no_session).collect();
        if objects.is_empty() {
            return Vec::new();
        }
        vec![Violation {
            oracle: self.name(),
            at_ms: settled,
            objects,
            message: "settled with a leaked registration or a scale set without a listener session".into(),
        }]
    }
}

impl ConvergesAfterHeal {
    fn unsettled(&self, run: &RunRecord) -> Violation {
        let unfinished = run.jobs.iter().filter(|j| !j.is_completed()).count();
        let runners = run.objects_of("ephemeralrunners");
        let deleting = runners.iter().filter(|r| is_deleting(r)).count();
        Violation {
            oracle: self.name(),
            at_ms: run.end_ms,
            objects: vec![
                format!("{} runners ({deleting} deleting)", runners.len()),
                format!("{unfinished} unfinished jobs"),
            ],
            message: "the world did not settle before the horizon".into(),
        }
    }
}

/// The scale sets of the AutoscalingRunnerSets left at the end that have no open message session.
fn scale_sets_without_session(run: &RunRecord) -> Vec<i64> {
    run.objects_of("autoscalingrunnersets")
        .iter()
        .filter(|ars| !is_deleting(ars))
        .filter_map(|ars| str_at(ars, "/metadata/annotations/runner-scale-set-id")?.parse().ok())
        .filter(|id: &i64| !run.sessions.iter().any(|s| s.scale_set_id == *id))
        .collect()
}

/// Every job the workload submitted ends without being lost (for fault-free worlds).
pub struct NoJobLost;

impl Oracle for NoJobLost {
    fn name(&self) -> &'static str {
        "no-job-lost"
    }

    /// Judges a record so far: a job's end is final: a lost job stays lost.
    fn judges_so_far(&self) -> bool {
        true
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

#[cfg(test)]
mod tests {
    use arc_sim::github::{EndReason, RunnerState};
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{ars, ended_job, removed_runner, runner, session};

    #[test]
    fn a_job_that_ended_runner_lost_is_a_violation() {
        let clean = SyntheticRun::new().jobs(vec![ended_job(1, EndReason::Completed, Some(5))]).build();
        assert!(NoJobLost.check(&clean).is_empty());
        let lost = SyntheticRun::new().jobs(vec![ended_job(1, EndReason::RunnerLost, Some(5))]).build();
        assert_eq!(NoJobLost.check(&lost).len(), 1);
    }

    #[test]
    fn settling_requires_no_leaked_registration_and_a_live_session() {
        let healthy = SyntheticRun::new()
            .objects("autoscalingrunnersets", vec![ars("set", 1)])
            .runners(vec![removed_runner(5, "r-1")])
            .sessions(vec![session(1)])
            .settled_at(100);
        assert!(ConvergesAfterHeal.check(&healthy.build()).is_empty());
        let unsettled = SyntheticRun::new().ended_at(7_200_000).build();
        assert!(ConvergesAfterHeal.check(&unsettled)[0].message.contains("did not settle"));
        let leaked = SyntheticRun::new()
            .objects("autoscalingrunnersets", vec![ars("set", 1)])
            .runners(vec![runner(5, "r-1", RunnerState::Offline)])
            .sessions(vec![session(1)])
            .settled_at(100)
            .build();
        assert_eq!(ConvergesAfterHeal.check(&leaked)[0].objects, vec!["runner 5 (r-1)".to_string()]);
        let no_session =
            SyntheticRun::new().objects("autoscalingrunnersets", vec![ars("set", 1)]).settled_at(100).build();
        assert_eq!(ConvergesAfterHeal.check(&no_session)[0].objects, vec!["scale set 1".to_string()]);
    }
}
