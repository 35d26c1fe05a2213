//! [`RunnerDigests`]: what the buckets read of each runner (deleting or not, phase, `patch-id`,
//! `actionable-revision`, the removal mark), kept per set from one pass to the next, so a pass reads only the runners
//! whose cached object changed since the set's last pass.
//!
//! The reconciler buckets every runner of its set on every pass, as ARC does. At a thousand runners
//! most of that pass's cost was reading each runner's annotations (a map, its keys and values, each
//! elsewhere in memory) to find the same `patch-id` as last time. A cached object never changes (the
//! informer replaces the `Arc`), so a runner whose `Arc` is the one digested last pass has the same
//! digest; the digests hold those `Arc`s, so an address is never reused while it is remembered. The
//! buckets come out exactly as [`RunnerBuckets::of`](super::buckets::RunnerBuckets::of) makes them.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::annotations::{patch_id_of, removing_runner_id, revision_of};
use crate::crd::{EphemeralRunner, EphemeralRunnerPhase};
use crate::runtime::object_key::ObjectKey;

/// What the buckets read of one runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunnerDigest {
    /// `deletionTimestamp` is set.
    pub deleting: bool,
    /// The phase (Pending when empty).
    pub phase: EphemeralRunnerPhase,
    /// The `patch-id` annotation as the buckets read it.
    pub patch_id: i64,
    /// The `actionable-revision` annotation as the buckets read it.
    pub revision: i64,
    /// It carries the removal mark (`fixes.delete_removed_runner_first`).
    pub marked: bool,
    /// It has a job (`status.jobId`).
    pub has_job: bool,
}

impl RunnerDigest {
    /// Reads `runner`.
    pub(crate) fn of(runner: &EphemeralRunner) -> Self {
        RunnerDigest {
            deleting: runner.metadata.deletion_timestamp.is_some(),
            phase: runner.phase(),
            patch_id: patch_id_of(runner),
            revision: revision_of(runner),
            marked: removing_runner_id(runner) != 0,
            has_job: runner.has_job(),
        }
    }
}

/// A runner and its digest.
pub(crate) type Digested = (Arc<EphemeralRunner>, RunnerDigest);

/// Each set's runners as digested on its last pass, in the store's (name) order.
#[derive(Debug, Default)]
pub(crate) struct RunnerDigests {
    by_set: Mutex<BTreeMap<ObjectKey, Vec<Digested>>>,
}

impl RunnerDigests {
    /// `runners` of set `set` (in name order, as the store lists them), each with its digest: reused
    /// when the runner's cached object is the one digested on the set's last pass, read otherwise.
    pub(super) fn digest(&self, set: &ObjectKey, runners: Vec<Arc<EphemeralRunner>>) -> Vec<Digested> {
        let mut by_set = self.by_set.lock().unwrap_or_else(PoisonError::into_inner);
        let last = by_set.remove(set).unwrap_or_default();
        let digested = merge(runners, &last);
        by_set.insert(set.clone(), digested.clone());
        digested
    }

    /// Forgets set `set` (it is gone from the cache).
    pub(super) fn forget(&self, set: &ObjectKey) {
        self.by_set.lock().unwrap_or_else(PoisonError::into_inner).remove(set);
    }
}

/// Walks `runners` and `last` together, both in name order: the same `Arc` reuses its digest, and
/// only where they differ are names compared (an updated, new or deleted runner). Whatever the order,
/// a digest is only ever reused for the very object it was read from.
fn merge(runners: Vec<Arc<EphemeralRunner>>, last: &[Digested]) -> Vec<Digested> {
    let mut out = Vec::with_capacity(runners.len());
    let mut old = last.iter().peekable();
    for runner in runners {
        let mut reused = None;
        while let Some((seen, digest)) = old.peek() {
            if Arc::ptr_eq(seen, &runner) {
                reused = Some(*digest);
                old.next();
                break;
            }
            match seen.metadata.name.cmp(&runner.metadata.name) {
                Ordering::Less => drop(old.next()),
                Ordering::Equal => {
                    old.next();
                    break;
                }
                Ordering::Greater => break,
            }
        }
        let digest = reused.unwrap_or_else(|| RunnerDigest::of(&runner));
        out.push((runner, digest));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::EphemeralRunnerStatus;
    use crate::crd::constants::ANNOTATION_PATCH_ID;

    fn runner(name: &str, phase: EphemeralRunnerPhase, patch_id: i64) -> Arc<EphemeralRunner> {
        let mut runner = EphemeralRunner::new(name, Default::default());
        runner.metadata.annotations =
            Some(BTreeMap::from([(ANNOTATION_PATCH_ID.to_string(), patch_id.to_string())]));
        runner.status = Some(EphemeralRunnerStatus { phase: Some(phase), ..Default::default() });
        Arc::new(runner)
    }

    fn read_afresh(runners: &[Arc<EphemeralRunner>]) -> Vec<RunnerDigest> {
        runners.iter().map(|r| RunnerDigest::of(r)).collect()
    }

    fn digests(digested: &[Digested]) -> Vec<RunnerDigest> {
        digested.iter().map(|(_, d)| *d).collect()
    }

    #[test]
    fn every_pass_digests_as_a_fresh_read_would_through_updates_arrivals_and_departures() {
        use EphemeralRunnerPhase::{Pending, Running, Succeeded};
        let memo = RunnerDigests::default();
        let set = ObjectKey::new("ns", "set");
        let (a, b, c, d) = (
            runner("a", Pending, 1),
            runner("b", Pending, 1),
            runner("c", Pending, 1),
            runner("d", Running, 2),
        );
        let passes = [
            vec![a.clone(), b.clone(), c.clone()],
            vec![a.clone(), runner("b", Running, 3), c.clone()],
            vec![runner("a", Succeeded, 3), c.clone(), d.clone()],
            vec![runner("0", Pending, 4), d.clone()],
            vec![],
            vec![a.clone(), d.clone()],
        ];
        for runners in passes {
            let digested = memo.digest(&set, runners.clone());
            assert_eq!(digests(&digested), read_afresh(&runners));
            assert!(digested.iter().zip(&runners).all(|((kept, _), listed)| Arc::ptr_eq(kept, listed)));
        }
    }

    #[test]
    fn an_unchanged_runner_keeps_its_digest_without_being_read_again() {
        let memo = RunnerDigests::default();
        let set = ObjectKey::new("ns", "set");
        let a = runner("a", EphemeralRunnerPhase::Pending, 1);
        memo.digest(&set, vec![a.clone()]);
        let mut planted = memo.by_set.lock().unwrap();
        planted.get_mut(&set).unwrap()[0].1.patch_id = 99;
        drop(planted);
        assert_eq!(memo.digest(&set, vec![a.clone()])[0].1.patch_id, 99, "the same Arc is not read again");
        memo.forget(&set);
        assert_eq!(memo.digest(&set, vec![a])[0].1.patch_id, 1, "a forgotten set is read afresh");
    }
}
