//! A run as a reviewer reads it: the world's configuration, the verdict (without wall time), API
//! requests per verb × resource × code with each actor's share, GitHub state changes per kind, and a
//! window of the trace around each probe's first hit. The canonical-trace snapshots are this text,
//! so that a change in behaviour shows up as a change a reader can follow, not only as a new hash.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use arc_sim::apiserver::{AuditEntry, WatchOpened};
use arc_world::RunRecord;
use serde_json::Value;

use crate::report::verdict_text;
use arc_judging::probe_hits::{FirstHit, first_hit, trace_line_of};
use arc_judging::probes;
use arc_scenarios::verdict::Verdict;

/// Trace lines shown on each side of a probe's first hit.
pub const WINDOW_RADIUS: usize = 15;

/// The whole review of `record` (which must hold its full trace and every event, as a run keeping
/// `Interest::everything()` in `TraceMode::Full` has) and its `verdict`.
pub fn text(verdict: &Verdict, record: &RunRecord) -> String {
    let lines = record.trace.lines();
    let mut out = String::new();
    let _ = writeln!(out, "lines: {}\nhash: {:016x}", record.trace.len(), record.trace.hash());
    section(&mut out, "world config (the trace's first line)", &config(&lines));
    section(&mut out, "verdict", &verdict_without_wall_time(verdict));
    section(&mut out, "API requests: verb resource code → count (per actor)", &api_requests(record));
    section(&mut out, "GitHub state changes per kind", &github_events(record));
    section(
        &mut out,
        "probes: the trace around each one's first hit",
        &probe_windows(verdict, record, &lines),
    );
    out
}

fn section(out: &mut String, title: &str, body: &str) {
    let _ = writeln!(out, "\n== {title}");
    out.push_str(body);
}

/// The configuration the world was built from, pretty-printed.
pub fn config(lines: &[String]) -> String {
    let Some(json) = lines.iter().find_map(|l| l.strip_prefix("0 world config ")) else {
        return "(no config line)\n".into();
    };
    match serde_json::from_str::<Value>(json) {
        Ok(value) => format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default()),
        Err(_) => format!("{json}\n"),
    }
}

/// The verdict's text with neither its wall time nor the line's mention of it.
pub fn verdict_without_wall_time(verdict: &Verdict) -> String {
    verdict_text(&verdict.without_wall_time()).replace(", wall time 0 ms", "")
}

/// One row per (verb, resource, code) of every answered request (watches included), with its count and
/// each actor's share; then the total per actor.
pub fn api_requests(record: &RunRecord) -> String {
    let mut rows: BTreeMap<(String, String, u16), BTreeMap<&str, u64>> = BTreeMap::new();
    for a in record.events_of::<AuditEntry>() {
        let resource =
            if a.status_subresource { format!("{}/status", a.resource) } else { a.resource.clone() };
        *rows.entry((a.verb.to_string(), resource, a.code)).or_default().entry(&a.actor).or_default() += 1;
    }
    for w in record.events_of::<WatchOpened>() {
        let actor = w.actor.as_deref().unwrap_or("client");
        *rows.entry(("watch".into(), w.resource.clone(), 200)).or_default().entry(actor).or_default() += 1;
    }
    let mut per_actor: BTreeMap<&str, u64> = BTreeMap::new();
    let mut out = String::new();
    for ((verb, resource, code), actors) in &rows {
        let total: u64 = actors.values().sum();
        let _ = writeln!(out, "  {verb:<7} {resource:<34} {code} {total:>6}  {}", shares(actors));
        for (actor, n) in actors {
            *per_actor.entry(actor).or_default() += n;
        }
    }
    let total: u64 = per_actor.values().sum();
    let _ = writeln!(out, "  all {total} requests: {}", shares(&per_actor));
    out
}

fn shares(counts: &BTreeMap<&str, u64>) -> String {
    counts.iter().map(|(actor, n)| format!("{actor} {n}")).collect::<Vec<_>>().join(", ")
}

/// How many of each kind of GitHub state change the run made.
pub fn github_events(record: &RunRecord) -> String {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for e in record.github_events() {
        let kind = serde_json::to_value(&e.kind)
            .ok()
            .and_then(|v| v.get("event").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| "?".into());
        *counts.entry(kind).or_default() += 1;
    }
    let mut out = String::new();
    for (kind, n) in &counts {
        let _ = writeln!(out, "  {kind:<24} {n:>6}");
    }
    if counts.is_empty() {
        out.push_str("  (none)\n");
    }
    out
}

/// For each probe that fired, its count and the trace lines around the event after which it first
/// counted a hit (that line marked `>>`).
pub fn probe_windows(verdict: &Verdict, record: &RunRecord, lines: &[String]) -> String {
    let mut out = String::new();
    let mut shown: BTreeMap<usize, &str> = BTreeMap::new();
    for probe in probes::all().iter().filter(|p| verdict.probes.contains_key(p.name)) {
        let hits = verdict.probes[probe.name];
        let _ = writeln!(out, "\n-- {} ({hits} hits): {}", probe.name, probe.describe);
        match first_hit(record, probe) {
            Some(FirstHit::Event { index, at_ms }) => match trace_line_of(record, index, lines) {
                Some(at) if shown.contains_key(&at) => {
                    let _ = writeln!(
                        out,
                        "   first hit at {at_ms} ms, trace line {at}: the same as {}'s, above",
                        shown[&at]
                    );
                }
                Some(at) => {
                    let _ = writeln!(out, "   first hit at {at_ms} ms, trace line {at}:");
                    window(&mut out, lines, at);
                    shown.insert(at, probe.name);
                }
                None => {
                    let _ = writeln!(out, "   first hit at {at_ms} ms (no trace line found)");
                }
            },
            Some(FirstHit::EndState) => {
                out.push_str(
                    "   counted from the end-of-run state (metrics or final objects): no event to show\n",
                );
            }
            None => out.push_str("   not counted on this record\n"),
        }
    }
    if verdict.probes.is_empty() {
        out.push_str("  (no probe fired)\n");
    }
    out
}

/// [`WINDOW_RADIUS`] lines either side of line `at`, each with its line number.
fn window(out: &mut String, lines: &[String], at: usize) {
    let from = at.saturating_sub(WINDOW_RADIUS);
    let to = (at + WINDOW_RADIUS + 1).min(lines.len());
    for (n, line) in lines.iter().enumerate().take(to).skip(from) {
        let mark = if n == at { ">>" } else { "  " };
        let _ = writeln!(out, "   {mark} {n:>6}  {line}");
    }
}
