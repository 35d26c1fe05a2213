//! [`RunnerStates`]: every committed EphemeralRunner version as most judges read it (its uid, phase,
//! runner id, job id, deletion and owning set), read out of its JSON once per record and shared. A
//! 1,000-runner record holds some 30,000 runner versions among 1.5 GB of JSON trees, and a judge that
//! looked these fields up in each version paid the cache misses of walking them again: six judges read
//! them. The fields keep the meaning of the [`crate::view`] helpers that read them from JSON.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_sim::apiserver::Change;
use arc_world::RunRecord;
use serde_json::Value;

use crate::view::{controller_uid, is_deleting, runner_id, runner_phase, str_at, uid_of};

/// One committed version of an EphemeralRunner.
pub struct RunnerState {
    /// Sim ms of the commit.
    pub ms: u64,
    /// The change, for what the fields below leave out (its key, kind, resourceVersion, object).
    pub change: Arc<Change>,
    /// `metadata.uid` ([`uid_of`]: empty when unset).
    pub uid: Box<str>,
    /// `status.phase` as ARC reads it ([`runner_phase`]: Pending when unset).
    pub phase: Box<str>,
    /// `status.runnerId` ([`runner_id`]: 0 when unregistered).
    pub runner_id: i64,
    /// `status.jobId`, when set and not empty.
    pub job_id: Option<Box<str>>,
    /// Whether it carries a deletionTimestamp ([`is_deleting`]).
    pub deleting: bool,
    /// The uid of its controlling ownerReference ([`controller_uid`]).
    pub owner_uid: Option<Box<str>>,
    /// Where the version this one replaced sits ([`RunnerStates::before`]).
    previous: Option<usize>,
}

impl RunnerState {
    /// Whether the fields read here are the same in `other`. Each is a function of the JSON fields it
    /// reads, so a version that differs here differs in those fields too.
    pub fn reads_alike(&self, other: &RunnerState) -> bool {
        (&self.uid, &self.phase, self.runner_id, &self.job_id, self.deleting, &self.owner_uid)
            == (&other.uid, &other.phase, other.runner_id, &other.job_id, other.deleting, &other.owner_uid)
    }

    fn of(ms: u64, change: &Arc<Change>, previous: Option<usize>) -> Self {
        let object = &change.object;
        RunnerState {
            ms,
            change: Arc::clone(change),
            uid: uid_of(object).into(),
            phase: runner_phase(object).into(),
            runner_id: runner_id(object),
            job_id: str_at(object, "/status/jobId").map(Into::into),
            deleting: is_deleting(object),
            owner_uid: controller_uid(object).map(Into::into),
            previous,
        }
    }
}

/// Every committed EphemeralRunner version of a record, in commit order (the order of
/// `run.changes_of("ephemeralrunners")`).
pub struct RunnerStates {
    states: Vec<RunnerState>,
    /// Where the version committed at each resourceVersion sits.
    by_rv: BTreeMap<u64, usize>,
}

impl RunnerStates {
    /// The runner versions of `run`, read once per record.
    pub fn of(run: &RunRecord) -> Arc<RunnerStates> {
        run.derived("runner states", |run| {
            // Each version by the address of its object, to find the one a change replaced (its `old`
            // is that version's object): looked up, never iterated, so addresses reach no result.
            let mut by_object: BTreeMap<*const Value, usize> = BTreeMap::new();
            let mut states = Vec::new();
            let mut by_rv = BTreeMap::new();
            for (i, (ms, change)) in run.changes_of("ephemeralrunners").enumerate() {
                let previous = change.old.as_ref().and_then(|old| by_object.get(&Arc::as_ptr(old)).copied());
                states.push(RunnerState::of(ms, change, previous));
                by_object.insert(Arc::as_ptr(&change.object), i);
                by_rv.insert(change.rv, i);
            }
            RunnerStates { states, by_rv }
        })
    }

    /// The versions in commit order.
    pub fn iter(&self) -> std::slice::Iter<'_, RunnerState> {
        self.states.iter()
    }

    /// The version committed at resourceVersion `rv`.
    pub fn at_rv(&self, rv: u64) -> Option<&RunnerState> {
        self.by_rv.get(&rv).map(|&i| &self.states[i])
    }

    /// The version of `key` (`namespace/name`) committed at resourceVersion `rv`.
    pub fn version(&self, key: &str, rv: u64) -> Option<&RunnerState> {
        let of_key =
            |s: &&RunnerState| key.split_once('/') == Some((&s.change.key.namespace, &s.change.key.name));
        self.at_rv(rv).filter(of_key)
    }

    /// The version `state` replaced: the one whose object is its change's `old` (none for a creation).
    pub fn before(&self, state: &RunnerState) -> Option<&RunnerState> {
        state.previous.map(|i| &self.states[i])
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::store::StoreKey;
    use arc_sim::apiserver::{Committed, EventType};
    use arc_world::SyntheticRun;
    use serde_json::json;

    use super::*;
    use crate::oracles::fixtures::er;

    #[test]
    fn each_field_reads_as_its_view_helper_reads_the_json() {
        let mut deleting = er("r-1", "u1", Some("Running"), 7, Some("41"));
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        deleting["metadata"]["ownerReferences"] =
            json!([{"uid": "not-it", "controller": false}, {"uid": "set-1", "controller": true}]);
        let mut empty_job = er("r-2", "u2", None, 0, None);
        empty_job["status"]["jobId"] = json!("");
        let run = SyntheticRun::new()
            .committed(5, "ephemeralrunners", EventType::Modified, deleting)
            .committed(6, "pods", EventType::Added, json!({"metadata": {"name": "p", "uid": "pu"}}))
            .committed(7, "ephemeralrunners", EventType::Added, empty_job)
            .build();
        let states = RunnerStates::of(&run);
        let read: Vec<_> = states
            .iter()
            .map(|s| {
                (
                    s.ms,
                    &*s.uid,
                    &*s.phase,
                    s.runner_id,
                    s.job_id.as_deref(),
                    s.deleting,
                    s.owner_uid.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            read,
            vec![
                (5, "u1", "Running", 7, Some("41"), true, Some("set-1")),
                (7, "u2", "Pending", 0, None, false, None),
            ]
        );
        assert!(Arc::ptr_eq(&states, &RunnerStates::of(&run)), "read once per record");
        let second = states.iter().nth(1).expect("two versions");
        assert!(states.before(second).is_none(), "another key's version is not before it");
        assert!(!second.reads_alike(states.iter().next().expect("a first")));
    }

    #[test]
    fn a_version_finds_the_one_it_replaced_and_its_resource_version() {
        // As the API server records them: an update's `old` is the object of the version it replaced.
        let change = |rv: u64, kind, name: &str, old: Option<&Arc<Change>>| {
            let object = er(name, &format!("u-{name}"), None, 0, None);
            let key = StoreKey { resource: 0, namespace: "arc".into(), name: name.into() };
            let old = old.map(|o| Arc::clone(&o.object));
            Arc::new(Change { rv, kind, key, object: Arc::new(object), old, wire: Default::default() })
        };
        let first = change(1, EventType::Added, "r-1", None);
        let other = change(2, EventType::Added, "r-2", None);
        let update = change(3, EventType::Modified, "r-1", Some(&first));
        let committed = |change: &Arc<Change>| Committed {
            resource: "ephemeralrunners".into(),
            change: Arc::clone(change),
        };
        let run = SyntheticRun::new()
            .event(1, committed(&first))
            .event(2, committed(&other))
            .event(3, committed(&update))
            .build();
        let states = RunnerStates::of(&run);
        let last = states.iter().last().expect("three versions");
        let before = states.before(last).expect("r-1's first version");
        assert_eq!((before.ms, &*before.change.key.name), (1, "r-1"));
        assert!(last.reads_alike(before), "same uid, phase, ids, deletion and owner");
        assert!(states.iter().take(2).all(|s| states.before(s).is_none()), "creations replace nothing");
        assert_eq!(states.at_rv(3).map(|s| s.ms), Some(3));
        assert_eq!(states.version("arc/r-1", 3).map(|s| s.ms), Some(3));
        assert!(states.version("arc/r-2", 3).is_none(), "another key's version");
        assert!(states.at_rv(4).is_none());
    }
}
