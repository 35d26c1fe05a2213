//! `arcsim run`: one scenario, one variant, one seed (or one failure capsule); prints the verdict and
//! the line that replays it.

use super::exit;
use std::path::{Path, PathBuf};

use arc_sim::record::Interest;
use arc_sim::{Seed, TraceMode};

use arc_sim::net::Network;
use arc_sim::schedule::Schedule;

use arc_world::RunRecord;

use arc_sim::github::Assumed;

use crate::capsule::Capsule;
use crate::commands::build_args::BuildArgs;
use crate::failure_story;
use crate::report::verdict_text;
use crate::runner::{run_build, run_build_keeping};
use crate::visual;
use arc_scenarios::assuming::Assuming;
use arc_scenarios::client_limits::WithoutClientLimits;
use arc_scenarios::kill_table;
use arc_scenarios::on_network::OnNetwork;
use arc_scenarios::on_schedule::OnSchedule;
use arc_scenarios::scaled::Scaled;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_scenarios::verdict::{Verdict, replay_program};

/// Options of `arcsim run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Scenario (see `arcsim list`).
    #[arg(long, value_parser = crate::cli::parse_scenario, default_value = "standard")]
    pub scenario: String,
    /// Profile and variant.
    #[command(flatten)]
    pub build: BuildArgs,
    /// The seed (decimal or 0x hex).
    #[arg(long, value_parser = crate::cli::parse_seed, required_unless_present = "capsule")]
    pub seed: Option<Seed>,
    /// Replay a failure capsule (written by `arcsim shrink`) instead of a scenario's seed: the
    /// capsule names its scenario, profile, variant, seed and network.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["seed", "runners"])]
    pub capsule: Option<PathBuf>,
    /// Write the trace to this file.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// Run twice and fail if the traces or verdicts differ.
    #[arg(long)]
    pub check_determinism: bool,
    /// Write the run as a timeline page: one self-contained HTML file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the first violation's window as a Mermaid sequence diagram (fenced when FILE ends in .md).
    #[arg(long, value_name = "FILE")]
    pub mermaid: Option<PathBuf>,
    /// Write the verdict as JSON to this file (wall time included).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Run at N runners: the scale set's maximum (a legacy world's Runners), with the job rate scaled to match.
    #[arg(long, value_name = "N")]
    pub runners: Option<u32>,
    /// The network between the clients and the fakes: `in-process` (fastest) or `turmoil`
    /// (simulated TCP, network faults).
    #[arg(long, default_value = "in-process")]
    pub network: Network,
    /// The order the sim's tasks take same-instant work in: `fifo` (tokio's own, the default),
    /// `random`, or `pct:D` (PCT-like priorities with D − 1 change points), drawn from the seed.
    #[arg(long, default_value = "fifo", conflicts_with = "capsule")]
    pub schedule: Schedule,
    /// Assume this alternative of a behaviour of GitHub's that no public document fixes, `NAME=ALT`
    /// (repeatable; `arcsim list assumptions` names them and their evidence).
    #[arg(long = "assume", value_name = "NAME=ALT", conflicts_with = "capsule")]
    pub assume: Vec<String>,
    /// Do not limit the controller's and listeners' API clients (every world limits them as ARC's
    /// binaries do: 20 QPS and burst 30, 5 and 10 for a listener): does this seed's verdict need ARC's
    /// limiter raised (`--k8s-client-rate-limiter-qps`)?
    #[arg(long, conflicts_with = "capsule")]
    pub unlimited_clients: bool,
}

/// Runs and prints; an error when the run found a violation or was not deterministic.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    check_output_dirs(&args)?;
    if let Some(path) = &args.capsule {
        return run_capsule(path, &args);
    }
    let seed = args.seed.ok_or_else(|| exit::usage("--seed or --capsule is required"))?;
    let found = scenarios::find(&args.scenario).map_err(exit::usage)?;
    let scaled = args.runners.map(|n| Scaled::new(found, n)).transpose()?;
    let sized: &dyn Scenario = match &scaled {
        Some(scaled) => scaled,
        None => found,
    };
    let assumed = Assumed::parse(args.assume.iter().map(String::as_str))?;
    let on_network = OnNetwork { inner: sized, network: args.network };
    let unlimited = WithoutClientLimits { inner: &on_network };
    let on_network: &dyn Scenario = if args.unlimited_clients { &unlimited } else { &on_network };
    let assuming = Assuming::new(on_network, &assumed);
    let on_schedule = OnSchedule::new(&assuming, args.schedule);
    let scenario: &dyn Scenario = &on_schedule;
    let mode = if args.trace.is_some() { TraceMode::Full } else { TraceMode::HashOnly };
    let build = args.build.build();
    // One seed: keep the whole record, for the story of a failure and the pictures.
    let keep = Some(Interest::everything());
    let (verdict, record) = run_build_keeping(scenario, build, seed, mode, keep)?;
    print!("{}", failure_story::stories(&record, &verdict.violations));
    let flagged = |text| {
        let text = with_assumed(with_schedule(with_network(text, args.network), args.schedule), &assumed);
        with_unlimited_clients(text, args.unlimited_clients)
    };
    print!("{}", flagged(with_runners(verdict_text(&verdict), &verdict, args.runners)));
    write_outputs(
        &args,
        &record,
        &verdict,
        &flagged(with_runners(verdict.replay_line(), &verdict, args.runners)),
    )?;
    if args.check_determinism {
        let (again, _) = run_build(scenario, build, seed, TraceMode::HashOnly)?;
        ensure_same(&again, &verdict)?;
    }
    if let Some(note) = no_kill_row_note(build.variant, found.name()) {
        eprintln!("{note}");
    }
    if !verdict.passed() {
        let replay = flagged(with_runners(verdict.replay_line(), &verdict, args.runners));
        return Err(exit::found(format!("{} violation(s); replay with: {replay}", verdict.violations.len())));
    }
    Ok(())
}

/// Replays the capsule in `path`; an error when the run found a violation (saying whether it is the
/// capsule's expected one) or was not deterministic.
fn run_capsule(path: &Path, args: &RunArgs) -> anyhow::Result<()> {
    let capsule = Capsule::load(path)?;
    let mode = if args.trace.is_some() { TraceMode::Full } else { TraceMode::HashOnly };
    let (verdict, record) = capsule.run(mode, Some(Interest::everything()))?;
    let replay = Capsule::replay_line(path);
    print!("{}", failure_story::stories(&record, &verdict.violations));
    print!("{}", verdict_text(&verdict).replace(&verdict.replay_line(), &replay));
    write_outputs(args, &record, &verdict, &replay)?;
    if args.check_determinism {
        let (again, _) = capsule.run(TraceMode::HashOnly, None)?;
        ensure_same(&again, &verdict)?;
    }
    let oracle = &capsule.expected_oracle;
    if !capsule.fails(&verdict) {
        let others = verdict.violations.len();
        return Err(exit::found(format!(
            "the capsule does not reproduce: {oracle} passed ({others} other violation(s)); replay with: {replay}"
        )));
    }
    Err(exit::found(format!("the capsule reproduces: {oracle} failed, as expected; replay with: {replay}")))
}

/// Fails unless `again` (a second run) agrees with `verdict` on everything but wall time.
fn ensure_same(again: &Verdict, verdict: &Verdict) -> anyhow::Result<()> {
    if again.without_wall_time() != verdict.without_wall_time() {
        return Err(exit::found(format!(
            "not deterministic: a second run gave trace hash {:016x} and a different verdict",
            again.trace_hash
        )));
    }
    println!("  determinism: a second run gave the same verdict and trace hash");
    Ok(())
}

/// Writes what the flags ask for: the timeline page, the sequence diagram, the trace, the JSON.
/// Refuses, before the run, an output file whose directory does not exist, so a long run is not
/// lost to a typo in `--html`, `--mermaid`, `--trace` or `--json`.
fn check_output_dirs(args: &RunArgs) -> anyhow::Result<()> {
    let outputs = [
        ("--html", &args.html),
        ("--mermaid", &args.mermaid),
        ("--trace", &args.trace),
        ("--json", &args.json),
    ];
    for (flag, path) in outputs.iter().filter_map(|(flag, path)| path.as_ref().map(|p| (flag, p))) {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(exit::usage(format!(
                "{flag} {}: directory {} does not exist",
                path.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

fn write_outputs(args: &RunArgs, record: &RunRecord, verdict: &Verdict, replay: &str) -> anyhow::Result<()> {
    if let Some(path) = &args.html {
        let bytes = visual::files::write_html(path, record, verdict, replay)?;
        println!("  timeline page written to {} ({} KiB)", path.display(), bytes / 1024);
    }
    if let Some(path) = &args.mermaid {
        let lines = visual::files::write_mermaid(path, record, verdict)?;
        println!("  sequence diagram written to {} ({lines} lines)", path.display());
    }
    if let Some(path) = &args.trace {
        std::fs::write(path, record.trace.text())
            .map_err(|e| exit::usage(format!("cannot write {}: {e}", path.display())))?;
        println!("  trace written to {}", path.display());
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(verdict)?;
        std::fs::write(path, json)
            .map_err(|e| exit::usage(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// `text` with `--runners` added to the verdict's replay line, when the run had it.
fn with_runners(text: String, verdict: &Verdict, runners: Option<u32>) -> String {
    match runners {
        Some(n) => {
            let replay = verdict.replay_line();
            text.replace(&replay, &format!("{replay} --runners {n}"))
        }
        None => text,
    }
}

/// `text` with `--network NAME` after every replay command, off the default backend.
pub fn with_network(text: String, network: Network) -> String {
    match network.is_in_process() {
        true => text,
        false => after_replay_commands(&text, &format!(" --network {network}")),
    }
}

/// `text` with `--unlimited-clients` after every replay command, when the run had no client limits.
pub fn with_unlimited_clients(text: String, unlimited: bool) -> String {
    match unlimited {
        true => after_replay_commands(&text, " --unlimited-clients"),
        false => text,
    }
}

/// `text` with `--schedule S` after every replay command, off the default (`fifo`).
pub fn with_schedule(text: String, schedule: Schedule) -> String {
    match schedule.is_fifo() {
        true => text,
        false => after_replay_commands(&text, &format!(" --schedule {schedule}")),
    }
}

/// For a bug variant with no kill row in `scenario`, a note saying so and naming the scenarios where
/// the kill table expects it to fail: a pass there says nothing about the bug.
pub fn no_kill_row_note(variant: Variant, scenario: &str) -> Option<String> {
    if variant.is_fixed() || !kill_table::expectations(variant, scenario).is_empty() {
        return None;
    }
    let mut worlds: Vec<&str> = kill_table::KILL_TABLE
        .iter()
        .filter(|row| row.variant == variant)
        .map(|row| row.scenario.name())
        .collect();
    worlds.sort_unstable();
    worlds.dedup();
    let where_ = match worlds.is_empty() {
        true => "no scenario".to_string(),
        false => worlds.join(", "),
    };
    Some(format!(
        "note: the kill table has no row for {variant} in {scenario}, so this run says nothing about the bug; \
         it is expected to fail in: {where_}"
    ))
}

/// `text` with the `--assume` flags of `assumed` on its replay commands, when it has any.
pub fn with_assumed(text: String, assumed: &Assumed) -> String {
    match assumed.is_default() {
        true => text,
        false => after_replay_commands(&text, &assumed.flags()),
    }
}

/// `text` with `flags` appended to every line holding a replay command.
fn after_replay_commands(text: &str, flags: &str) -> String {
    text.lines()
        .map(|line| match line.contains(&format!("{} run ", replay_program())) {
            true => format!("{line}{flags}"),
            false => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if text.ends_with('\n') { "\n" } else { "" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bug_variant_outside_its_worlds_gets_a_note_naming_them() {
        let note = no_kill_row_note(Variant::Bug1087, "assign-during-delete").expect("a note");
        assert!(note.contains("no row for bug-1087 in assign-during-delete"), "{note}");
        assert!(note.contains("token-refresh-recreation"), "{note}");
        assert_eq!(no_kill_row_note(Variant::Bug1087, "token-refresh-recreation"), None, "a row there");
        assert_eq!(no_kill_row_note(Variant::Fixed, "standard"), None, "the fixed controller has no rows");
    }
}
