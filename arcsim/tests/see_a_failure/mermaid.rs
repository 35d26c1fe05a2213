//! The Mermaid diagram of the known failing run.

use arcsim::visual::mermaid::{MAX_EVENTS, fenced, sequence_diagram};

use super::failing_run;

fn diagram() -> String {
    let (verdict, record) = failing_run();
    sequence_diagram(record, verdict)
}

#[test]
fn the_diagram_is_a_sequence_diagram_of_the_violation_window() {
    let text = diagram();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "sequenceDiagram");
    assert!(lines[1].starts_with("    %% cargo run --release"), "the replay line as a comment");
    assert!(lines.len() <= 2 * MAX_EVENTS + 20, "small enough to paste ({} lines)", lines.len());
    for participant in ["controller", "apiserver", "github", "kubelet"] {
        assert!(text.contains(&format!("    participant {participant}\n")), "{participant}:\n{text}");
    }
    let (verdict, _) = failing_run();
    let v = &verdict.violations[0];
    let note = format!("✖ {} at {:.3} s", v.oracle, v.at_ms as f64 / 1000.0);
    assert!(lines[lines.len() - 2].contains(&note), "the violation closes the diagram:\n{text}");
    let named = |prefix: &str| v.objects.iter().find_map(|o| o.strip_prefix(prefix)).unwrap().to_string();
    let (runner, job) = (named("runner "), named("job "));
    let has =
        |head: &str, tail: &str| lines.iter().any(|l| l.trim_start().starts_with(head) && l.contains(tail));
    assert!(has("controller->>apiserver:", "s delete ephemeralrunners arc-runners/"), "the delete:\n{text}");
    assert!(has("apiserver-->>controller: 200 rv=", "deleting"), "answers carry the commit's state:\n{text}");
    assert!(has("Note over github:", &format!("s job-assigned job={job} runner={runner}")), "{text}");
    let stale_id = "s remove-runner runner=0 outcome=Unknown";
    assert!(has("controller->>github:", stale_id), "the controller's call with the stale id:\n{text}");
    let cited = lines.windows(2).any(|w| w[0].trim() == "rect rgb(255, 228, 225)" && w[1].contains(stale_id));
    assert!(cited, "the call is marked as what the verdict rests on:\n{text}");
    assert!(text.contains("apiserver-)controller:") && text.contains("(lag "), "watch deliveries with lag");
}

#[test]
fn every_line_is_mermaid_sequence_syntax() {
    for line in diagram().lines().skip(1) {
        let l = line.trim_start();
        let known = l.starts_with("%%")
            || l.starts_with("participant ")
            || l.starts_with("Note over ")
            || l.starts_with("rect rgb(")
            || l == "end"
            || ["->>", "-->>", "-)"]
                .iter()
                .any(|arrow| l.split(':').next().is_some_and(|h| h.contains(arrow)));
        assert!(known, "not sequence-diagram syntax: {line}");
        let text = without_entities(l.split_once(": ").map_or("", |(_, t)| t));
        assert!(!text.contains(';') && !text.contains('<') && !text.contains('#'), "unescaped text: {line}");
    }
}

#[test]
fn markdown_files_get_the_diagram_fenced() {
    let fenced = fenced(&diagram());
    assert!(fenced.starts_with("```mermaid\nsequenceDiagram\n") && fenced.ends_with("```\n"));
}

/// `text` without Mermaid's entity codes (`#59;`).
fn without_entities(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(';') {
            rest = &after[digits + 1..];
        } else {
            out.push('#');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}
