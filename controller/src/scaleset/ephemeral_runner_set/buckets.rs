//! The runners of one EphemeralRunnerSet sorted into ARC's buckets (`ephemeralRunnersByState`,
//! ARC-MODEL §3.2 step 7, with the \[V\] `staleOutdated` bucket of §5.4).
//!
//! A deleting runner goes to `deleting` whatever its phase; a live runner that carries the removal mark,
//! has no job and is not done goes to `removing` (arcsim's `fixes.delete_removed_runner_first`: its
//! registration is gone or going, and its removal must be finished); every other runner goes by phase:
//! Running → `running`, Succeeded → `finished`, Failed → `failed`, Outdated → `outdated` (or
//! `stale_outdated` when it was created for a revision older than the set's applied one), anything
//! else, an empty phase included, → `pending`. `latest_patch_id` is the largest `patch-id`
//! annotation over *all* listed runners, deleting ones included. Buckets keep the listing order;
//! [`RunnerBuckets::scale_down_candidates`] sorts by age.

use std::sync::Arc;

use super::digests::{Digested, RunnerDigest};
use crate::crd::{EphemeralRunner, EphemeralRunnerPhase};

/// The owned runners of one set, by state.
#[derive(Debug, Default, Clone)]
pub(crate) struct RunnerBuckets {
    /// Pending or phase-less: starting, or (in \[V\]) online and idle.
    pub pending: Vec<Arc<EphemeralRunner>>,
    /// Running: upstream, the pod runs; \[V\], the listener saw a job start.
    pub running: Vec<Arc<EphemeralRunner>>,
    /// Succeeded.
    pub finished: Vec<Arc<EphemeralRunner>>,
    /// Failed.
    pub failed: Vec<Arc<EphemeralRunner>>,
    /// Outdated at a revision at or above the set's applied revision: these make the set Outdated.
    pub outdated: Vec<Arc<EphemeralRunner>>,
    /// \[V\] Outdated at a revision below the applied one: deleted and replaced, no effect on the phase.
    pub stale_outdated: Vec<Arc<EphemeralRunner>>,
    /// Being deleted (deletionTimestamp set), whatever the phase.
    pub deleting: Vec<Arc<EphemeralRunner>>,
    /// Live, without a job, not done, and marked for removal: a removal begun and not finished.
    pub removing: Vec<Arc<EphemeralRunner>>,
    /// The largest `actions.github.com/patch-id` over every listed runner; 0 when none parses.
    pub latest_patch_id: i64,
}

impl RunnerBuckets {
    /// Sorts `runners` into buckets; `applied_revision` is the set's `status.appliedActionableRevision`.
    pub(crate) fn of(runners: impl IntoIterator<Item = Arc<EphemeralRunner>>, applied_revision: i64) -> Self {
        let digested = runners.into_iter().map(|runner| {
            let digest = RunnerDigest::of(&runner);
            (runner, digest)
        });
        Self::of_digested(digested, applied_revision)
    }

    /// Sorts runners into buckets by their digests (what [`RunnerBuckets::of`] reads of each).
    pub(crate) fn of_digested(runners: impl IntoIterator<Item = Digested>, applied_revision: i64) -> Self {
        let mut buckets = RunnerBuckets::default();
        for (runner, digest) in runners {
            buckets.latest_patch_id = buckets.latest_patch_id.max(digest.patch_id);
            let bucket = match digest.phase {
                _ if digest.deleting => &mut buckets.deleting,
                phase if digest.marked && !digest.has_job && !phase.is_terminal() => &mut buckets.removing,
                EphemeralRunnerPhase::Running => &mut buckets.running,
                EphemeralRunnerPhase::Succeeded => &mut buckets.finished,
                EphemeralRunnerPhase::Failed => &mut buckets.failed,
                EphemeralRunnerPhase::Outdated if digest.revision < applied_revision => {
                    &mut buckets.stale_outdated
                }
                EphemeralRunnerPhase::Outdated => &mut buckets.outdated,
                EphemeralRunnerPhase::Pending => &mut buckets.pending,
            };
            bucket.push(runner);
        }
        buckets
    }

    /// ARC's `scaleTotal`: pending + running + failed. Deleting, finished and outdated runners do not
    /// count towards the desired replicas.
    pub(crate) fn scale_total(&self) -> i64 {
        count(&self.pending) + count(&self.running) + count(&self.failed)
    }

    /// How many runners are being deleted or removed (a removal not finished may not have reached the
    /// service, so the runner may still hold its registration, as a deleting one does).
    pub(crate) fn deleting_count(&self) -> i64 {
        count(&self.deleting) + count(&self.removing)
    }

    /// Runners that will never run a job again: finished, failed, outdated and stale outdated.
    pub(crate) fn terminated(&self) -> impl Iterator<Item = &Arc<EphemeralRunner>> {
        self.finished.iter().chain(&self.failed).chain(&self.outdated).chain(&self.stale_outdated)
    }

    /// ARC's `ephemeralRunnerStepper`: pending runners oldest first, then running runners oldest
    /// first. Equal creation times are ordered by name, so the order is the same on every run.
    pub(crate) fn scale_down_candidates(&self) -> Vec<Arc<EphemeralRunner>> {
        let mut candidates = oldest_first(&self.pending);
        candidates.extend(oldest_first(&self.running));
        candidates
    }
}

fn count(runners: &[Arc<EphemeralRunner>]) -> i64 {
    i64::try_from(runners.len()).unwrap_or(i64::MAX)
}

fn oldest_first(runners: &[Arc<EphemeralRunner>]) -> Vec<Arc<EphemeralRunner>> {
    let mut sorted = runners.to_vec();
    sorted.sort_by(|a, b| {
        let created = |r: &EphemeralRunner| r.metadata.creation_timestamp.as_ref().map(|t| t.0);
        created(a).cmp(&created(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    sorted
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::crd::EphemeralRunnerStatus;
    use crate::crd::constants::{ANNOTATION_ACTIONABLE_REVISION, ANNOTATION_PATCH_ID};

    fn at(seconds: i64) -> Time {
        Time(jiff::Timestamp::from_second(seconds).expect("a valid time"))
    }

    fn runner(
        name: &str,
        phase: Option<EphemeralRunnerPhase>,
        patch_id: &str,
        revision: &str,
    ) -> EphemeralRunner {
        let mut runner = EphemeralRunner::new(name, Default::default());
        runner.metadata.annotations = Some(BTreeMap::from([
            (ANNOTATION_PATCH_ID.to_string(), patch_id.to_string()),
            (ANNOTATION_ACTIONABLE_REVISION.to_string(), revision.to_string()),
        ]));
        runner.status = Some(EphemeralRunnerStatus { phase, ..Default::default() });
        runner
    }

    fn names(runners: &[Arc<EphemeralRunner>]) -> Vec<&str> {
        runners.iter().filter_map(|r| r.metadata.name.as_deref()).collect()
    }

    fn bucket(runners: Vec<EphemeralRunner>, applied: i64) -> RunnerBuckets {
        RunnerBuckets::of(runners.into_iter().map(Arc::new), applied)
    }

    #[test]
    fn runners_are_bucketed_by_phase_and_an_empty_phase_is_pending() {
        use EphemeralRunnerPhase::*;
        let buckets = bucket(
            vec![
                runner("none", None, "1", "0"),
                runner("pending", Some(Pending), "1", "0"),
                runner("running", Some(Running), "1", "0"),
                runner("succeeded", Some(Succeeded), "1", "0"),
                runner("failed", Some(Failed), "1", "0"),
                runner("outdated", Some(Outdated), "1", "0"),
            ],
            0,
        );
        assert_eq!(names(&buckets.pending), ["none", "pending"]);
        assert_eq!(names(&buckets.running), ["running"]);
        assert_eq!(names(&buckets.finished), ["succeeded"]);
        assert_eq!(names(&buckets.failed), ["failed"]);
        assert_eq!(names(&buckets.outdated), ["outdated"]);
        assert_eq!(buckets.scale_total(), 4, "pending, running and failed count; finished and outdated not");
    }

    #[test]
    fn a_deleting_runner_is_deleting_whatever_its_phase_and_still_sets_the_latest_patch_id() {
        let mut gone = runner("gone", Some(EphemeralRunnerPhase::Running), "9", "0");
        gone.metadata.deletion_timestamp = Some(at(5));
        let buckets = bucket(vec![gone, runner("live", None, "4", "0")], 0);
        assert_eq!(names(&buckets.deleting), ["gone"]);
        assert!(buckets.running.is_empty());
        assert_eq!(buckets.latest_patch_id, 9);
        assert_eq!((buckets.scale_total(), buckets.deleting_count()), (1, 1));
    }

    #[test]
    fn malformed_or_negative_patch_ids_are_ignored() {
        let buckets = bucket(
            vec![runner("a", None, "x", "0"), runner("b", None, "-3", "0"), runner("c", None, "", "0")],
            0,
        );
        assert_eq!(buckets.latest_patch_id, 0);
        assert_eq!(
            bucket(vec![runner("a", None, "x", "0"), runner("b", None, "2", "0")], 0).latest_patch_id,
            2
        );
    }

    #[test]
    fn an_outdated_runner_below_the_applied_revision_is_stale_and_terminated() {
        let outdated = Some(EphemeralRunnerPhase::Outdated);
        let buckets = bucket(vec![runner("old", outdated, "1", "1"), runner("new", outdated, "1", "2")], 2);
        assert_eq!(names(&buckets.stale_outdated), ["old"]);
        assert_eq!(names(&buckets.outdated), ["new"]);
        let terminated: Vec<_> = buckets.terminated().filter_map(|r| r.metadata.name.as_deref()).collect();
        assert_eq!(terminated, ["new", "old"]);
        assert_eq!(buckets.scale_total(), 0);
    }

    #[test]
    fn scale_down_walks_pending_oldest_first_then_running_oldest_first() {
        let aged = |name: &str, phase, seconds| {
            let mut r = runner(name, Some(phase), "1", "0");
            r.metadata.creation_timestamp = Some(at(seconds));
            r
        };
        use EphemeralRunnerPhase::{Pending, Running};
        let buckets = bucket(
            vec![
                aged("run-young", Running, 30),
                aged("pend-young", Pending, 20),
                aged("run-old", Running, 1),
                aged("pend-b", Pending, 10),
                aged("pend-a", Pending, 10),
            ],
            0,
        );
        let order: Vec<_> =
            buckets.scale_down_candidates().iter().filter_map(|r| r.metadata.name.clone()).collect();
        assert_eq!(order, ["pend-a", "pend-b", "pend-young", "run-old", "run-young"]);
    }
}
