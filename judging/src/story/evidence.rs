//! [`Evidence`]: what a violation rests on — the window of simulated time its oracle looked at, the
//! subjects it is about (those it named and those related to them), and the events it used. Oracles
//! give theirs through [`Oracle::evidence`](crate::oracles::Oracle::evidence); the default is
//! [`Evidence::around`].

use std::collections::BTreeSet;

use arc_sim::record::{Event, Interest};
use arc_world::RunRecord;

use super::commits::Commits;
use super::involves::{Relations, touched};
use super::subject::Subject;
use super::told::tell;
use crate::violation::Violation;

/// How many of the subjects' last events the default window reaches back over.
pub const LAST_EVENTS: usize = 20;

/// What a violation rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// First sim ms of the window.
    pub from_ms: u64,
    /// Last sim ms of the window (the violation's time).
    pub to_ms: u64,
    /// What the violation names.
    pub named: Vec<Subject>,
    /// What it names and what relates to that (the pod of a runner, the runner id it carries, …).
    pub subjects: BTreeSet<Subject>,
    /// Sequence numbers of the events the oracle used, in order.
    pub cited: Vec<u64>,
}

impl Evidence {
    /// The default evidence of `violation`: the subjects it names and those related to them; the
    /// window from the earliest of their last [`LAST_EVENTS`] events up to the violation; cited, the
    /// events in the window that touch them and are of a kind the oracle reads (`needs`).
    pub fn around(run: &RunRecord, violation: &Violation, needs: &Interest) -> Evidence {
        let named = Subject::parse_all(&violation.objects);
        let subjects = Relations::of(run).expand(&named);
        let mut evidence =
            Evidence { from_ms: violation.at_ms, to_ms: violation.at_ms, named, subjects, cited: Vec::new() };
        let commits = Commits::of(run);
        let last = evidence.last_events(run, &commits, LAST_EVENTS);
        evidence.from_ms = last.first().map_or(violation.at_ms, |e| e.at_ms);
        evidence.cited = evidence
            .in_window(run)
            .filter(|e| needs.wants(e.body.as_any().type_id(), e.body.resource()))
            .map(|e| e.seq)
            .collect();
        evidence
    }

    /// This evidence citing instead the events of the window that `cites` picks (an oracle that
    /// knows exactly which events it read).
    #[must_use]
    pub fn citing(mut self, run: &RunRecord, cites: impl Fn(&Event) -> bool) -> Evidence {
        self.cited = run.events.iter().filter(|e| self.covers(e) && cites(e)).map(|e| e.seq).collect();
        let first_cited = run.events.iter().find(|e| self.cites(e.seq)).map(|e| e.at_ms);
        self.from_ms = self.from_ms.min(first_cited.unwrap_or(self.from_ms));
        self
    }

    /// Whether `event` touches one of the subjects and happened no later than the window's end (a
    /// request counts from when the store served it: a write committed in the window whose answer
    /// came after it, by the server's latency after the commit, is in it).
    pub fn covers(&self, event: &Event) -> bool {
        happened_ms(event) <= self.to_ms && touched(event).iter().any(|s| self.subjects.contains(s))
    }

    /// Whether the oracle cited the event numbered `seq`.
    pub fn cites(&self, seq: u64) -> bool {
        self.cited.binary_search(&seq).is_ok()
    }

    /// Whether the oracle cited `event`, or the commit it made (a story tells a commit with the
    /// request that made it).
    pub fn cites_told(&self, event: &Event, commits: &Commits) -> bool {
        self.cites(event.seq) || commits.made_by(event).is_some_and(|seq| self.cites(seq))
    }

    /// The events in the window that touch the subjects, in order.
    pub fn in_window<'a>(&'a self, run: &'a RunRecord) -> impl Iterator<Item = &'a Event> + 'a {
        run.events.iter().filter(move |e| e.at_ms >= self.from_ms && self.covers(e))
    }

    /// The last `n` events up to the window's end that touch the subjects and are worth telling
    /// (see [`worth_telling`]), in order: a story's lines.
    pub fn last_events<'a>(&self, run: &'a RunRecord, commits: &Commits, n: usize) -> Vec<&'a Event> {
        let mut last: Vec<&Event> =
            run.events.iter().rev().filter(|e| self.covers(e) && worth_telling(e, commits)).take(n).collect();
        last.reverse();
        last
    }
}

/// Whether a story shows the event: it has a line, it is not a watch delivery (each change reaches
/// every watcher, which would crowd out what happened), and it is not a commit whose request's
/// answer already tells it.
pub fn worth_telling(event: &Event, commits: &Commits) -> bool {
    event.get::<arc_sim::apiserver::WatchSent>().is_none()
        && !commits.is_answered(event)
        && tell(event).is_some()
}

/// When `event` took effect: a request's time at the store, anything else's time in the record.
pub fn happened_ms(event: &Event) -> u64 {
    event.get::<arc_sim::apiserver::AuditEntry>().map_or(event.at_ms, |a| a.served_ms)
}
