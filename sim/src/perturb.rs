//! Perturbations: the kinds of fault `arcsim explore` places at a reference run's read and write
//! points, as plan data the fakes and the world carry out: three on the Kubernetes side (Sieve's stale
//! view, intermediate state and unobserved state, carried out by the fake API server and the world),
//! two on the GitHub side (a delayed assignment and a held request, carried out by the fake GitHub)
//! and one on the workload (an extra job, carried out by the world's workload). The GitHub-side kinds
//! only delay what the service does anyway: a job it would assign to a runner is assigned later, a
//! request it would serve is served later; the extra job is one more push by a user.
//!
//! - [`Perturbation::StaleView`]: once the `after_events`-th watch event of `resource` has been queued
//!   for `actor`, every further event of that resource queued for it in the next `hold_ms` is held
//!   until then, so its informer's view stays behind while it reconciles.
//! - [`Perturbation::IntermediateState`]: right after `actor`'s `after_writes`-th successful write,
//!   the world crashes and restarts the controller, leaving whatever it meant to write next unwritten.
//! - [`Perturbation::UnobservedState`]: the `nth_modified`-th MODIFIED event of `resource` queued for
//!   `actor` is parked; if the same object changes again within `window_ms` the parked event is
//!   dropped and only the later one delivered, so the informer never sees the state in between.
//!   (Simplified: a parked event with no successor is delivered at the window's end, after any event
//!   of other objects queued meanwhile; kube-apiserver never reorders a watch, it only coalesces on a
//!   relist.)
//!
//! - [`Perturbation::DelayedAssignment`]: GitHub's `nth_assignment`-th assignment is held: its job
//!   goes to no runner until `actor` deletes an object named after a runner that may take the job
//!   (idle, online, of the job's scale set or carrying its labels); the job is then assigned to that
//!   runner just before the delete is served (with no job held, the oldest waiting job that runner may
//!   take goes to it). After `max_hold_ms` without such a delete the job is released to the assigner.
//!   A held job the workload cancels is canceled while queued, and the runner made for it is left
//!   idle. (The service picks among idle runners after a latency of its own; the plan picks the
//!   moment and the runner, never an assignment the service could not make.)
//! - [`Perturbation::HeldRequest`]: the `nth`-th request of `operation` the fake GitHub receives is
//!   served `hold_ms` later (a held GetMessage is a long poll whose answer lags the queue; a held
//!   RemoveRunner, a removal that lands late).
//! - [`Perturbation::ExtraJob`]: one more job of the workload's kind (its labels and repository) is
//!   queued `at_ms` after the workload starts, lasting `duration_ms`, besides the drawn ones: a push
//!   at a moment the reference run had none (after the workload's last arrival, say, as its last idle
//!   runner is scaled down).
//!
//! Counting is per (actor, resource) over every watch the actor opens, in queueing order; the fake
//! GitHub counts its assignments in the order it makes them and its requests per operation in the
//! order they arrive. Each is deterministic for a seed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One perturbation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Perturbation {
    /// Hold `actor`'s watch events of `resource` for `hold_ms` from its `after_events`-th on.
    StaleView {
        /// The client (its actor header, e.g. `controller`).
        actor: String,
        /// Resource plural.
        resource: String,
        /// Events of the resource queued for the actor before the hold starts (at least 1).
        after_events: u32,
        /// How long the hold lasts.
        hold_ms: u64,
    },
    /// Crash and restart the controller right after `actor`'s `after_writes`-th successful write.
    IntermediateState {
        /// The writer (its actor header).
        actor: String,
        /// Successful creates, updates, patches and deletes before the crash (at least 1).
        after_writes: u32,
    },
    /// Coalesce `actor`'s `nth_modified`-th MODIFIED event of `resource` into the object's next one.
    UnobservedState {
        /// The client.
        actor: String,
        /// Resource plural.
        resource: String,
        /// Which MODIFIED event (from 1).
        nth_modified: u32,
        /// How long the parked event waits for a successor.
        window_ms: u64,
    },
    /// Hold GitHub's `nth_assignment`-th assignment until `actor` deletes a runner that may take it.
    DelayedAssignment {
        /// The client whose deletes release the job (its actor header at the API server).
        actor: String,
        /// Which of the service's assignments (from 1) is held.
        nth_assignment: u32,
        /// How long the job is held at most.
        max_hold_ms: u64,
    },
    /// Serve the `nth`-th request of `operation` to the fake GitHub `hold_ms` late.
    HeldRequest {
        /// The operation (`get-message`, `remove-runner`, `list-runners`, ...).
        operation: String,
        /// Which of its requests (from 1).
        nth: u32,
        /// The extra delay before it is served.
        hold_ms: u64,
    },
    /// Queue one more job of the workload's kind at `at_ms`.
    ExtraJob {
        /// When it is queued, in sim ms after the workload starts.
        at_ms: u64,
        /// How long it runs once started.
        duration_ms: u64,
    },
}

impl Perturbation {
    /// Whether the fake GitHub carries it out (rather than the API server and the world).
    pub fn on_github(&self) -> bool {
        matches!(self, Perturbation::DelayedAssignment { .. } | Perturbation::HeldRequest { .. })
    }
}

/// What the perturbations say about one watch event being queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventFate {
    /// Deliver no earlier than this sim ms (a stale-view hold).
    pub hold_until_ms: Option<u64>,
    /// Park the event this long, waiting for the object's next event (unobserved state).
    pub park_ms: Option<u64>,
}

/// The perturbations of a run and their counters.
#[derive(Debug, Clone, Default)]
pub struct Perturbations {
    plan: Vec<Perturbation>,
    events: BTreeMap<(String, String), u32>,
    modified: BTreeMap<(String, String), u32>,
    holds: BTreeMap<(String, String), u64>,
    writes: BTreeMap<String, u32>,
}

impl Perturbations {
    /// Counters at zero for `plan`.
    pub fn new(plan: &[Perturbation]) -> Self {
        Perturbations { plan: plan.to_vec(), ..Perturbations::default() }
    }

    /// Counts an event of `resource` queued for `actor` at `now_ms` (`modified`: a MODIFIED event) and
    /// says what becomes of it.
    pub fn on_event(&mut self, actor: &str, resource: &str, modified: bool, now_ms: u64) -> EventFate {
        if self.plan.is_empty() {
            return EventFate::default();
        }
        let key = (actor.to_string(), resource.to_string());
        let events = bump(&mut self.events, key.clone());
        let nth_modified = if modified { bump(&mut self.modified, key.clone()) } else { 0 };
        let mut fate = EventFate::default();
        for p in &self.plan {
            match p {
                Perturbation::StaleView { actor: a, resource: r, after_events, hold_ms }
                    if a == actor && r == resource && events == *after_events =>
                {
                    self.holds.insert(key.clone(), now_ms + hold_ms);
                }
                Perturbation::UnobservedState { actor: a, resource: r, nth_modified: n, window_ms }
                    if a == actor && r == resource && modified && nth_modified == *n =>
                {
                    fate.park_ms = Some(*window_ms);
                }
                _ => {}
            }
        }
        fate.hold_until_ms = self.holds.get(&key).copied().filter(|until| *until > now_ms);
        fate
    }

    /// Counts a successful write by `actor`; true when it is the one a crash must follow.
    pub fn on_write(&mut self, actor: &str) -> bool {
        if self.plan.is_empty() {
            return false;
        }
        let writes = bump(&mut self.writes, actor.to_string());
        self.plan.iter().any(|p| {
            matches!(p, Perturbation::IntermediateState { actor: a, after_writes }
                if a == actor && *after_writes == writes)
        })
    }
}

fn bump<K: Ord>(counts: &mut BTreeMap<K, u32>, key: K) -> u32 {
    let n = counts.entry(key).or_insert(0);
    *n += 1;
    *n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_view_holds_the_events_after_the_kth_for_its_span() {
        let plan = [Perturbation::StaleView {
            actor: "controller".into(),
            resource: "pods".into(),
            after_events: 2,
            hold_ms: 1_000,
        }];
        let mut p = Perturbations::new(&plan);
        assert_eq!(p.on_event("controller", "pods", false, 10).hold_until_ms, None);
        assert_eq!(p.on_event("kubelet", "pods", false, 10).hold_until_ms, None);
        assert_eq!(p.on_event("controller", "pods", false, 20).hold_until_ms, Some(1_020));
        assert_eq!(p.on_event("controller", "pods", true, 500).hold_until_ms, Some(1_020));
        assert_eq!(p.on_event("controller", "secrets", true, 500).hold_until_ms, None);
        assert_eq!(p.on_event("controller", "pods", true, 1_020).hold_until_ms, None);
    }

    #[test]
    fn the_nth_modified_event_is_parked_and_the_nth_write_crashes() {
        let plan = [
            Perturbation::UnobservedState {
                actor: "controller".into(),
                resource: "ephemeralrunners".into(),
                nth_modified: 2,
                window_ms: 500,
            },
            Perturbation::IntermediateState { actor: "controller".into(), after_writes: 3 },
        ];
        let mut p = Perturbations::new(&plan);
        let fates: Vec<Option<u64>> = [false, true, true, true]
            .iter()
            .map(|m| p.on_event("controller", "ephemeralrunners", *m, 0).park_ms)
            .collect();
        assert_eq!(fates, vec![None, None, Some(500), None]);
        let crashes: Vec<bool> = (0..4).map(|_| p.on_write("controller")).collect();
        assert_eq!(crashes, vec![false, false, true, false]);
        assert!(!p.on_write("kubelet"));
    }
}
