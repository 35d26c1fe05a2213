//! The violation window as a Mermaid `sequenceDiagram`, small enough to paste into a GitHub issue:
//! the last events on the objects a violation is about — requests and their answers (with the state
//! the commit left), watch deliveries to the controller (with their lag), GitHub, kubelet and world
//! steps as notes — the events the oracle used on a red background, the violation last.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use arc_sim::apiserver::{AuditEntry, WatchItem, WatchSent};
use arc_sim::github::GitHubEvent;
use arc_sim::record::Event;
use arc_world::RunRecord;

use crate::failure_story::evidence_of;
use arc_judging::story::commits::Commits;
use arc_judging::story::told::{called_github, seconds, target};
use arc_judging::story::{Evidence, tell};
use arc_scenarios::verdict::{Verdict, Violation};

/// At most this many events go into a diagram.
pub const MAX_EVENTS: usize = 30;

/// The diagram of `verdict`'s first violation in `run` (a note saying there is none for a pass).
pub fn sequence_diagram(run: &RunRecord, verdict: &Verdict) -> String {
    let mut out = String::from("sequenceDiagram\n");
    let _ = writeln!(out, "    %% {}", verdict.replay_line());
    let Some(violation) = verdict.violations.first() else {
        out.push_str("    participant world\n    Note over world: PASS: no violation\n");
        return out;
    };
    let evidence = evidence_of(run, violation);
    let commits = Commits::of(run);
    let events = window_events(run, &evidence, &commits);
    let lines: Vec<(bool, Vec<String>)> = events
        .iter()
        .map(|e| (evidence.cites_told(e, &commits), message(&commits, e)))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    participants(&mut out, &lines);
    for (cited, messages) in &lines {
        if *cited {
            out.push_str("    rect rgb(255, 228, 225)\n");
        }
        for m in messages {
            let _ = writeln!(out, "    {}{m}", if *cited { "    " } else { "" });
        }
        if *cited {
            out.push_str("    end\n");
        }
    }
    verdict_note(&mut out, violation, &lines);
    out
}

/// The diagram fenced for Markdown (a GitHub issue renders it).
pub fn fenced(diagram: &str) -> String {
    format!("```mermaid\n{diagram}```\n")
}

/// The last [`MAX_EVENTS`] events on the violation's subjects, with watch deliveries to the
/// controller kept and others left out (each change reaches every watcher).
fn window_events<'a>(run: &'a RunRecord, evidence: &Evidence, commits: &Commits) -> Vec<&'a Event> {
    let mut events: Vec<&Event> = run
        .events
        .iter()
        .rev()
        .filter(|e| evidence.covers(e) && tell(e).is_some() && !commits.is_answered(e))
        .filter(|e| e.get::<WatchSent>().is_none_or(|w| w.actor.as_deref() == Some("controller")))
        .take(MAX_EVENTS)
        .collect();
    events.reverse();
    events
}

/// The diagram lines of one event.
fn message(commits: &Commits, event: &Event) -> Vec<String> {
    let at = seconds(event.at_ms).trim_start().to_string();
    if let Some(a) = event.get::<AuditEntry>() {
        let who = participant(&a.actor);
        let ask = format!("{who}->>apiserver: {at} {} {} {}", a.verb.as_str(), a.resource, target(a));
        let mut answer = format!("apiserver-->>{who}: {}", a.code);
        if !a.reason.is_empty() {
            answer.push_str(&format!(" {}", a.reason));
        }
        if !a.resource_version.is_empty() {
            let state = if a.verb.is_mutating() { commits.state(&a.resource_version) } else { "" };
            answer.push_str(&format!(" rv={}{state}", a.resource_version));
        }
        return vec![text(&ask), text(&answer)];
    }
    if let Some(w) = event.get::<WatchSent>()
        && let WatchItem::Change { kind, key, rv } = &w.item
    {
        let lag = commits.at_ms(rv).map_or_else(String::new, |c| format!(" (lag {} ms)", event.at_ms - c));
        let to = participant(w.actor.as_deref().unwrap_or("client"));
        return vec![text(&format!("apiserver-){to}: {at} watch {kind} {} {key} rv={rv}{lag}", w.resource))];
    }
    if let Some((by, what)) = event.get::<GitHubEvent>().and_then(called_github) {
        let what = what.trim_start_matches("at github: ");
        return vec![text(&format!("{}->>github: {at} {what}", participant(&by)))];
    }
    let Some(told) = tell(event) else { return Vec::new() };
    let who = participant(&told.who);
    vec![text(&format!("Note over {who}: {at} {}", told.what))]
}

/// A participant id Mermaid accepts (`watch#3` → `watch3`, `runner 17` → `runner17`).
fn participant(who: &str) -> String {
    let id: String = who.chars().filter(char::is_ascii_alphanumeric).collect();
    if id.is_empty() { "unknown".into() } else { id }
}

/// The participants in the order they first appear, the API server after the clients.
fn participants(out: &mut String, lines: &[(bool, Vec<String>)]) {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut order: Vec<String> = Vec::new();
    for line in lines.iter().flat_map(|(_, l)| l) {
        for name in names_in(line) {
            if seen.insert(name.clone()) {
                order.push(name);
            }
        }
    }
    let rank: BTreeMap<&str, usize> =
        [("controller", 0), ("listener", 1), ("user", 2), ("kubelet", 3), ("apiserver", 4), ("github", 5)]
            .into_iter()
            .collect();
    order.sort_by_key(|n| rank.get(n.as_str()).copied().unwrap_or(6));
    for name in order {
        let _ = writeln!(out, "    participant {name}");
    }
}

/// The participants a diagram line names.
fn names_in(line: &str) -> Vec<String> {
    let head = line.split(':').next().unwrap_or("");
    if let Some(rest) = head.strip_prefix("Note over ") {
        return rest.split(',').map(|s| s.trim().to_string()).collect();
    }
    head.split(['-', '>', ')']).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

fn verdict_note(out: &mut String, v: &Violation, lines: &[(bool, Vec<String>)]) {
    let over = lines.last().and_then(|(_, l)| l.first()).map(|l| names_in(l)).unwrap_or_default();
    let over = if over.is_empty() { "apiserver".to_string() } else { over.join(",") };
    let note = format!(
        "Note over {over}: ✖ {} at {} [{}]: {}",
        v.oracle,
        seconds(v.at_ms).trim_start(),
        v.objects.join(", "),
        v.message
    );
    let _ = writeln!(out, "    rect rgb(255, 190, 180)\n        {}\n    end", text(&note));
}

/// A diagram line with the characters Mermaid reads as syntax inside text written as entity codes
/// (`#` → `#35;`, `;` → `#59;`, `<` → `#60;`, `>` after the arrow → `#62;`).
fn text(line: &str) -> String {
    let (head, rest) = line.split_once(": ").unwrap_or((line, ""));
    let mut out = String::with_capacity(line.len() + 8);
    out.push_str(head);
    out.push_str(": ");
    for c in rest.chars() {
        match c {
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            '<' => out.push_str("#60;"),
            '>' => out.push_str("#62;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_after_the_arrow_is_escaped_for_mermaid() {
        assert_eq!(
            text("controller->>apiserver: a;b #3 <x>"),
            "controller->>apiserver: a#59;b #35;3 #60;x#62;"
        );
    }

    #[test]
    fn participant_ids_are_alphanumeric() {
        assert_eq!(participant("watch#3"), "watch3");
        assert_eq!(participant("runner 17"), "runner17");
        assert_eq!(names_in("controller->>apiserver: x"), vec!["controller", "apiserver"]);
        assert_eq!(names_in("apiserver-)controller: x"), vec!["apiserver", "controller"]);
        assert_eq!(names_in("Note over github: x"), vec!["github"]);
    }
}
