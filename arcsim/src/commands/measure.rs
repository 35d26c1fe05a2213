//! `arcsim measure kills|probes|reports`: the rates every bound is derived from, measured on seeds the
//! caller picks (pick seeds no test uses). `kills` runs bug variants on every seed and counts, per
//! oracle, the seeds it failed; `probes` runs the fixed controller in each race world and its control
//! world and counts, per probe, the seeds it fired in; `reports` runs every profile's fixed build in
//! each field report's world and counts, per symptom oracle, the seeds that showed it. Each line gives
//! the count, the bound it implies and the `(hits, seeds, from)` triple the kill table, the scenarios'
//! probe goals and the field-report table hold.

use super::exit;
use std::fmt::Write as _;

use arc_sim::Seed;

use crate::commands::progress::Progress;
use crate::sweep::{Cell, SweepPlan, sweep};
use arc_controller::Profile;
use arc_judging::rates::Rate;
use arc_scenarios::kill_rates::{self, Table};
use arc_scenarios::kill_table::{KillExpectation, expectations_on};
use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::net::Network;

/// What to measure.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Measured {
    /// Kill rates of bug variants, per oracle.
    Kills,
    /// Probe rates of race worlds and their control worlds.
    Probes,
    /// Symptom rates of every profile's fixed build in the field reports' worlds.
    Reports,
}

/// Options of `arcsim measure`.
#[derive(Debug, Clone, clap::Args)]
pub struct MeasureArgs {
    /// What to measure.
    pub what: Measured,
    /// First seed.
    #[arg(long, value_parser = crate::cli::parse_seed)]
    pub from: Seed,
    /// Number of seeds.
    #[arg(long)]
    pub count: u32,
    /// Only this scenario (default: every scenario with kill rows, every race scenario, or every
    /// field report).
    #[arg(long, value_parser = crate::cli::parse_scenario)]
    pub scenario: Option<String>,
    /// Only this variant (kills; default: every bug variant).
    #[arg(long, value_parser = crate::cli::parse_variant)]
    pub variant: Option<Variant>,
    /// Every bug variant in every chosen scenario, not only the kill table's cells.
    #[arg(long)]
    pub matrix: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// The network every run uses (kills: measured against the rows of that network, so
    /// `turmoil` measures the rows that hold on turmoil, `arcsim list kill-table`'s NETWORK).
    #[arg(long, default_value = "in-process")]
    pub network: Network,
    /// Write the sweep report as JSON to this file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
    /// Kills: write the rate measured for each kill-table row into this rates file
    /// (`scenarios/kill-rates.tsv`), keeping its other lines; rebuild to take them up. Rows that kill
    /// only under other alternatives about GitHub than the defaults measured here are left alone.
    /// Reports: write each (report, profile, symptom) rate into `scenarios/report-rates.tsv`.
    #[arg(long, value_name = "FILE")]
    pub write: Option<std::path::PathBuf>,
}

/// Runs the measurement and prints one line per (cell, oracle or probe).
pub fn run(args: MeasureArgs) -> anyhow::Result<()> {
    if args.count == 0 {
        return Err(exit::usage("--count must be at least 1"));
    }
    match args.what {
        Measured::Kills => measure_kills(&args),
        Measured::Probes if args.write.is_some() => {
            Err(exit::usage("--write takes kill and report rates (`arcsim measure kills|reports`)"))
        }
        Measured::Probes => measure_probes(&args),
        Measured::Reports if args.json.is_some() => Err(exit::usage(
            "--json takes one sweep (`arcsim measure kills|probes`); reports sweep once per profile",
        )),
        Measured::Reports => measure_reports(&args),
    }
}

/// The scenario `--scenario` names, or every scenario the sweep runs.
fn chosen(args: &MeasureArgs) -> anyhow::Result<Vec<&'static dyn Scenario>> {
    match &args.scenario {
        Some(name) => Ok(vec![scenarios::find(name).map_err(exit::usage)?]),
        None => Ok(scenarios::all()),
    }
}

/// `arcsim measure kills`: the bug variants (or the one `--variant` names) in the chosen scenarios,
/// one line per (cell, oracle); `--write` puts each kill row's rate into the rates file.
fn measure_kills(args: &MeasureArgs) -> anyhow::Result<()> {
    let rates_file = args.write.as_deref().map(|p| RatesFile::read(p, Table::Kills)).transpose()?;
    let variants: Vec<Variant> = match args.variant {
        Some(v) => vec![v],
        None => Variant::ALL.into_iter().filter(|v| !v.is_fixed()).collect(),
    };
    let cells = swept(&measuring_plan(args, Profile::Arcsim, chosen(args)?, variants), args)?;
    let from = args.from.0;
    print!("{}", cells.iter().map(|c| kill_lines(c, from, args.network)).collect::<String>());
    if let Some(file) = rates_file {
        let path = file.path.clone();
        let written = file.write_kills(&cells, from, args.network)?;
        println!("wrote {written} measured rows into {}", path.display());
    }
    Ok(())
}

/// `arcsim measure probes`: the fixed controller in each chosen race world and its control world,
/// one line per (world, probe).
fn measure_probes(args: &MeasureArgs) -> anyhow::Result<()> {
    let mut worlds = Vec::new();
    for s in chosen(args)?.into_iter().filter(|s| !s.probe_goals().is_empty()) {
        worlds.push(s);
        worlds.extend(s.control());
    }
    let cells = swept(&measuring_plan(args, Profile::Arcsim, worlds, vec![Variant::Fixed]), args)?;
    print!("{}", cells.iter().map(|c| probe_lines(c, args.from.0)).collect::<String>());
    Ok(())
}

/// Every seed of `scenarios` × `variants` under `profile`, none stopping early.
fn measuring_plan(
    args: &MeasureArgs,
    profile: Profile,
    scenarios: Vec<&'static dyn Scenario>,
    variants: Vec<Variant>,
) -> SweepPlan<'static> {
    SweepPlan {
        profile,
        scenarios,
        variants,
        seeds: (0..u64::from(args.count)).map(|i| Seed(args.from.0.wrapping_add(i))).collect(),
        fixed_seeds: None,
        jobs: args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        check_determinism: false,
        exhaustive: true,
        matrix: args.matrix || args.variant.is_some(),
        shard: crate::shard::Shard::WHOLE,
        runners: None,
        network: args.network,
        schedule: arc_sim::schedule::Schedule::Fifo,
        assumed: arc_sim::github::Assumed::defaults(),
        draws_assumptions: false,
        until_probes: None,
    }
}

/// Sweeps `plan` with progress on stderr, writing its report to `--json` if asked; its cells.
fn swept(plan: &SweepPlan, args: &MeasureArgs) -> anyhow::Result<Vec<Cell>> {
    let progress = Progress::start();
    let report = sweep(plan, &|done, total| progress.update(done, total));
    progress.finish();
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .map_err(|e| exit::usage(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(report.cells)
}

/// The field report `--scenario` names (any other world is a usage error), or every field report.
fn chosen_reports(args: &MeasureArgs) -> anyhow::Result<Vec<&'static dyn Scenario>> {
    let Some(name) = &args.scenario else { return Ok(scenarios::field_reports::all()) };
    let found = scenarios::find(name).map_err(exit::usage)?;
    if !scenarios::field_reports::all().iter().any(|r| r.name() == found.name()) {
        return Err(exit::usage(format!("{name} is not a field report's world")));
    }
    Ok(vec![found])
}

/// `arcsim measure reports`: every profile's fixed build in each field report's world (or the one
/// `--scenario` names), one line per (report, profile, symptom oracle).
fn measure_reports(args: &MeasureArgs) -> anyhow::Result<()> {
    let rates_file = args.write.as_deref().map(|p| RatesFile::read(p, Table::Reports)).transpose()?;
    let reports = chosen_reports(args)?;
    let from = args.from.0;
    let mut rates = kill_rates::Rates::new();
    for profile in Profile::ALL {
        let plan = measuring_plan(args, profile, reports.clone(), vec![Variant::Fixed]);
        for cell in swept(&plan, args)? {
            let report = reports.iter().find(|r| r.name() == cell.scenario).expect("a swept report");
            for symptom in report.oracles() {
                let hits = cell.oracle_seeds.get(symptom.name()).copied().unwrap_or(0);
                let rate = Rate::measured(hits, cell.runs, from);
                let verb = if hits > 0 { "shows" } else { "survives" };
                println!(
                    "{:<14} {:<12} {:<44} {verb} {hits}/{}",
                    cell.scenario,
                    profile.name(),
                    symptom.name(),
                    cell.runs
                );
                rates.insert(kill_rates::RateKey::of(cell.scenario, profile.name(), symptom.name()), rate);
            }
        }
    }
    if let Some(file) = rates_file {
        let path = file.path.clone();
        let written = file.write(rates)?;
        println!("wrote {written} measured lines into {}", path.display());
    }
    Ok(())
}

/// The rates file `--write` updates, read before anything runs (an unusable file is a usage error).
struct RatesFile {
    path: std::path::PathBuf,
    table: Table,
    text: String,
    rates: kill_rates::Rates,
}

impl RatesFile {
    fn read(path: &std::path::Path, table: Table) -> anyhow::Result<Self> {
        let unusable = |e: &dyn std::fmt::Display| exit::usage(format!("{}: {e}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| unusable(&e))?;
        let rates = kill_rates::parse_table(table, &text).map_err(|e| unusable(&e))?;
        Ok(RatesFile { path: path.to_path_buf(), table, text, rates })
    }

    /// Puts `measured` into the file, keeping its other lines; returns how many it put. The file is
    /// read again first: another measurement may have written its own rows since this one started,
    /// and writing over them from the text read at the start would put their old rates back.
    fn write(self, measured: kill_rates::Rates) -> anyhow::Result<usize> {
        let written = measured.len();
        let mut now = RatesFile::read(&self.path, self.table)?;
        now.rates.extend(measured);
        std::fs::write(&now.path, kill_rates::format_table(now.table, &now.rates, &now.text))
            .map_err(|e| exit::usage(format!("cannot write {}: {e}", now.path.display())))?;
        Ok(written)
    }

    /// Puts the rate of every kill-table row measured in `cells` into the file; returns how many.
    fn write_kills(self, cells: &[Cell], from: u64, network: Network) -> anyhow::Result<usize> {
        let defaults = arc_sim::github::Assumed::defaults();
        let mut measured = kill_rates::Rates::new();
        for cell in cells {
            let rows = rows_of(cell, network).into_iter().filter(|r| r.holds_under(Some(&defaults)));
            for row in rows {
                let hits = cell.oracle_seeds.get(row.oracle.name()).copied().unwrap_or(0);
                measured.insert(row.key(), Rate::measured(hits, cell.runs, from));
            }
        }
        self.write(measured)
    }
}

/// The kill rows of `cell`'s variant and scenario on `network`.
fn rows_of(cell: &Cell, network: Network) -> Vec<&'static KillExpectation> {
    expectations_on(network, cell.variant, cell.scenario)
}

fn kill_lines(cell: &Cell, from: u64, network: Network) -> String {
    let mut out = String::new();
    let rows = rows_of(cell, network);
    for (oracle, hits) in &cell.oracle_seeds {
        let rate = Rate::measured(*hits, cell.runs, from);
        let row = if rows.iter().any(|r| r.oracle.name() == *oracle) { "row" } else { "-" };
        let _ = writeln!(
            out,
            "{:<28} {:<32} {:<36} {:>5}/{:<5} p={:.3} bound={:<6} median={:<5} ({}, {}, {}) {row}",
            cell.scenario,
            cell.variant.name(),
            oracle,
            hits,
            cell.runs,
            rate.share(),
            rate.kill_bound().map_or("-".into(), |b| b.to_string()),
            rate.median_seeds_to_kill().map_or("-".into(), |b| b.to_string()),
            hits,
            cell.runs,
            from
        );
    }
    for row in rows.iter().filter(|r| !cell.oracle_seeds.contains_key(r.oracle.name())) {
        let _ = writeln!(
            out,
            "{:<28} {:<32} {:<36} {:>5}/{:<5} NEVER (a row names it)",
            cell.scenario,
            cell.variant.name(),
            row.oracle.name(),
            0,
            cell.runs
        );
    }
    out
}

fn probe_lines(cell: &Cell, from: u64) -> String {
    let mut out = String::new();
    if let Some(first) = &cell.first_failure {
        let _ = writeln!(
            out,
            "{:<36} FIXED CONTROLLER FAILED {} of {} seeds, first {}: {}",
            cell.scenario, cell.failures, cell.runs, first.seed, first.replay
        );
    }
    let declared = cell.probe_goals.iter().map(|(p, _)| *p);
    let fired = cell.probe_seeds.keys().copied();
    let mut probes: Vec<&str> = declared.chain(fired).collect();
    probes.sort_unstable();
    probes.dedup();
    for probe in probes {
        let hits = cell.probe_seeds.get(probe).copied().unwrap_or(0);
        let rate = Rate::measured(hits, cell.runs, from);
        let goal = if cell.probe_goals.iter().any(|(p, _)| *p == probe) { "goal" } else { "-" };
        let _ = writeln!(
            out,
            "{:<36} {:<38} {:>5}/{:<5} p={:.3} floor(20)={:<3} ceiling(20)={:<3} ({}, {}, {}) {goal}",
            cell.scenario,
            probe,
            hits,
            cell.runs,
            rate.share(),
            rate.floor(20),
            rate.ceiling(20),
            hits,
            cell.runs,
            from
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_keeps_the_rows_another_measurement_wrote_since_this_one_started() {
        let path = std::env::temp_dir().join(format!("arcsim-rates-{}.tsv", std::process::id()));
        let line = |variant: &str, hits: u32| {
            format!("steady-state\t{variant}\tconverges-after-heal\t{hits}\t400\t1\n")
        };
        let header = "scenario\tvariant\toracle\thits\tseeds\tfrom\n";
        std::fs::write(&path, format!("{header}{}{}", line("bug-a", 1), line("bug-b", 2))).unwrap();
        let mine = RatesFile::read(&path, Table::Kills).unwrap();
        // Another measurement writes bug-b while this one runs.
        std::fs::write(&path, format!("{header}{}{}", line("bug-a", 1), line("bug-b", 200))).unwrap();
        let mut measured = kill_rates::Rates::new();
        measured.insert(
            kill_rates::RateKey::of("steady-state", "bug-a", "converges-after-heal"),
            Rate::measured(300, 400, 9),
        );
        assert_eq!(mine.write(measured).unwrap(), 1);
        let rates = kill_rates::parse_table(Table::Kills, &std::fs::read_to_string(&path).unwrap()).unwrap();
        std::fs::remove_file(&path).unwrap();
        let hits =
            |variant: &str| rates[&kill_rates::RateKey::of("steady-state", variant, "converges-after-heal")];
        assert_eq!(hits("bug-a"), Rate::measured(300, 400, 9), "this measurement's row");
        assert_eq!(
            hits("bug-b"),
            Rate::measured(200, 400, 1),
            "the other's row, not the one read at the start"
        );
    }
}
