//! Counting functions of the windows the fake API server's partial failures and watch cache open: a
//! write that committed and was then failed, the writer's retry meeting its own committed write, and a
//! read served from a watch cache that was behind the store.

use std::collections::BTreeSet;

use arc_sim::apiserver::{ApiFault, CacheRead};
use arc_sim::faults::ApiVerb;
use arc_world::RunRecord;

/// Writes that committed and were then answered 500/504 or not at all.
pub fn api_committed_then_failed(run: &RunRecord) -> u32 {
    run.events_of::<ApiFault>().filter(|f| f.after_commit()).count() as u32
}

/// Requests that met the answer a retry of a committed write meets (AlreadyExists on create, NotFound
/// on delete, Conflict on update or patch), from the actor whose earlier write of the same verb on the
/// same object committed and was failed. A create's audit entry names the object it made, so a retry
/// by name matches it; a `generateName` retry makes a new object and never matches.
pub fn retry_met_committed_write(run: &RunRecord) -> u32 {
    let mut committed: BTreeSet<(&str, ApiVerb, &str, &str, &str)> = BTreeSet::new();
    let mut hits = 0;
    for a in run.audit() {
        let key = (a.actor.as_str(), a.verb, a.resource.as_str(), a.namespace.as_str(), a.name.as_str());
        if a.committed_then_failed {
            committed.insert(key);
            continue;
        }
        let answer_of_retry = match a.verb {
            ApiVerb::Create => a.reason == "AlreadyExists",
            ApiVerb::Delete => a.reason == "NotFound",
            ApiVerb::Update | ApiVerb::Patch => a.reason == "Conflict",
            _ => false,
        };
        if answer_of_retry && committed.remove(&key) {
            hits += 1;
        }
    }
    hits
}

/// Lists and watches served from a watch cache that lacked changes the store had in their scope.
pub fn stale_read_from_watch_cache(run: &RunRecord) -> u32 {
    run.events_of::<CacheRead>().filter(|r| r.stale()).count() as u32
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::{AuditEntry, FaultEffect};
    use arc_world::SyntheticRun;

    use super::*;
    use crate::oracles::fixtures::{NS, request};

    fn failed_after_commit(ms: u64, verb: ApiVerb, name: &str) -> AuditEntry {
        let mut a = request(ms, "controller", verb, "pods", name, 504);
        a.reason = "Timeout".into();
        a.committed_then_failed = true;
        a
    }

    fn refused(ms: u64, verb: ApiVerb, name: &str, code: u16, reason: &str) -> AuditEntry {
        let mut a = request(ms, "controller", verb, "pods", name, code);
        a.reason = reason.into();
        a
    }

    fn fault(effect: FaultEffect) -> ApiFault {
        ApiFault {
            actor: Some("controller".into()),
            verb: ApiVerb::Create,
            resource: "pods".into(),
            namespace: NS.into(),
            name: "p".into(),
            target: format!("{NS}/*"),
            effect,
        }
    }

    fn cache_read(behind: usize) -> CacheRead {
        CacheRead {
            actor: Some("controller".into()),
            verb: ApiVerb::List,
            resource: "pods".into(),
            namespace: NS.into(),
            requested_rv: "0".into(),
            cache_rv: 10,
            store_rv: 10 + behind as u64,
            behind,
        }
    }

    #[test]
    fn a_retry_counts_when_it_meets_the_writers_own_committed_write() {
        let run = SyntheticRun::new()
            .event(1_000, failed_after_commit(1_000, ApiVerb::Create, "p"))
            .event(2_000, refused(2_000, ApiVerb::Create, "p", 409, "AlreadyExists"))
            .event(3_000, failed_after_commit(3_000, ApiVerb::Delete, "p"))
            .event(4_000, refused(4_000, ApiVerb::Delete, "p", 404, "NotFound"))
            .build();
        assert_eq!(retry_met_committed_write(&run), 2);
    }

    #[test]
    fn quiet_control_a_409_without_a_committed_failure_before_it_is_not_counted() {
        let run = SyntheticRun::new()
            .event(1_000, refused(1_000, ApiVerb::Create, "p", 500, "InternalError"))
            .event(2_000, refused(2_000, ApiVerb::Create, "p", 409, "AlreadyExists"))
            .event(3_000, failed_after_commit(3_000, ApiVerb::Create, "q"))
            .event(4_000, refused(4_000, ApiVerb::Create, "other", 409, "AlreadyExists"))
            .build();
        assert_eq!(retry_met_committed_write(&run), 0, "refused before the commit, or another object");
    }

    #[test]
    fn only_faults_after_the_commit_count() {
        let run = SyntheticRun::new()
            .event(1_000, fault(FaultEffect::CommittedThenDropped))
            .event(2_000, fault(FaultEffect::CommittedThenAnswered { code: 500 }))
            .build();
        assert_eq!(api_committed_then_failed(&run), 2);
        let quiet = SyntheticRun::new()
            .event(1_000, fault(FaultEffect::Refused { code: 503 }))
            .event(2_000, fault(FaultEffect::Delayed { ms: 40 }))
            .build();
        assert_eq!(api_committed_then_failed(&quiet), 0, "quiet control: faults before the commit");
    }

    #[test]
    fn only_cache_reads_behind_the_store_count() {
        let run = SyntheticRun::new().event(1_000, cache_read(2)).event(2_000, cache_read(0)).build();
        assert_eq!(stale_read_from_watch_cache(&run), 1);
        let quiet = SyntheticRun::new().event(1_000, cache_read(0)).build();
        assert_eq!(stale_read_from_watch_cache(&quiet), 0, "quiet control: a cache that had caught up");
    }
}
