//! [`Commits`]: the committed changes of a run by resourceVersion, so that a request's answer can say
//! the state its commit left (` phase=Running deleting`) and a story or diagram need not show the
//! commit a second time.

use std::collections::{BTreeMap, BTreeSet};

use arc_sim::apiserver::{AuditEntry, Committed};
use arc_sim::record::Event;
use arc_world::RunRecord;

use super::told::state_of;

/// The run's commits, by resourceVersion.
#[derive(Debug, Default)]
pub struct Commits {
    /// resourceVersion → (sim ms, sequence number, the state it left).
    by_rv: BTreeMap<u64, (u64, u64, String)>,
    /// resourceVersions a mutating request's answer carries.
    answered: BTreeSet<u64>,
}

impl Commits {
    /// The commits `run` kept.
    pub fn of(run: &RunRecord) -> Commits {
        let mut commits = Commits::default();
        for e in &run.events {
            if let Some(c) = e.get::<Committed>() {
                commits.by_rv.insert(c.change.rv, (e.at_ms, e.seq, state_of(&c.change.object)));
            } else if let Some(a) = e.get::<AuditEntry>().filter(|a| a.verb.is_mutating()) {
                commits.answered.extend(a.resource_version.parse::<u64>().ok());
            }
        }
        commits
    }

    /// The state the commit at `rv` left (empty when unknown).
    pub fn state(&self, rv: &str) -> &str {
        rv.parse::<u64>().ok().and_then(|rv| self.by_rv.get(&rv)).map_or("", |(_, _, s)| s.as_str())
    }

    /// When the commit at `rv` happened.
    pub fn at_ms(&self, rv: &str) -> Option<u64> {
        rv.parse::<u64>().ok().and_then(|rv| self.by_rv.get(&rv)).map(|(ms, _, _)| *ms)
    }

    /// The sequence number of the commit a mutating request's answer carries, if kept.
    pub fn made_by(&self, event: &Event) -> Option<u64> {
        let a = event.get::<AuditEntry>().filter(|a| a.verb.is_mutating())?;
        let rv = a.resource_version.parse::<u64>().ok()?;
        self.by_rv.get(&rv).map(|(_, seq, _)| *seq)
    }

    /// Whether `event` is a commit whose request's answer is in the record (and tells it).
    pub fn is_answered(&self, event: &Event) -> bool {
        event.get::<Committed>().is_some_and(|c| self.answered.contains(&c.change.rv))
    }

    /// `event`'s line with, for a mutating request, the state its commit left.
    pub fn told_with_state(&self, event: &Event) -> Option<super::Told> {
        let mut told = super::tell(event)?;
        if let Some(a) = event.get::<AuditEntry>().filter(|a| a.verb.is_mutating()) {
            told.what.push_str(self.state(&a.resource_version));
        }
        Some(told)
    }
}
