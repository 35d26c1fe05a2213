//! Printing verdicts and sweep tables, and deciding whether a sweep passed.

use std::fmt::Write as _;

use arc_controller::Profile;

use crate::sweep::{Cell, SweepReport};
use arc_scenarios::kill_table::{JudgedUnder, expectations_under};
use arc_scenarios::verdict::Verdict;

/// A one-run summary: verdict, headline counters, time, trace hash, and the replay line.
pub fn verdict_text(v: &Verdict) -> String {
    let mut out = String::new();
    let status = if v.passed() { "PASS" } else { "FAIL" };
    let _ = writeln!(out, "{status} {} / {} / {} / seed {}", v.scenario, v.profile, v.variant, v.seed);
    for violation in &v.violations {
        let _ = writeln!(
            out,
            "  violation {} at {} [{}]: {}",
            violation.oracle,
            arc_judging::story::told::seconds(violation.at_ms).trim_start(),
            violation.objects.join(", "),
            violation.message
        );
    }
    if !v.passed() && !v.variant.is_fixed() {
        let _ = writeln!(out, "  the bug: {}", v.variant.describe());
        if let Some(file) = v.variant.write_up() {
            let _ = writeln!(out, "  written up in {file}");
        }
    }
    for (name, value) in &v.counters {
        let _ = writeln!(out, "  {name:<32} {value}");
    }
    if !v.probes.is_empty() {
        let probes: Vec<String> = v.probes.iter().map(|(p, n)| format!("{p}×{n}")).collect();
        let _ = writeln!(out, "  probes fired: {}", probes.join(", "));
    }
    let _ = writeln!(
        out,
        "  sim time {:.1} s, wall time {} ms, {} trace lines",
        v.sim_ms as f64 / 1000.0,
        v.wall_ms,
        v.trace_lines
    );
    let _ = writeln!(out, "  trace hash {:016x}", v.trace_hash);
    let _ = writeln!(out, "  replay: {}", v.replay_line());
    out
}

/// What is wrong with a cell, if anything: the fixed controller failed or missed a probe bound, a
/// bug variant survived the bound of one of its rows, a seed could not run, or a trace was not
/// deterministic. Under a profile other than `arcsim` only the last two are problems: failures there
/// are findings ([`cell_finding`]).
pub fn cell_problem(cell: &Cell, under: JudgedUnder<'_>) -> Option<String> {
    if let Some((seed, e)) = cell.errors.first() {
        return Some(format!("seed {seed} could not run: {e}"));
    }
    if let Some(seed) = cell.nondeterministic.first() {
        return Some(format!("seed {seed} gave two different traces"));
    }
    if cell.profile != Profile::Arcsim {
        return None;
    }
    if cell.variant.is_fixed() {
        if cell.failures > 0 {
            return Some(format!("the fixed controller failed {} seed(s)", cell.failures));
        }
        return probe_shortfall(cell);
    }
    expectations_under(cell.profile, cell.variant, cell.scenario, under).into_iter().find_map(|row| {
        let bound = row.within_seeds();
        let first = cell.first_kills.get(row.oracle.name()).copied();
        match first {
            Some(nth) if nth <= bound => None,
            _ if cell.runs < bound => None,
            _ => Some(format!(
                "survived {} seeds (bound {bound}, oracle {})",
                cell.runs.min(bound),
                row.oracle.name()
            )),
        }
    })
}

/// What a cell of a profile other than `arcsim` found: its failing seeds and the first one's oracle
/// (and a declared probe under its minimum, which there is information, not a failure).
pub fn cell_finding(cell: &Cell) -> Option<String> {
    if cell.profile == Profile::Arcsim {
        return None;
    }
    match &cell.first_failure {
        Some(f) => Some(format!(
            "FAILS {}/{} seeds, first by {}",
            cell.failures,
            cell.runs,
            f.violations.first().map_or("?", |v| v.oracle)
        )),
        None if cell.variant.is_fixed() => probe_shortfall(cell).map(|p| format!("ok ({p})")),
        None => None,
    }
}

/// The share of `cell`'s seeds in which `probe` fired.
pub fn probe_share(cell: &Cell, probe: &str) -> f64 {
    if cell.runs == 0 {
        return 0.0;
    }
    f64::from(cell.probe_seeds.get(probe).copied().unwrap_or(0)) / f64::from(cell.runs)
}

/// A declared probe of the cell's scenario outside its bound (a floor in a race world, a ceiling in a
/// control world).
fn probe_shortfall(cell: &Cell) -> Option<String> {
    cell.probe_goals.iter().find_map(|(probe, bound)| {
        let hits = cell.probe_seeds.get(probe).copied().unwrap_or(0);
        bound.check(hits, cell.runs).err().map(|why| format!("probe {probe} {why}"))
    })
}

/// Per scenario (its fixed-controller cell): the share of seeds in which each probe fired, declared
/// probes first with their bound.
pub fn probe_table(report: &SweepReport) -> String {
    let mut out = String::new();
    for cell in report.cells.iter().filter(|c| c.variant.is_fixed() && c.runs > 0) {
        let _ = writeln!(out, "probes of {} ({} seeds, fixed):", cell.scenario, cell.runs);
        for (probe, bound) in &cell.probe_goals {
            let hits = cell.probe_seeds.get(probe).copied().unwrap_or(0);
            let mark = if bound.check(hits, cell.runs).is_ok() { "ok" } else { "OUT" };
            let _ = writeln!(
                out,
                "  {probe:<38} {:>5.1}%  ({hits}/{}, {}) {mark}",
                probe_share(cell, probe) * 100.0,
                cell.runs,
                bound.describe(cell.runs)
            );
        }
        let undeclared =
            cell.probe_seeds.iter().filter(|(p, _)| !cell.probe_goals.iter().any(|(g, _)| g == *p));
        for (probe, seeds) in undeclared {
            let _ =
                writeln!(out, "  {:<38} {:>5.1}%  ({seeds} seeds)", probe, probe_share(cell, probe) * 100.0);
        }
    }
    out
}

/// The sweep table: one row per scenario × variant.
pub fn sweep_table(report: &SweepReport) -> String {
    let under = report.plan.judged_under();
    let mut out = String::new();
    if let Some(cell) = report.cells.first() {
        let _ = writeln!(out, "profile {}", cell.profile);
    }
    let _ = writeln!(
        out,
        "{:<28} {:<32} {:>6} {:>8} {:>12} {:>9}  verdict",
        "scenario", "variant", "seeds", "failures", "first fail", "sim-h"
    );
    for cell in &report.cells {
        let first =
            cell.first_failure.as_ref().map_or("-".to_string(), |f| format!("#{} ({})", f.nth, f.seed));
        let verdict = match (cell_problem(cell, under), cell_finding(cell), cell.variant.is_fixed()) {
            (Some(problem), _, _) => format!("PROBLEM: {problem}"),
            (None, Some(finding), _) => finding,
            (None, None, true) => "ok".to_string(),
            (None, None, false) => {
                let rows = expectations_under(cell.profile, cell.variant, cell.scenario, under);
                match &cell.first_failure {
                    Some(_) if !rows.is_empty() => {
                        let by: Vec<&str> = rows.iter().map(|r| r.oracle.name()).collect();
                        format!("killed by {}", by.join(", "))
                    }
                    Some(f) => format!("killed by {}", f.violations[0].oracle),
                    None if rows.is_empty() => "not killed (no expectation here)".to_string(),
                    None => "not killed yet (within its bound)".to_string(),
                }
            }
        };
        let sim_hours = cell.sim_ms as f64 / 3_600_000.0;
        let _ = writeln!(
            out,
            "{:<28} {:<32} {:>6} {:>8} {:>12} {:>9.1}  {verdict}",
            cell.scenario,
            cell.variant.name(),
            cell.runs,
            cell.failures,
            first,
            sim_hours
        );
    }
    for cell in &report.cells {
        if let Some(f) = &cell.first_failure {
            let _ = writeln!(out, "replay {} / {}: {}", cell.scenario, cell.variant, f.replay);
        }
    }
    out
}

/// Whether every cell is free of problems.
pub fn sweep_passed(report: &SweepReport) -> bool {
    let under = report.plan.judged_under();
    report.cells.iter().all(|c| cell_problem(c, under).is_none())
}
