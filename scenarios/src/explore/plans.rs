//! Plans generated from a reference run's points: one perturbation each, the three kinds taken in
//! turn, each kind's points spread evenly over the run, so a budget of N runs reaches N/3 points of
//! each kind from the first to the last. A stale view holds an ADDED or DELETED event (a creation or
//! deletion the controller does not see yet: objects it just created itself, mostly); an unobserved
//! state coalesces a MODIFIED event, the resources taking turns; an intermediate state follows a write.

use arc_sim::perturb::Perturbation;

use super::points::{CONTROLLER, ReadPoint, WritePoint};

/// How long a stale view holds the controller's events (about a few reconciles of its requeues).
pub const HOLD_MS: u64 = 3_000;
/// How long an unobserved state waits for the object's next event.
pub const COALESCE_WINDOW_MS: u64 = 2_000;

/// One generated plan and the point it perturbs.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The perturbation.
    pub perturbation: Perturbation,
    /// The read point it perturbs (stale view, unobserved state).
    pub read: Option<ReadPoint>,
    /// The write point it perturbs (intermediate state).
    pub write: Option<WritePoint>,
}

/// Up to `budget` plans over `reads` and `writes`.
pub fn plans(reads: &[ReadPoint], writes: &[WritePoint], budget: usize) -> Vec<Plan> {
    let modified: Vec<&ReadPoint> = reads.iter().filter(|r| r.nth_modified.is_some()).collect();
    let appeared_or_gone: Vec<&ReadPoint> = reads.iter().filter(|r| r.nth_modified.is_none()).collect();
    let all_writes: Vec<&WritePoint> = writes.iter().collect();
    let mut stale = spread(&appeared_or_gone, share(budget, 0)).into_iter().map(stale_view);
    let mut crash = spread(&all_writes, share(budget, 1)).into_iter().map(intermediate_state);
    let mut coalesce = by_resource(&modified, share(budget, 2)).into_iter().map(unobserved_state);
    let mut out = Vec::new();
    loop {
        let before = out.len();
        out.extend(stale.next());
        out.extend(crash.next());
        out.extend(coalesce.next());
        if out.len() == before {
            return out;
        }
    }
}

/// Kind `k`'s share of `budget` (the first kinds take the remainder).
fn share(budget: usize, k: usize) -> usize {
    budget / 3 + usize::from(k < budget % 3)
}

/// `count` items of `items` spread evenly from the first (all of them when there are fewer).
fn spread<'a, T>(items: &[&'a T], count: usize) -> Vec<&'a T> {
    if count >= items.len() {
        return items.to_vec();
    }
    (0..count).map(|i| items[i * items.len() / count]).collect()
}

/// `count` read points: the resources (by name) take turns, each one's points spread evenly.
fn by_resource<'a>(reads: &[&'a ReadPoint], count: usize) -> Vec<&'a ReadPoint> {
    let mut resources: Vec<&str> = reads.iter().map(|r| r.resource.as_str()).collect();
    resources.sort_unstable();
    resources.dedup();
    let per_resource: Vec<Vec<&ReadPoint>> = resources
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let own: Vec<&ReadPoint> = reads.iter().copied().filter(|r| r.resource == *name).collect();
            let share = count / resources.len() + usize::from(i < count % resources.len());
            spread(&own, share)
        })
        .collect();
    let longest = per_resource.iter().map(Vec::len).max().unwrap_or(0);
    let turns = (0..longest).flat_map(|i| per_resource.iter().filter_map(move |picks| picks.get(i).copied()));
    turns.take(count).collect()
}

fn stale_view(read: &ReadPoint) -> Plan {
    let perturbation = Perturbation::StaleView {
        actor: CONTROLLER.into(),
        resource: read.resource.clone(),
        after_events: read.nth,
        hold_ms: HOLD_MS,
    };
    Plan { perturbation, read: Some(read.clone()), write: None }
}

fn intermediate_state(write: &WritePoint) -> Plan {
    let perturbation = Perturbation::IntermediateState { actor: CONTROLLER.into(), after_writes: write.nth };
    Plan { perturbation, read: None, write: Some(write.clone()) }
}

fn unobserved_state(read: &ReadPoint) -> Plan {
    let perturbation = Perturbation::UnobservedState {
        actor: CONTROLLER.into(),
        resource: read.resource.clone(),
        nth_modified: read.nth_modified.unwrap_or(1),
        window_ms: COALESCE_WINDOW_MS,
    };
    Plan { perturbation, read: Some(read.clone()), write: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(nth: u32, modified: Option<u32>) -> ReadPoint {
        let kind = if modified.is_some() { "MODIFIED" } else { "ADDED" };
        ReadPoint { resource: "pods".into(), object: "ns/p".into(), kind, nth, nth_modified: modified }
    }

    #[test]
    fn the_kinds_take_turns_and_spread_over_the_run() {
        let reads: Vec<ReadPoint> = (1..=30).map(|n| read(n, (n % 2 == 0).then_some(n / 2))).collect();
        let mut secrets = read(31, Some(1));
        secrets.resource = "secrets".into();
        let with_secrets: Vec<ReadPoint> = reads.iter().cloned().chain([secrets]).collect();
        let coalesced: Vec<String> = plans(&with_secrets, &[], 9)
            .into_iter()
            .filter_map(|p| p.read.filter(|_| matches!(p.perturbation, Perturbation::UnobservedState { .. })))
            .map(|r| format!("{}#{}", r.resource, r.nth))
            .collect();
        assert_eq!(coalesced, ["pods#2", "secrets#31", "pods#16"], "resources take turns");
        let writes: Vec<WritePoint> = (1..=9)
            .map(|nth| WritePoint { nth, verb: "create", resource: "pods".into(), object: "ns/p".into() })
            .collect();
        let out = plans(&reads, &writes, 7);
        assert_eq!(out.len(), 7);
        assert!(matches!(out[0].perturbation, Perturbation::StaleView { after_events: 1, .. }));
        assert!(matches!(out[1].perturbation, Perturbation::IntermediateState { after_writes: 1, .. }));
        assert!(matches!(out[2].perturbation, Perturbation::UnobservedState { nth_modified: 1, .. }));
        assert!(matches!(out[3].perturbation, Perturbation::StaleView { after_events: 11, .. }));
        assert!(out.iter().all(|p| !matches!(&p.perturbation, Perturbation::StaleView { after_events, .. } if after_events % 2 == 0)), "stale views hold ADDED events");
        assert_eq!(plans(&reads, &[], 3).len(), 2, "no writes: no intermediate-state plan");
    }
}
