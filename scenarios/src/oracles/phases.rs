//! EphemeralRunner phases: a terminal phase is final, and Running means a job has started (§5.2, §9.3).

use std::collections::BTreeMap;

use arc_sim::apiserver::Committed;
use arc_sim::record::Interest;
use arc_sim::world::RunRecord;

use super::Oracle;
use super::view::{is_terminal, key_of, runner_phase, str_at, uid_of};
use crate::verdict::Violation;

/// An EphemeralRunner never leaves Succeeded, Failed or Outdated for Pending or Running.
pub struct TerminalPhaseIsFinal;

impl Oracle for TerminalPhaseIsFinal {
    fn name(&self) -> &'static str {
        "terminal-phase-is-final"
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner's phase never goes from Failed/Succeeded/Outdated back to Pending/Running"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        let mut terminal: BTreeMap<String, String> = BTreeMap::new();
        let mut out = Vec::new();
        for (ms, change) in run.changes_of("ephemeralrunners") {
            let uid = uid_of(&change.object).to_string();
            let phase = runner_phase(&change.object);
            match terminal.get(&uid) {
                Some(was) if !is_terminal(phase) => out.push(Violation {
                    oracle: self.name(),
                    at_ms: ms,
                    objects: vec![format!("ephemeralrunner {}", key_of(&change.object))],
                    message: format!("phase went from {was} back to {phase}"),
                }),
                None if is_terminal(phase) => {
                    terminal.insert(uid, phase.to_string());
                }
                _ => {}
            }
        }
        out
    }
}

/// An EphemeralRunner is Running only once the listener has recorded a started job on it (with
/// Running written by the listener, §5.2).
pub struct RunningOnlyAfterJobStarted;

impl Oracle for RunningOnlyAfterJobStarted {
    fn name(&self) -> &'static str {
        "running-only-after-job-started"
    }

    fn describe(&self) -> &'static str {
        "an EphemeralRunner in phase Running carries the job the listener saw start on it"
    }

    fn needs(&self) -> Interest {
        Interest::of_resources::<Committed>(&["ephemeralrunners"])
    }

    fn check(&self, run: &RunRecord) -> Vec<Violation> {
        run.changes_of("ephemeralrunners")
            .filter(|(_, c)| {
                runner_phase(&c.object) == "Running" && str_at(&c.object, "/status/jobId").is_none()
            })
            .map(|(ms, c)| Violation {
                oracle: self.name(),
                at_ms: ms,
                objects: vec![format!("ephemeralrunner {}", key_of(&c.object))],
                message: "phase Running without a started job".into(),
            })
            .collect()
    }
}
