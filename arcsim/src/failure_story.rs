//! The story of a failure, as `arcsim run` prints it before its counters: each violation, what it is
//! about, then the last events on those objects, one line each with its simulated time and actor, the
//! events the verdict rests on (the oracle's evidence) marked `*` — so the race reads in twenty lines.

use std::fmt::Write as _;

use arc_world::RunRecord;

use arc_judging::story::commits::Commits;
use arc_judging::story::evidence::{Evidence, LAST_EVENTS};
use arc_judging::story::told::seconds;
use arc_scenarios::verdict::Violation;

/// How many of the subjects related to a violation's own the story names (the rest it counts): in a
/// big world a runner set relates to hundreds of runners, jobs and pods.
const RELATED_NAMED: usize = 8;

/// How many violations get a story (the rest are listed by the verdict only).
pub const STORIES: usize = 3;

/// The evidence of `violation`, as the oracle that reported it gives it (the default for an oracle
/// that is not in the catalogue, such as a twin oracle).
pub fn evidence_of(run: &RunRecord, violation: &Violation) -> Evidence {
    match arc_scenarios::names::all_oracles().into_iter().find(|o| o.name() == violation.oracle) {
        Some(oracle) => oracle.evidence(run, violation),
        None => Evidence::around(run, violation, &arc_sim::record::Interest::everything()),
    }
}

/// The stories of the first [`STORIES`] violations (empty when there are none), after the parties'
/// clocks when any read other than true time (a verdict on an expiry reads differently then).
pub fn stories(run: &RunRecord, violations: &[Violation]) -> String {
    let mut out = String::new();
    if !violations.is_empty() {
        out.push_str(&clocks(run));
    }
    for violation in violations.iter().take(STORIES) {
        out.push_str(&story(run, violation, &evidence_of(run, violation)));
    }
    if violations.len() > STORIES {
        let _ = writeln!(out, "({} more violations: see the list below)", violations.len() - STORIES);
    }
    out
}

/// `clocks (ahead of GitHub's): apiserver -0.012 s, controller +2.300 s +50 ppm`, or nothing when every
/// party read true time.
fn clocks(run: &RunRecord) -> String {
    let skewed = run.skewed_clocks();
    if skewed.is_empty() {
        return String::new();
    }
    let told: Vec<String> = skewed.iter().map(|(party, skew)| format!("{party} {skew}")).collect();
    format!("clocks (ahead of GitHub's at the start): {}\n", told.join(", "))
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
    let named = if named.is_empty() { violation.objects.clone() } else { named };
    out.push_str(&about(&named, &related));
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

/// The story's second line: what the violation is about, then up to [`RELATED_NAMED`] of the subjects
/// related to those, counting the rest.
fn about(named: &[String], related: &[String]) -> String {
    let mut line = format!("  about {}", named.join(", "));
    if !related.is_empty() {
        let shown = related.iter().take(RELATED_NAMED).cloned().collect::<Vec<_>>().join(", ");
        let _ = match related.len().saturating_sub(RELATED_NAMED) {
            0 => write!(line, " (and {shown})"),
            more => write!(line, " (and {shown} and {more} more)"),
        };
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_about_line_names_a_few_related_subjects_and_counts_the_rest() {
        let names = |n: usize| (0..n).map(|i| format!("runner {i}")).collect::<Vec<_>>();
        let named = vec!["ephemeralrunner ns/r".to_string()];
        assert_eq!(about(&named, &[]), "  about ephemeralrunner ns/r");
        assert_eq!(about(&named, &names(2)), "  about ephemeralrunner ns/r (and runner 0, runner 1)");
        let many = about(&named, &names(300));
        assert!(many.ends_with("runner 7 and 292 more)"), "{many}");
    }

    #[test]
    fn skewed_clocks_are_told_before_the_stories_and_true_ones_are_not() {
        use arc_sim::record::WorldEvent;
        use arc_world::SyntheticRun;
        let config = r#"{"apiserver":{"clock":{"offset_ms":-12}},"kubelet":{"pod_watch_lag":{"min_ms":1,"max_ms":2}},
            "controller_clocks":{"controller":{"offset_ms":2300,"drift_ppm":50}}}"#;
        let run = SyntheticRun::new().event(0, WorldEvent::Config(config.into())).build();
        assert_eq!(
            clocks(&run),
            "clocks (ahead of GitHub's at the start): apiserver -0.012 s, controller +2.300 s +50 ppm\n"
        );
        let synced = SyntheticRun::new().event(0, WorldEvent::Config(r#"{"apiserver":{}}"#.into())).build();
        assert_eq!(clocks(&synced), "", "true clocks are not told");
        assert_eq!(stories(&run, &[]), "", "no violation, no story");
    }
}
