//! The window of #4580's finalizer short circuit as the record shows it, whatever the controller: a
//! user (not the controller) deleted an EphemeralRunner that registers at GitHub, before its pod was
//! created. The pass that registers a runner ends by creating its pod, so such a deletion lands in
//! that pass or before it (the pass then registers a runner that is already being deleted). In ARC
//! HEAD with a runner created without finalizers the registration finalizer is added only by the
//! next pass, so such a deletion skips RemoveRunner.

use arc_sim::faults::ApiVerb;
use arc_sim::github::EventKind;
use arc_world::RunRecord;

/// The actor the world's own requests (`kubectl`) carry.
const USER: &str = "user";

/// User deletes of an EphemeralRunner whose name was registered at GitHub (before the delete or
/// after it) while no pod of that name had been created yet. Runner names come from `generateName`,
/// so a name stands for one runner.
pub fn runner_deleted_while_registering(run: &RunRecord) -> u32 {
    let registered: Vec<&str> = run
        .github_events()
        .filter_map(|e| match &e.kind {
            EventKind::RunnerRegistered { name, scale_set_id: Some(_), .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let pods_created: Vec<(u64, &str)> = run
        .audit()
        .filter(|a| a.resource == "pods" && a.verb == ApiVerb::Create && a.code == 201)
        .map(|a| (a.served_ms, a.name.as_str()))
        .collect();
    let user_deletes = run.audit().filter(|a| {
        a.resource == "ephemeralrunners" && a.verb == ApiVerb::Delete && a.actor == USER && a.code < 300
    });
    let mut hits = 0;
    for delete in user_deletes {
        let name = delete.name.as_str();
        let pod_before = pods_created.iter().any(|(ms, n)| *n == name && *ms <= delete.served_ms);
        hits += u32::from(registered.contains(&name) && !pod_before);
    }
    hits
}

#[cfg(test)]
mod tests {
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{github, request};

    /// Runner `r-1` registers at `registered_at`; its pod is created at `pod_at` (if at all); `actor`
    /// deletes it at 2 000 ms.
    fn deleted_registered_at(registered_at: u64, pod_at: Option<u64>, actor: &str) -> RunRecord {
        let registered =
            EventKind::RunnerRegistered { runner_id: 7, name: "r-1".into(), scale_set_id: Some(1) };
        let mut run = SyntheticRun::new().event(registered_at, github(registered_at, registered));
        if let Some(ms) = pod_at {
            run = run.event(ms, request(ms, "controller", ApiVerb::Create, "pods", "r-1", 201));
        }
        run.event(2_000, request(2_000, actor, ApiVerb::Delete, "ephemeralrunners", "r-1", 200)).build()
    }

    fn deleted(pod_at: Option<u64>, actor: &str) -> RunRecord {
        deleted_registered_at(1_000, pod_at, actor)
    }

    #[test]
    fn a_user_delete_counts_before_the_pod_of_a_runner_that_registers() {
        assert_eq!(runner_deleted_while_registering(&deleted(None, USER)), 1);
        assert_eq!(runner_deleted_while_registering(&deleted(Some(3_000), USER)), 1, "pod after the delete");
        assert_eq!(runner_deleted_while_registering(&deleted(Some(1_500), USER)), 0, "the pass had ended");
        assert_eq!(runner_deleted_while_registering(&deleted(None, "controller")), 0, "not a user");
        let registered_later = deleted_registered_at(2_500, Some(2_600), USER);
        assert_eq!(runner_deleted_while_registering(&registered_later), 1, "its pass registered it after");
        let unregistered = SyntheticRun::new()
            .event(2_000, request(2_000, USER, ApiVerb::Delete, "ephemeralrunners", "r-1", 200))
            .build();
        assert_eq!(runner_deleted_while_registering(&unregistered), 0, "never registered");
    }
}
