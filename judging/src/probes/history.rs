//! What probes read from a run's record, indexed: every committed version of each object, and which
//! versions each actor was handed (gets, list items and watch events) and when. A probe asks "had the
//! controller seen this version when it acted?" with these two.

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_sim::apiserver::reads::ReadEntry;
use arc_sim::apiserver::{Change, Committed, EventType};
use arc_world::RunRecord;
use serde_json::Value;

/// Every committed change of one resource, by `namespace/name`, in commit order with its sim ms.
pub struct Commits<'a> {
    run: &'a RunRecord,
    index: Arc<CommitIndex>,
}

/// Where the commits of each object of one resource sit in a record's events: made once per record and
/// resource ([`RunRecord::derived`]), since seven judges read the pods' or the runners' commits.
struct CommitIndex {
    by_key: BTreeMap<String, Vec<usize>>,
}

impl CommitIndex {
    fn of(run: &RunRecord, plural: &str) -> Self {
        let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        // `namespace/name` written into one buffer, copied only for a key seen first.
        let mut key = String::new();
        for (i, event) in run.events.iter().enumerate() {
            if let Some(c) = event.get::<Committed>().filter(|c| c.resource == plural) {
                key.clear();
                key.extend([c.change.key.namespace.as_str(), "/", c.change.key.name.as_str()]);
                match by_key.get_mut(key.as_str()) {
                    Some(positions) => positions.push(i),
                    None => drop(by_key.insert(key.clone(), vec![i])),
                }
            }
        }
        CommitIndex { by_key }
    }
}

impl<'a> Commits<'a> {
    /// The commits of `plural` in `run`.
    pub fn of(run: &'a RunRecord, plural: &str) -> Self {
        Commits { run, index: run.derived(plural, |run| CommitIndex::of(run, plural)) }
    }

    /// The changes of `key` in commit order, with their sim ms.
    fn changes(&self, key: &str) -> impl DoubleEndedIterator<Item = (u64, &'a Arc<Change>)> + '_ {
        let run = self.run;
        self.index.by_key.get(key).into_iter().flatten().map(move |&i| {
            let event = &run.events[i];
            (event.at_ms, &event.get::<Committed>().expect("indexed as a commit").change)
        })
    }

    /// The last change of `key` committed at or before `ms`.
    pub fn last_before(&self, key: &str, ms: u64) -> Option<&'a Arc<Change>> {
        self.changes(key).rev().find(|(at, _)| *at <= ms).map(|(_, c)| c)
    }

    /// The last change of `key` committed before `ms` (not at it).
    pub fn last_strictly_before(&self, key: &str, ms: u64) -> Option<&'a Arc<Change>> {
        self.changes(key).rev().find(|(at, _)| *at < ms).map(|(_, c)| c)
    }

    /// The creation of the incarnation of `key` that was live at `ms` (the last ADDED at or before it).
    pub fn created_before(&self, key: &str, ms: u64) -> Option<&'a Arc<Change>> {
        self.creation_before(key, ms).map(|(_, c)| c)
    }

    /// When the incarnation of `key` live at `ms` was created, and its creation.
    pub fn creation_before(&self, key: &str, ms: u64) -> Option<(u64, &'a Arc<Change>)> {
        self.changes(key).rev().filter(|(at, _)| *at <= ms).find(|(_, c)| c.kind == EventType::Added)
    }

    /// The object of `key` as committed at resourceVersion `rv`.
    pub fn version(&self, key: &str, rv: u64) -> Option<&'a Value> {
        self.change_at(key, rv).map(|c| c.object.as_ref())
    }

    /// The change of `key` that committed at resourceVersion `rv`.
    pub fn change_at(&self, key: &str, rv: u64) -> Option<&'a Arc<Change>> {
        self.changes(key).find(|(_, c)| c.rv == rv).map(|(_, c)| c)
    }

    /// Every key, in order, with its changes.
    pub fn iter(&self) -> impl Iterator<Item = (&str, impl Iterator<Item = (u64, &'a Arc<Change>)> + '_)> {
        self.index.by_key.keys().map(|key| (key.as_str(), self.changes(key)))
    }
}

/// The versions of one resource an actor was handed: `namespace/name` → `(ms, rv)` in order.
pub struct Handed {
    by_key: BTreeMap<String, Vec<(u64, u64)>>,
}

impl Handed {
    /// What `actor` was handed of `plural` in `run`, made once per record (several judges ask).
    pub fn to(run: &RunRecord, actor: &str, plural: &str) -> Arc<Self> {
        run.derived(&format!("{actor} {plural}"), |run| Handed::of(run, actor, plural))
    }

    fn of(run: &RunRecord, actor: &str, plural: &str) -> Self {
        let mut by_key: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
        for read in run.events_of::<ReadEntry>().filter(|r| r.actor == actor && r.resource == plural) {
            // The key copied only the first time it is seen.
            match by_key.get_mut(read.key.as_str()) {
                Some(reads) => reads.push((read.ms, read.rv)),
                None => drop(by_key.insert(read.key.clone(), vec![(read.ms, read.rv)])),
            }
        }
        Handed { by_key }
    }

    /// Whether the actor had been handed a version of `key` at `rv` or newer by `ms`.
    pub fn saw(&self, key: &str, rv: u64, ms: u64) -> bool {
        self.by_key.get(key).is_some_and(|reads| reads.iter().any(|(at, v)| *at <= ms && *v >= rv))
    }

    /// The newest version of `key` handed over at or before `ms`.
    pub fn last_before(&self, key: &str, ms: u64) -> Option<u64> {
        self.by_key.get(key)?.iter().filter(|(at, _)| *at <= ms).map(|(_, rv)| *rv).max()
    }
}
