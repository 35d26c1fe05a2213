//! The story `arcsim run` prints before its counters.

use arcsim::failure_story::{evidence_of, stories};

use super::failing_run;

/// The story of the first violation alone (a run may break an oracle more than once).
fn first_story() -> String {
    let (verdict, record) = failing_run();
    stories(record, &verdict.violations[..1])
}

/// The runner and job the first violation names.
fn runner_and_job() -> (String, String) {
    let (verdict, _) = failing_run();
    let named = |prefix: &str| {
        verdict.violations[0].objects.iter().find_map(|o| o.strip_prefix(prefix)).unwrap().to_string()
    };
    (named("runner "), named("job "))
}

#[test]
fn a_failure_is_told_as_its_violation_then_the_last_events_on_its_objects() {
    let (verdict, _) = failing_run();
    let text = first_story();
    let lines: Vec<&str> = text.lines().collect();
    let violation = &verdict.violations[0];
    assert!(lines[0].starts_with(&format!("violation {} at ", violation.oracle)), "{text}");
    assert!(lines[0].ends_with(&violation.message), "{text}");
    assert!(lines[1].starts_with("  about ephemeralrunner "), "{text}");
    assert!(lines.len() <= 25, "a story reads in about twenty lines, not {}:\n{text}", lines.len());
    let times: Vec<f64> =
        lines[2..].iter().map(|l| l[3..].trim_start().split(' ').next().unwrap().parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "events in time order:\n{text}");
    let at = violation.at_ms as f64 / 1000.0;
    assert!(
        lines.last().unwrap().contains("controller   delete ephemeralrunners"),
        "ends with the delete:\n{text}"
    );
    assert!(*times.last().unwrap() >= at, "the delete, answered at or after its commit, closes the story");
    assert!(times[..times.len() - 1].iter().all(|t| *t <= at), "nothing after the violation but its answer");
    let (runner, job) = runner_and_job();
    for needle in [format!("job-assigned job={job} runner={runner}"), "remove-runner runner=0".to_string()] {
        assert!(text.contains(&needle), "the race's steps are in the story ({needle}):\n{text}");
    }
}

#[test]
fn the_story_marks_the_events_its_oracle_used() {
    let (verdict, record) = failing_run();
    let evidence = evidence_of(record, &verdict.violations[0]);
    assert!(!evidence.cited.is_empty());
    let text = first_story();
    let marked: Vec<&str> = text.lines().filter(|l| l.starts_with("  *")).collect();
    let (runner, job) = runner_and_job();
    assert!(marked.iter().any(|l| l.contains("container-started")), "the container start:\n{text}");
    assert!(marked.iter().any(|l| l.contains(&format!("job-assigned job={job} runner={runner}"))), "{text}");
    let removal = marked.iter().find(|l| l.contains("at github: remove-runner runner=0"));
    assert!(removal.is_some_and(|l| l.contains("controller")), "the controller's RemoveRunner call:\n{text}");
    assert!(marked.last().unwrap().contains("delete ephemeralrunners"), "the delete, last:\n{text}");
    assert!(evidence.from_ms <= evidence.to_ms && evidence.to_ms == verdict.violations[0].at_ms);
}

#[test]
fn a_passing_run_has_no_story() {
    let (_, record) = failing_run();
    assert_eq!(stories(record, &[]), "");
}
