//! The fake GitHub's side of `arcsim explore`'s GitHub-side perturbations (see `crate::perturb`): a
//! held assignment and a held request. Both only delay or reorder what the service does anyway. A
//! held job is waiting like any job under assignment latency (the listener's statistics count it as
//! before); after its longest hold it goes back to the assigner. While a delayed-assignment plan runs,
//! a delete of an idle runner's object makes the assigner give that runner the held job, or else the
//! oldest waiting job, first: only a job the assigner itself could give it then (idle, online, of the
//! job's scale set below its capacity, or carrying its labels), sooner than its seeded latency. A held
//! request is a request that takes longer before it is served.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::super::model::Assignment;
use super::super::{FakeGitHub, Shared};
use super::World;
use crate::perturb::Perturbation;

/// The plan's GitHub-side perturbations and their counters.
#[derive(Debug, Clone, Default)]
pub(crate) struct Held {
    /// Delayed assignments: which assignment (from 1) and its longest hold.
    assignments: Vec<(u32, u64)>,
    /// Held requests: operation, which of its requests (from 1), and the extra delay.
    requests: Vec<(String, u32, u64)>,
    /// Assignments the assigner has made or held so far.
    decisions: u32,
    /// Requests received so far, by operation.
    received: BTreeMap<String, u32>,
    /// The job held now.
    job: Option<i64>,
    /// A hold that just began (job, longest hold in ms), for the assigner to time its release.
    begun: Option<(i64, u64)>,
}

impl Held {
    /// Counters at zero for the GitHub-side perturbations of `plan`.
    pub(crate) fn new(plan: &[Perturbation]) -> Held {
        let mut held = Held::default();
        for p in plan {
            match p {
                Perturbation::DelayedAssignment { nth_assignment, max_hold_ms, .. } => {
                    held.assignments.push((*nth_assignment, *max_hold_ms));
                }
                Perturbation::HeldRequest { operation, nth, hold_ms } => {
                    held.requests.push((operation.clone(), *nth, *hold_ms));
                }
                _ => {}
            }
        }
        held
    }

    /// Whether job `request_id` is held (no runner may take it from the assigner).
    pub(crate) fn holds(&self, request_id: i64) -> bool {
        self.job == Some(request_id)
    }

    /// Counts an assignment the assigner is about to make of `request_id`; true when the plan holds
    /// it instead.
    pub(crate) fn hold_on_assignment(&mut self, request_id: i64) -> bool {
        if self.assignments.is_empty() {
            return false;
        }
        self.decisions += 1;
        let Some(&(_, max_hold_ms)) = self.assignments.iter().find(|(nth, _)| *nth == self.decisions) else {
            return false;
        };
        self.job = Some(request_id);
        self.begun = Some((request_id, max_hold_ms));
        true
    }

    /// The extra delay of a request of `operation` just received.
    pub(crate) fn request_delay(&mut self, operation: &str) -> Duration {
        if self.requests.is_empty() {
            return Duration::ZERO;
        }
        let received = self.received.entry(operation.to_string()).or_insert(0);
        *received += 1;
        let n = *received;
        let held = self.requests.iter().filter(|(op, nth, _)| op == operation && *nth == n);
        Duration::from_millis(held.map(|(_, _, ms)| *ms).sum())
    }
}

impl World {
    /// Gives the runner named `name`, if it is idle, the held job or else the oldest waiting job, when
    /// the assigner could give it that job now.
    fn assign_held_to(&mut self, name: &str) -> Option<Assignment> {
        let named = self.index.live_named.get(name)?;
        let runner_id = named.iter().copied().find(|id| self.index.idle_runners.contains(id))?;
        let held = self.held.job.take();
        let may_take = |w: &World, request_id: &i64| {
            w.jobs.get(request_id).is_some_and(|job| w.candidates_for(job).contains(&runner_id))
        };
        let job = held.filter(|id| may_take(self, id)).or_else(|| {
            self.index.open_jobs.iter().copied().find(|id| Some(*id) != held && may_take(self, id))
        });
        self.held.job = held.filter(|id| Some(*id) != job);
        job.map(|request_id| self.give(request_id, runner_id))
    }

    /// Ends the hold of `request_id` (its longest hold is over), if it is still held.
    fn release_held(&mut self, request_id: i64) {
        if self.held.holds(request_id) {
            self.held.job = None;
        }
    }
}

impl FakeGitHub {
    /// A delete of the object named `name` is about to be served: if a runner of that name is idle,
    /// the held job (or else the oldest waiting job) goes to it now, if the assigner could give it
    /// that runner (see [`crate::perturb`]).
    pub fn assign_held_to(&self, name: &str) {
        let assigned = self.shared.mutate(|w| w.assign_held_to(name));
        if let Some(Assignment { request_id, job_started_in: Some(delay), .. }) = assigned {
            super::super::spawn_job_started_timer(&self.shared, request_id, delay);
        }
    }
}

/// Times the release of a hold the assigner just began: after its longest hold the job goes back to
/// the assigner.
pub(in crate::github) fn time_release(shared: &Arc<Shared>) {
    let Some((request_id, max_hold_ms)) = shared.lock().held.begun.take() else { return };
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(max_hold_ms)).await;
        shared.mutate(|w| w.release_held(request_id));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_assignment_is_held_and_the_nth_request_of_an_operation_delayed() {
        let plan = [
            Perturbation::DelayedAssignment {
                actor: "controller".into(),
                nth_assignment: 2,
                max_hold_ms: 900,
            },
            Perturbation::HeldRequest { operation: "get-message".into(), nth: 2, hold_ms: 500 },
        ];
        let mut held = Held::new(&plan);
        assert!(!held.hold_on_assignment(10));
        assert!(held.hold_on_assignment(11));
        assert!(held.holds(11) && !held.holds(10));
        assert_eq!(held.begun, Some((11, 900)));
        assert!(!held.hold_on_assignment(12));
        let delays: Vec<u128> = ["get-message", "remove-runner", "get-message", "get-message"]
            .iter()
            .map(|op| held.request_delay(op).as_millis())
            .collect();
        assert_eq!(delays, vec![0, 0, 500, 0]);
        let mut none = Held::new(&[]);
        assert!(!none.hold_on_assignment(1));
        assert_eq!(none.request_delay("get-message"), Duration::ZERO);
    }
}
