//! The story `arcsim run` prints before its counters.

use arc_scenarios::story::{evidence_of, stories};

use super::failing_run;

#[test]
fn a_failure_is_told_as_its_violation_then_the_last_events_on_its_objects() {
    let (verdict, record) = failing_run();
    let text = stories(record, &verdict.violations);
    let lines: Vec<&str> = text.lines().collect();
    let violation = &verdict.violations[0];
    assert!(lines[0].starts_with(&format!("violation {} at ", violation.oracle)), "{text}");
    assert!(lines[0].ends_with(&violation.message), "{text}");
    assert!(lines[1].starts_with("  about ephemeralrunner "), "{text}");
    assert!(lines.len() <= 25, "a story reads in about twenty lines, not {}:\n{text}", lines.len());
    let times: Vec<f64> =
        lines[2..].iter().map(|l| l[3..].trim_start().split(' ').next().unwrap().parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "events in time order:\n{text}");
    assert_eq!(*times.last().unwrap(), violation.at_ms as f64 / 1000.0, "the story ends at the violation");
    for needle in
        ["job-assigned job=", "runner-registered", "delete ephemeralrunners", "remove-runner runner=0"]
    {
        assert!(text.contains(needle), "the race's steps are in the story ({needle}):\n{text}");
    }
}

#[test]
fn the_story_marks_the_events_its_oracle_used() {
    let (verdict, record) = failing_run();
    let evidence = evidence_of(record, &verdict.violations[0]);
    assert!(!evidence.cited.is_empty());
    let text = stories(record, &verdict.violations);
    let marked: Vec<&str> = text.lines().filter(|l| l.starts_with("  *")).collect();
    assert_eq!(marked.len(), 4, "the delete, the runner id, the container start, the assignment:\n{text}");
    assert!(marked.last().unwrap().contains("delete ephemeralrunners"), "{text}");
    assert!(evidence.from_ms <= evidence.to_ms && evidence.to_ms == verdict.violations[0].at_ms);
}

#[test]
fn a_passing_run_has_no_story() {
    let (_, record) = failing_run();
    assert_eq!(stories(record, &[]), "");
}
