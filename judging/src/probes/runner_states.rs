//! [`RunnerStates`]: every committed EphemeralRunner version as most judges read it (its uid, phase,
//! runner id, job id, deletion and owning set), read out of its JSON once per record and shared. A
//! 1,000-runner record holds some 30,000 runner versions among 1.5 GB of JSON trees, and a judge that
//! looked these fields up in each version paid the cache misses of walking them again: a dozen judges
//! read them. The fields keep the meaning of the [`crate::view`] helpers that read them from JSON.

use std::sync::Arc;

use arc_sim::apiserver::Change;
use arc_world::RunRecord;

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
}

impl RunnerState {
    fn of(ms: u64, change: &Arc<Change>) -> Self {
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
        }
    }
}

/// Every committed EphemeralRunner version of a record, in commit order (the order of
/// `run.changes_of("ephemeralrunners")`).
pub struct RunnerStates(Vec<RunnerState>);

impl RunnerStates {
    /// The runner versions of `run`, read once per record.
    pub fn of(run: &RunRecord) -> Arc<RunnerStates> {
        run.derived("runner states", |run| {
            RunnerStates(run.changes_of("ephemeralrunners").map(|(ms, c)| RunnerState::of(ms, c)).collect())
        })
    }

    /// The versions in commit order.
    pub fn iter(&self) -> std::slice::Iter<'_, RunnerState> {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use arc_sim::apiserver::EventType;
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
    }
}
