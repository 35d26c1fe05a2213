//! [`RemovalsBegun`]: the runners this process marked for removal and has not yet seen deleting
//! (`fixes.delete_removed_runner_first`), and those whose removal the service refused. The mark itself
//! is in the API server; this is the process's own memory of it, for passes whose cache does not show
//! the mark yet (a lagging or silently stalled watch), so that a removal begun is finished without
//! waiting for the cache. A refused removal leaves its mark (taking it off would wake the set), so the
//! memory also says which marked runners were refused: they are not finished again on every pass,
//! which would make a pass's effect depend on how many passes there were. A restart forgets both; the
//! mark, read by the new process's fresh list, does not, and a refused runner is asked once more.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::digests::Digested;
use crate::crd::EphemeralRunner;
use crate::runtime::object_key::ObjectKey;

/// Removals begun and not seen finished: the set of each, by the runner's uid.
#[derive(Debug, Default)]
pub(super) struct RemovalsBegun {
    set_by_uid: Mutex<BTreeMap<String, ObjectKey>>,
    refused: Mutex<BTreeMap<String, ObjectKey>>,
}

impl RemovalsBegun {
    /// Remembers that `set` began removing `runner`.
    pub(super) fn remember(&self, set: &ObjectKey, runner: &EphemeralRunner) {
        if let Some(uid) = runner.metadata.uid.clone() {
            self.lock().insert(uid, set.clone());
        }
    }

    /// Forgets `runner`: its delete went through.
    pub(super) fn forget(&self, runner: &EphemeralRunner) {
        if let Some(uid) = &runner.metadata.uid {
            self.lock().remove(uid);
        }
    }

    /// Remembers that the service refused to remove `runner` of `set` (a job is running on it).
    pub(super) fn refused(&self, set: &ObjectKey, runner: &EphemeralRunner) {
        self.forget(runner);
        if let Some(uid) = runner.metadata.uid.clone() {
            self.refused.lock().unwrap_or_else(PoisonError::into_inner).insert(uid, set.clone());
        }
    }

    /// Forgets every runner of `set` (the set is gone).
    pub(super) fn forget_set(&self, set: &ObjectKey) {
        self.lock().retain(|_, of| of != set);
        self.refused.lock().unwrap_or_else(PoisonError::into_inner).retain(|_, of| of != set);
    }

    /// `runners` (the set's runners as its cache has them, digested) with every refused one unmarked and
    /// every remembered live one marked, whatever its cached object says. A remembered or refused
    /// runner that is deleting or no longer among them is forgotten.
    pub(super) fn overlay(&self, set: &ObjectKey, mut runners: Vec<Digested>) -> Vec<Digested> {
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        mark_present(&mut refused, set, &mut runners, false);
        mark_present(&mut self.lock(), set, &mut runners, true);
        runners
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, ObjectKey>> {
        self.set_by_uid.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Sets `marked` on every live runner of `set` among `runners` that `by_uid` names, and forgets the
/// runners of `set` that `by_uid` names and `runners` no longer holds live (deleting, or gone).
fn mark_present(
    by_uid: &mut BTreeMap<String, ObjectKey>,
    set: &ObjectKey,
    runners: &mut [Digested],
    marked: bool,
) {
    if !by_uid.values().any(|of| of == set) {
        return;
    }
    let live = |uid: &String, runners: &[Digested]| {
        runners.iter().position(|(r, d)| r.metadata.uid.as_ref() == Some(uid) && !d.deleting)
    };
    by_uid.retain(|uid, of| of != set || live(uid, runners).is_some());
    for (uid, _) in by_uid.iter().filter(|(_, of)| *of == set) {
        if let Some(i) = live(uid, runners) {
            runners[i].1.marked = marked;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::scaleset::ephemeral_runner_set::digests::RunnerDigest;

    fn runner(uid: &str, deleting: bool) -> Digested {
        let mut runner = EphemeralRunner::new(uid, Default::default());
        runner.metadata.uid = Some(uid.into());
        if deleting {
            runner.metadata.deletion_timestamp =
                Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH));
        }
        let digest = RunnerDigest::of(&runner);
        (Arc::new(runner), digest)
    }

    fn marked(runners: &[Digested]) -> Vec<&str> {
        runners.iter().filter(|(_, d)| d.marked).filter_map(|(r, _)| r.metadata.uid.as_deref()).collect()
    }

    #[test]
    fn a_remembered_runner_is_marked_until_it_is_deleting_or_gone() {
        let begun = RemovalsBegun::default();
        let (set, other) = (ObjectKey::new("arc", "set"), ObjectKey::new("arc", "other"));
        begun.remember(&set, &runner("a", false).0);
        begun.remember(&other, &runner("b", false).0);
        let overlaid = begun.overlay(&set, vec![runner("a", false), runner("b", false), runner("c", false)]);
        assert_eq!(marked(&overlaid), vec!["a"], "only the set's own");
        assert_eq!(marked(&begun.overlay(&set, vec![runner("a", true)])), Vec::<&str>::new(), "deleting");
        assert_eq!(marked(&begun.overlay(&set, vec![runner("a", false)])), Vec::<&str>::new(), "forgotten");
        assert_eq!(marked(&begun.overlay(&other, vec![runner("b", false)])), vec!["b"]);
        assert_eq!(marked(&begun.overlay(&other, vec![])), Vec::<&str>::new());
        assert_eq!(marked(&begun.overlay(&other, vec![runner("b", false)])), Vec::<&str>::new(), "gone");
    }

    #[test]
    fn a_refused_runner_reads_as_unmarked_until_it_goes() {
        let begun = RemovalsBegun::default();
        let set = ObjectKey::new("arc", "set");
        let mut marked = runner("a", false);
        marked.1.marked = true;
        begun.remember(&set, &marked.0);
        begun.refused(&set, &marked.0);
        assert_eq!(self::marked(&begun.overlay(&set, vec![marked.clone()])), Vec::<&str>::new());
        assert!(begun.overlay(&set, vec![]).is_empty(), "gone: forgotten");
        assert_eq!(self::marked(&begun.overlay(&set, vec![marked])), vec!["a"], "a restart asks again");
    }

    #[test]
    fn forgetting_a_runner_or_its_set() {
        let begun = RemovalsBegun::default();
        let set = ObjectKey::new("arc", "set");
        begun.remember(&set, &runner("a", false).0);
        begun.remember(&set, &runner("b", false).0);
        begun.forget(&runner("a", false).0);
        assert_eq!(marked(&begun.overlay(&set, vec![runner("a", false), runner("b", false)])), vec!["b"]);
        begun.forget_set(&set);
        assert_eq!(marked(&begun.overlay(&set, vec![runner("b", false)])), Vec::<&str>::new());
    }
}
