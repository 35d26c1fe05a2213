//! The story of a failure, as `arcsim run` prints it before its counters: each violation, what it is
//! about, then the last events on those objects, one line each with its simulated time and actor, the
//! events the verdict rests on (the oracle's evidence) marked `*` — so the race reads in twenty lines.

use std::fmt::Write as _;

use arc_world::RunRecord;

use crate::oracles;
use crate::story::commits::Commits;
use crate::story::evidence::{Evidence, LAST_EVENTS};
use crate::story::told::seconds;
use crate::verdict::Violation;

/// How many violations get a story (the rest are listed by the verdict only).
pub const STORIES: usize = 3;

/// The evidence of `violation`, as the oracle that reported it gives it (the default for an oracle
/// that is not in the catalogue, such as a twin oracle).
pub fn evidence_of(run: &RunRecord, violation: &Violation) -> Evidence {
    match oracles::all().into_iter().find(|o| o.name() == violation.oracle) {
        Some(oracle) => oracle.evidence(run, violation),
        None => Evidence::around(run, violation, &arc_sim::record::Interest::everything()),
    }
}

/// The stories of the first [`STORIES`] violations (empty when there are none).
pub fn stories(run: &RunRecord, violations: &[Violation]) -> String {
    let mut out = String::new();
    for violation in violations.iter().take(STORIES) {
        out.push_str(&story(run, violation, &evidence_of(run, violation)));
    }
    if violations.len() > STORIES {
        let _ = writeln!(out, "({} more violations: see the list below)", violations.len() - STORIES);
    }
    out
}

/// One violation's story.
pub fn story(run: &RunRecord, violation: &Violation, evidence: &Evidence) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "violation {} at {}: {}",
        violation.oracle,
        seconds(violation.at_ms).trim_start(),
        violation.message
    );
    let related: Vec<String> =
        evidence.subjects.iter().filter(|s| !evidence.named.contains(s)).map(ToString::to_string).collect();
    let named: Vec<String> = evidence.named.iter().map(ToString::to_string).collect();
    let _ = write!(
        out,
        "  about {}",
        if named.is_empty() { violation.objects.join(", ") } else { named.join(", ") }
    );
    if !related.is_empty() {
        let _ = write!(out, " (and {})", related.join(", "));
    }
    let commits = Commits::of(run);
    let events = evidence.last_events(run, &commits, LAST_EVENTS);
    let _ = writeln!(out, "; the last {} events on them (* = what the verdict rests on):", events.len());
    for event in events {
        if let Some(told) = commits.told_with_state(event) {
            let mark = if evidence.cites_told(event, &commits) { '*' } else { ' ' };
            let _ = writeln!(out, "  {mark}{}", told.line());
        }
    }
    out
}
