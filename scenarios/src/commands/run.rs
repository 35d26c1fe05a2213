//! `arcsim run`: one scenario, one variant, one seed; prints the verdict and the line that replays it.

use std::path::PathBuf;

use arc_controller::Profile;
use arc_sim::record::Interest;
use arc_sim::{Seed, TraceMode};

use arc_sim::net::Network;

use crate::on_network::OnNetwork;
use crate::report::verdict_text;
use crate::runner::{run_build, run_build_keeping};
use crate::scaled::Scaled;
use crate::scenario::Scenario;
use crate::scenarios;
use crate::variant::{Build, Variant};
use crate::verdict::Verdict;
use crate::{story, visual};

/// Options of `arcsim run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Scenario (see `arcsim list`).
    #[arg(long, default_value = "standard")]
    pub scenario: String,
    /// Profile: the controller build the variant is a variant of (see `arcsim list`).
    #[arg(long, default_value = "arcsim", value_parser = crate::cli::parse_profile)]
    pub profile: Profile,
    /// Variant: `fixed` or a historic bug (see `arcsim list`).
    #[arg(long, default_value = "fixed", value_parser = crate::cli::parse_variant)]
    pub variant: Variant,
    /// The seed (decimal or 0x hex).
    #[arg(long, value_parser = crate::cli::parse_seed)]
    pub seed: Seed,
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
    /// Run at N runners: the scale set's maximum, with the job rate scaled to match.
    #[arg(long, value_name = "N")]
    pub runners: Option<u32>,
    /// The network between the clients and the fakes: `in-process` (fastest) or `turmoil`
    /// (simulated TCP, network faults).
    #[arg(long, default_value = "in-process")]
    pub network: Network,
}

/// Runs and prints; an error when the run found a violation or was not deterministic.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let found = scenarios::find(&args.scenario).map_err(anyhow::Error::msg)?;
    let scaled = args.runners.map(|n| Scaled::new(found, n)).transpose()?;
    let sized: &dyn Scenario = match &scaled {
        Some(scaled) => scaled,
        None => found,
    };
    let on_network = OnNetwork { inner: sized, network: args.network };
    let scenario: &dyn Scenario = &on_network;
    let mode = if args.trace.is_some() { TraceMode::Full } else { TraceMode::HashOnly };
    let build = Build::new(args.profile, args.variant);
    // One seed: keep the whole record, for the story of a failure and the pictures.
    let keep = Some(Interest::everything());
    let (verdict, record) = run_build_keeping(scenario, build, args.seed, mode, keep)?;
    print!("{}", story::stories(&record, &verdict.violations));
    print!("{}", with_network(with_runners(verdict_text(&verdict), &verdict, args.runners), args.network));
    if let Some(path) = &args.html {
        let bytes = visual::files::write_html(path, &record, &verdict)?;
        println!("  timeline page written to {} ({} KiB)", path.display(), bytes / 1024);
    }
    if let Some(path) = &args.mermaid {
        let lines = visual::files::write_mermaid(path, &record, &verdict)?;
        println!("  sequence diagram written to {} ({lines} lines)", path.display());
    }
    if let Some(path) = &args.trace {
        std::fs::write(path, record.trace.text())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        println!("  trace written to {}", path.display());
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&verdict)?;
        std::fs::write(path, json).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    if args.check_determinism {
        let (again, _) = run_build(scenario, build, args.seed, TraceMode::HashOnly)?;
        anyhow::ensure!(
            again.without_wall_time() == verdict.without_wall_time(),
            "not deterministic: a second run gave trace hash {:016x} and a different verdict",
            again.trace_hash
        );
        println!("  determinism: a second run gave the same verdict and trace hash");
    }
    anyhow::ensure!(
        verdict.passed(),
        "{} violation(s); replay with: {}",
        verdict.violations.len(),
        with_network(with_runners(verdict.replay_line(), &verdict, args.runners), args.network)
    );
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
    if network.is_in_process() {
        return text;
    }
    text.lines()
        .map(|line| match line.contains("arcsim -- run ") {
            true => format!("{line} --network {network}"),
            false => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + if text.ends_with('\n') { "\n" } else { "" }
}
