//! Race 1's windows (ARC-MODEL §8.1): the controller acted on a runner pod its cache had not caught up
//! with. A pod create answered AlreadyExists counts only when the controller had not yet been handed
//! the incarnation that was in its way; a pod delete answered NotFound only when it had not yet been
//! handed the deletion. A retry after the controller saw the pod, or a 409 on some other pod, is not
//! the race.

use arc_sim::apiserver::EventType;
use arc_sim::faults::ApiVerb;
use arc_sim::world::RunRecord;
use serde_json::Value;

use super::history::{Commits, Handed};

/// Whether a pod is a runner pod (controlled by an EphemeralRunner).
fn is_runner_pod(pod: &Value) -> bool {
    pod.pointer("/metadata/ownerReferences").and_then(Value::as_array).is_some_and(|refs| {
        refs.iter().any(|r| {
            r.get("kind").and_then(Value::as_str) == Some("EphemeralRunner")
                && r.get("controller").and_then(Value::as_bool) == Some(true)
        })
    })
}

/// Runner-pod creates by the controller answered 409 while the pod in the way had not reached the
/// controller's cache.
pub fn pod_create_met_unseen_pod(run: &RunRecord) -> u32 {
    let commits = Commits::of(run, "pods");
    let handed = Handed::to(run, "controller", "pods");
    let conflicts = run.audit().filter(|a| {
        a.resource == "pods" && a.verb == ApiVerb::Create && a.code == 409 && a.actor == "controller"
    });
    let mut hits = 0;
    for a in conflicts {
        let key = format!("{}/{}", a.namespace, a.name);
        let Some(created) = commits.created_before(&key, a.ms) else { continue };
        if is_runner_pod(&created.object) && !handed.saw(&key, created.rv, a.ms) {
            hits += 1;
        }
    }
    hits
}

/// Runner-pod deletes by the controller answered 404 while the pod's deletion had not reached the
/// controller's cache.
pub fn pod_delete_met_unseen_deletion(run: &RunRecord) -> u32 {
    let commits = Commits::of(run, "pods");
    let handed = Handed::to(run, "controller", "pods");
    let misses = run.audit().filter(|a| {
        a.resource == "pods" && a.verb == ApiVerb::Delete && a.code == 404 && a.actor == "controller"
    });
    let mut hits = 0;
    for a in misses {
        let key = format!("{}/{}", a.namespace, a.name);
        let Some(last) = commits.last_before(&key, a.ms) else { continue };
        if last.kind == EventType::Deleted && is_runner_pod(&last.object) && !handed.saw(&key, last.rv, a.ms)
        {
            hits += 1;
        }
    }
    hits
}

/// Either of the above: the controller acted on a runner pod its cache had not caught up with.
pub fn stale_pod_cache_read(run: &RunRecord) -> u32 {
    pod_create_met_unseen_pod(run) + pod_delete_met_unseen_deletion(run)
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::apiserver::reads::{ReadEntry, ReadVia};
    use arc_sim::faults::ApiVerb;
    use arc_sim::world::RunRecord;
    use arc_sim::world::synthetic::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{NS, pod, request};

    /// The controller's cache got version `rv` of pod `r-1` at `ms`.
    fn read(ms: u64, rv: u64) -> ReadEntry {
        let key = format!("{NS}/r-1");
        ReadEntry { ms, actor: "controller".into(), resource: "pods".into(), key, rv, via: ReadVia::Watch }
    }

    /// Pod `r-1` (owned by its runner) is committed at rv 1 at 100 ms; the controller creates it again
    /// at 200 ms and is answered 409; `read_at` is when its cache got the pod, if it did.
    fn conflict(read_at: Option<u64>) -> RunRecord {
        let mut run = SyntheticRun::new().committed(100, "pods", EventType::Added, pod("r-1", "uid-r-1"));
        if let Some(ms) = read_at.filter(|ms| *ms < 200) {
            run = run.event(ms, read(ms, 1));
        }
        run = run.event(200, request(200, "controller", ApiVerb::Create, "pods", "r-1", 409));
        if let Some(ms) = read_at.filter(|ms| *ms >= 200) {
            run = run.event(ms, read(ms, 1));
        }
        run.build()
    }

    /// Pod `r-1` is created (rv 1) and deleted (rv 2); the controller deletes it at 200 ms and is
    /// answered 404, having been handed the deletion at 180 ms or not.
    fn missed_delete(saw_deletion: bool) -> RunRecord {
        let mut run = SyntheticRun::new()
            .committed(100, "pods", EventType::Added, pod("r-1", "uid-r-1"))
            .committed(150, "pods", EventType::Deleted, pod("r-1", "uid-r-1"));
        if saw_deletion {
            run = run.event(180, read(180, 2));
        }
        run.event(200, request(200, "controller", ApiVerb::Delete, "pods", "r-1", 404)).build()
    }

    #[test]
    fn a_conflict_counts_only_while_the_pod_had_not_reached_the_cache() {
        assert_eq!(pod_create_met_unseen_pod(&conflict(None)), 1);
        assert_eq!(pod_create_met_unseen_pod(&conflict(Some(250))), 1, "read after the create");
        assert_eq!(pod_create_met_unseen_pod(&conflict(Some(150))), 0, "the controller had seen it");
    }

    #[test]
    fn a_not_found_delete_counts_only_while_the_deletion_had_not_reached_the_cache() {
        assert_eq!(pod_delete_met_unseen_deletion(&missed_delete(false)), 1);
        assert_eq!(pod_delete_met_unseen_deletion(&missed_delete(true)), 0);
        assert_eq!(stale_pod_cache_read(&missed_delete(false)), 1);
        assert_eq!(stale_pod_cache_read(&conflict(Some(150))), 0);
    }
}
