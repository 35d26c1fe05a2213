//! EphemeralRunner phases: a terminal phase is final, and Running means a job has started (§5.2, §9.3).

use std::collections::BTreeMap;

use arc_sim::apiserver::Committed;
use arc_sim::github::{EventKind, GitHubEvent};
use arc_sim::record::Interest;
use arc_world::RunRecord;

use super::Oracle;
use crate::probes::runner_states::RunnerStates;
use crate::view::{is_terminal, key_of, str_at};
use crate::violation::Violation;

/// An EphemeralRunner never leaves Succeeded, Failed or Outdated for Pending or Running.
pub struct TerminalPhaseIsFinal;

impl Oracle for TerminalPhaseIsFinal {
    fn name(&self) -> &'static str {
        "terminal-phase-is-final"
    }

    /// Judges a record so far: each commit is judged against the runner's earlier commits.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner's phase never goes from Failed/Succeeded/Outdated back to Pending/Running"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let states = RunnerStates::of(run);
        let mut terminal: BTreeMap<&str, &str> = BTreeMap::new();
        let mut out = Vec::new();
        for state in states.iter() {
            let (uid, phase) = (&*state.uid, &*state.phase);
            match terminal.get(&uid) {
                Some(was) if !is_terminal(phase) => out.push(Violation {
                    oracle: self.name(),
                    at_ms: state.ms,
                    objects: vec![format!("ephemeralrunner {}", key_of(&state.change.object))],
                    message: format!("phase went from {was} back to {phase}"),
                }),
                None if is_terminal(phase) => {
                    terminal.insert(uid, phase);
                }
                _ => {}
            }
        }
        out
    }
}

/// An EphemeralRunner is Running only with the job GitHub assigned to its runner: its `status.jobId`
/// is the id of a job assigned to the runner of its `status.runnerId` at or before that commit (the
/// listener writes Running with the job fields from JobStarted, §5.2).
pub struct RunningOnlyAfterJobStarted;

impl Oracle for RunningOnlyAfterJobStarted {
    fn name(&self) -> &'static str {
        "running-only-after-job-started"
    }

    /// Judges a record so far: each Running write is judged against the assignments before it.
    fn judges_so_far(&self) -> bool {
        true
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner in phase Running carries a job GitHub had assigned to its runner"
    }

    /// A \[V\] (§5.2) and 0.15.0 (#4646) promise: without Running from the listener, the ER
    /// controller copies the pod's Running phase, and an idle runner is Running by design.
    fn applies(&self, switches: &arc_controller::Switches) -> bool {
        switches.optimisations.running_from_listener
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"]).and::<GitHubEvent>()
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let assigned = Assignments::of(run);
        let registered = Registrations::of(run);
        let mut out = Vec::new();
        for state in RunnerStates::of(run).iter().filter(|s| &*s.phase == "Running") {
            let (ms, change) = (state.ms, &state.change);
            let job = state.job_id.as_deref();
            let runner = match state.runner_id {
                // Its id not recorded yet (a status write that failed): the runner registered under its name.
                0 => registered.latest(str_at(&change.object, "/metadata/name").unwrap_or_default(), ms),
                id => id,
            };
            if !job.is_some_and(|job| assigned.before(runner, job, ms)) {
                out.push(Violation {
                    oracle: self.name(),
                    at_ms: ms,
                    objects: vec![
                        format!("ephemeralrunner {}", key_of(&change.object)),
                        format!("runner {runner}"),
                    ],
                    message: match job {
                        None => "phase Running without a started job".into(),
                        Some(job) => format!(
                            "phase Running with job {job}, which GitHub never assigned to runner {runner}"
                        ),
                    },
                });
            }
        }
        out
    }
}

/// Per (runner, job id), when GitHub's event log had first reached the event assigning that job to
/// that runner: the latest time of any event up to it (the log is read in order and up to a time, so
/// an assignment counts at `ms` only if every event before it is at or before `ms` too). Built once a
/// run, so each Running write is one lookup instead of a scan of the whole event log.
struct Assignments<'a>(BTreeMap<(i64, &'a str), u64>);

impl<'a> Assignments<'a> {
    fn of(run: &'a RunRecord) -> Assignments<'a> {
        let job_ids: BTreeMap<i64, &str> =
            run.jobs.iter().map(|j| (j.request_id, j.job_id.as_str())).collect();
        let mut first = BTreeMap::new();
        let mut reached = 0;
        for e in run.github_events() {
            reached = reached.max(e.at_ms);
            if let EventKind::JobAssigned { request_id, runner_id } = e.kind
                && let Some(job) = job_ids.get(&request_id)
            {
                first.entry((runner_id, *job)).or_insert(reached);
            }
        }
        Assignments(first)
    }

    /// Whether GitHub assigned the job with id `job` to `runner` at or before `ms`.
    fn before(&self, runner: i64, job: &str, ms: u64) -> bool {
        self.0.get(&(runner, job)).is_some_and(|reached| *reached <= ms)
    }
}

/// Per runner name, the ids GitHub registered under it, with when: an EphemeralRunner's runner is the
/// one registered under its name even before its status records the id.
struct Registrations<'a>(BTreeMap<&'a str, Vec<(u64, i64)>>);

impl<'a> Registrations<'a> {
    fn of(run: &'a RunRecord) -> Registrations<'a> {
        let mut by_name: BTreeMap<&str, Vec<(u64, i64)>> = BTreeMap::new();
        for e in run.github_events() {
            if let EventKind::RunnerRegistered { runner_id, name, .. } = &e.kind {
                by_name.entry(name.as_str()).or_default().push((e.at_ms, *runner_id));
            }
        }
        Registrations(by_name)
    }

    /// The id last registered under `name` at or before `ms` (0: none).
    fn latest(&self, name: &str, ms: u64) -> i64 {
        let ids = self.0.get(name).map(Vec::as_slice).unwrap_or_default();
        ids.iter().rev().find(|(at, _)| *at <= ms).map_or(0, |(_, id)| *id)
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::github::{EventKind, JobState};
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{er, github, job};

    #[test]
    fn a_terminal_phase_that_goes_back_to_pending_is_a_violation() {
        let clean = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Added, er("r", "u1", None, 0, None))
            .committed(2, "ephemeralrunners", EventType::Modified, er("r", "u1", Some("Failed"), 0, None))
            .build();
        assert!(TerminalPhaseIsFinal.check(&clean).is_empty());
        let broken = SyntheticRun::new()
            .committed(1, "ephemeralrunners", EventType::Modified, er("r", "u1", Some("Failed"), 0, None))
            .committed(2, "ephemeralrunners", EventType::Modified, er("r", "u1", Some("Pending"), 0, None))
            .build();
        let found = TerminalPhaseIsFinal.check(&broken);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].message.contains("from Failed back to Pending"));
    }

    #[test]
    fn running_needs_the_job_github_assigned_to_that_runner() {
        let assigned = |runner| github(5, EventKind::JobAssigned { request_id: 7, runner_id: runner });
        let running = er("r", "u1", Some("Running"), 41, Some("job-7"));
        let record = |runner| {
            SyntheticRun::new()
                .event(5, assigned(runner))
                .committed(6, "ephemeralrunners", EventType::Modified, running.clone())
                .jobs(vec![job(7, JobState::Running, Some(runner))])
                .build()
        };
        assert!(RunningOnlyAfterJobStarted.check(&record(41)).is_empty());
        let elsewhere = RunningOnlyAfterJobStarted.check(&record(42));
        assert_eq!(elsewhere.len(), 1, "assigned to another runner: {elsewhere:?}");
        let no_job = SyntheticRun::new()
            .committed(6, "ephemeralrunners", EventType::Modified, er("r", "u1", Some("Running"), 41, None))
            .build();
        assert!(RunningOnlyAfterJobStarted.check(&no_job)[0].message.contains("without a started job"));
        let too_early = SyntheticRun::new()
            .committed(4, "ephemeralrunners", EventType::Modified, running.clone())
            .event(5, assigned(41))
            .jobs(vec![job(7, JobState::Running, Some(41))])
            .build();
        assert_eq!(RunningOnlyAfterJobStarted.check(&too_early).len(), 1, "Running before the assignment");
    }

    #[test]
    fn a_runner_whose_id_is_not_recorded_yet_is_the_one_registered_under_its_name() {
        let registered = |name: &str| {
            github(3, EventKind::RunnerRegistered { runner_id: 41, name: name.into(), scale_set_id: Some(1) })
        };
        let record = |name: &str| {
            SyntheticRun::new()
                .event(3, registered(name))
                .event(5, github(5, EventKind::JobAssigned { request_id: 7, runner_id: 41 }))
                .committed(
                    6,
                    "ephemeralrunners",
                    EventType::Modified,
                    er("r", "u1", Some("Running"), 0, Some("job-7")),
                )
                .jobs(vec![job(7, JobState::Running, Some(41))])
                .build()
        };
        assert!(RunningOnlyAfterJobStarted.check(&record("r")).is_empty(), "runner 41 registered as r");
        assert_eq!(RunningOnlyAfterJobStarted.check(&record("other")).len(), 1, "no runner registered as r");
    }
}
