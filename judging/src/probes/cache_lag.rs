//! Race 1's windows (ARC-MODEL §8.1): the controller acted on a runner pod its cache had not caught up
//! with. A pod create answered AlreadyExists counts only when the controller had not yet been handed
//! the incarnation that was in its way; a pod delete answered NotFound only when it had not yet been
//! handed the deletion. A retry after the controller saw the pod, or a 409 on some other pod, is not
//! the race.

use arc_sim::json_at::At;
use std::collections::BTreeMap;
use std::sync::Arc;

use arc_sim::apiserver::{Change, EventType};
use arc_sim::faults::ApiVerb;
use arc_world::RunRecord;
use serde_json::Value;

use super::history::{Commits, Handed};
use crate::view::is_controller;

/// Whether a pod is a runner pod (controlled by an EphemeralRunner).
fn is_runner_pod(pod: &Value) -> bool {
    pod.at("/metadata/ownerReferences").and_then(Value::as_array).is_some_and(|refs| {
        refs.iter().any(|r| {
            r.get("kind").and_then(Value::as_str) == Some("EphemeralRunner")
                && r.get("controller").and_then(Value::as_bool) == Some(true)
        })
    })
}

/// Runner-pod creates by the controller answered 409 while the pod in the way had not reached the
/// controller's cache.
pub fn pod_create_met_unseen_pod(run: &RunRecord) -> u32 {
    unseen_by_the_answer(run, ApiVerb::Create, 409, |commits, key, ms| commits.created_before(key, ms))
}

/// Runner-pod deletes by the controller answered 404 while the pod's deletion had not reached the
/// controller's cache.
pub fn pod_delete_met_unseen_deletion(run: &RunRecord) -> u32 {
    unseen_by_the_answer(run, ApiVerb::Delete, 404, |commits, key, ms| {
        commits.last_before(key, ms).filter(|last| last.kind == EventType::Deleted)
    })
}

/// The controller's pod requests of `verb` answered `code` for which `in_the_way` names the runner-pod
/// change that caused the answer, and the controller had not yet been handed that change.
fn unseen_by_the_answer<'a>(
    run: &'a RunRecord,
    verb: ApiVerb,
    code: u16,
    in_the_way: impl Fn(&Commits<'a>, &str, u64) -> Option<&'a Arc<Change>>,
) -> u32 {
    let commits = Commits::of(run, "pods");
    let mut handed = HandedToControllers::default();
    let answers = run
        .audit()
        .filter(|a| a.resource == "pods" && a.verb == verb && a.code == code && is_controller(&a.actor));
    let mut hits = 0;
    for a in answers {
        let key = format!("{}/{}", a.namespace, a.name);
        let Some(change) = in_the_way(&commits, &key, a.ms) else { continue };
        if is_runner_pod(&change.object) && !handed.of(run, &a.actor).saw(&key, change.rv, a.ms) {
            hits += 1;
        }
    }
    hits
}

/// Either of the above: the controller acted on a runner pod its cache had not caught up with.
pub fn stale_pod_cache_read(run: &RunRecord) -> u32 {
    pod_create_met_unseen_pod(run) + pod_delete_met_unseen_deletion(run)
}

/// The pods each controller process (the controller, or each replica `controller#i`) was handed,
/// read from the record once per actor.
#[derive(Default)]
struct HandedToControllers(BTreeMap<String, Arc<Handed>>);

impl HandedToControllers {
    fn of(&mut self, run: &RunRecord, actor: &str) -> &Handed {
        self.0.entry(actor.to_string()).or_insert_with(|| Handed::to(run, actor, "pods"))
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
    use arc_sim::apiserver::reads::{ReadEntry, ReadVia};
    use arc_sim::faults::ApiVerb;
    use arc_world::RunRecord;
    use arc_world::SyntheticRun;

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
