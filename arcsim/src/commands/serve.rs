//! `arcsim serve`: runs a scenario's world to a simulated instant, pauses it and serves it there —
//! the Kubernetes API read-only for kubectl, the fake GitHub's state at `/github/state` — while
//! commands on stdin step it on (`step 5s`, `until TEXT`, `continue`). Loopback only, unless
//! `--allow-remote`: the fakes have no authentication.

use super::exit;
use std::io::BufRead;
use std::net::SocketAddr;
use std::time::Duration;

use arc_sim::apiserver::Registry;
use arc_sim::github::Assumed;
use arc_sim::record::Interest;
use arc_sim::{Seed, TraceMode};
use arc_world::trace_line;
use arc_world::{Progress, SteppedWorld, arc_crds};

use crate::failure_story;
use crate::serve::command::HELP;
use crate::serve::table::Columns;
use crate::serve::view::GITHUB_STATE_PATH;
use crate::serve::{Command, Sightings, Snapshot, View, ViewServer};
use arc_judging::story::told::seconds;
use arc_scenarios::assuming::Assuming;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;

/// Options of `arcsim serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Scenario (see `arcsim list`).
    #[arg(long, value_parser = crate::cli::parse_scenario)]
    pub scenario: String,
    /// Variant: `fixed` or a historic bug (see `arcsim list`).
    #[arg(long, default_value = "fixed", value_parser = crate::cli::parse_variant)]
    pub variant: Variant,
    /// The seed (decimal or 0x hex).
    #[arg(long, value_parser = crate::cli::parse_seed)]
    pub seed: Seed,
    /// Pause the world at this simulated time, e.g. 400s, 90000ms, 7m (with --until-violation: at
    /// the first violation, or at this time if none comes before).
    #[arg(long, value_parser = crate::serve::parse_duration, required_unless_present = "until_violation")]
    pub until: Option<Duration>,
    /// Pause the world just after the first violation an oracle finds on the run so far (the world is
    /// run to it, then run again from the start to that instant: a seed runs the same however paused).
    #[arg(long)]
    pub until_violation: bool,
    /// Address to serve on (port 0 picks a free port). Loopback only unless --allow-remote.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Serve on a non-loopback address (anyone who can reach it reads the world: no authentication).
    #[arg(long)]
    pub allow_remote: bool,
    /// Assume this alternative about GitHub, `NAME=ALT` (repeatable; `arcsim list assumptions`).
    #[arg(long = "assume", value_name = "NAME=ALT")]
    pub assume: Vec<String>,
}

/// Whether `listen` may be served: loopback always; anything else only with `allow_remote`, with a
/// warning to print.
pub fn check_listen(listen: SocketAddr, allow_remote: bool) -> Result<Option<String>, String> {
    if listen.ip().is_loopback() {
        return Ok(None);
    }
    if !allow_remote {
        return Err(format!(
            "refusing to serve on {listen}: the fake API server and GitHub have no authentication, so \
             anyone who can reach a non-loopback address could read the world; use 127.0.0.1 or pass \
             --allow-remote"
        ));
    }
    Ok(Some(format!(
        "warning: serving on {listen}, not loopback: there is no authentication, anyone who can reach it \
         can read this world"
    )))
}

/// Serves until stdin ends or `quit`.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    if let Some(warning) = check_listen(args.listen, args.allow_remote).map_err(exit::usage)? {
        eprintln!("{warning}");
    }
    let found = scenarios::find(&args.scenario).map_err(exit::usage)?;
    let assumed = Assumed::parse(args.assume.iter().map(String::as_str))?;
    let assuming = Assuming::new(found, &assumed);
    let scenario: &dyn Scenario = &assuming;
    let start = || -> anyhow::Result<SteppedWorld> {
        let plan = scenario.world(args.seed, args.variant);
        let keep = Interest::everything();
        Ok(SteppedWorld::start(plan.config, plan.families, plan.settled, TraceMode::HashOnly, keep)?)
    };
    let until_ms = args.until.map_or(u64::MAX, |until| u64::try_from(until.as_millis()).unwrap_or(u64::MAX));
    let mut sightings = Sightings::of(scenario);
    let mut world = start()?;
    let mut progress = world.run_until(if args.until_violation { 0 } else { until_ms });
    if args.until_violation {
        match first_violation_ms(&mut world, &mut sightings, until_ms) {
            Some((at_ms, seen_ms)) => {
                world = start()?;
                sightings.clear();
                progress = world.run_until(at_ms);
                // A violation shows once the events it rests on are recorded (a request's when its
                // answer leaves): step a millisecond at a time to the first instant it shows.
                while !sightings.shows_any(&world) && world.now_ms() < seen_ms && !world.ended() {
                    progress = world.step(Duration::from_millis(1));
                }
            }
            None => {
                progress = world.run_until(until_ms);
                println!("no violation showed by {}", seconds(world.now_ms()).trim_start());
            }
        }
    }
    let view = View::new(Registry::new(arc_crds()), Columns::from_manifests(arc_controller::crd::MANIFESTS));
    let server = ViewServer::start(args.listen, view, Snapshot::of(&world))?;
    banner(&args, server.addr());
    report(&world, progress, scenario, &mut sightings);
    let mut lines = std::io::stdin().lock().lines();
    loop {
        let Some(line) = lines.next().transpose()? else {
            eprintln!(
                "arcsim serve: standard input ended, so serving stopped (keep it open to keep the world \
                 served: a terminal, or `sleep infinity | arcsim serve …`)"
            );
            break;
        };
        if line.trim().is_empty() {
            continue;
        }
        match line.parse::<Command>() {
            Err(e) => println!("{e}"),
            Ok(Command::Quit) => break,
            Ok(Command::Status) => status(&world, &sightings),
            Ok(command) => {
                let progress = execute(&mut world, command);
                server.show(Snapshot::of(&world));
                if let Some(progress) = progress {
                    report(&world, progress, scenario, &mut sightings);
                }
            }
        }
    }
    server.stop();
    Ok(())
}

fn banner(args: &ServeArgs, addr: SocketAddr) {
    let assumed = Assumed::parse(args.assume.iter().map(String::as_str)).unwrap_or_default();
    println!(
        "arcsim serve: {} / {} / seed {} (assuming {assumed}) on http://{addr} (read-only; kubectl reads, stdin steps)",
        args.scenario, args.variant, args.seed
    );
    println!("  kubectl --server http://{addr} get ephemeralrunners,pods -A");
    println!("  curl http://{addr}{GITHUB_STATE_PATH}");
    println!("  {HELP}");
}

/// Carries out `command`; where it left the world, if it moved or was asked where it is.
fn execute(world: &mut SteppedWorld, command: Command) -> Option<Progress> {
    match command {
        Command::Step(by) => Some(world.step(by)),
        Command::Until(text) => {
            let (progress, event) =
                world.run_until_event(|e| trace_line(e).is_some_and(|l| l.contains(&text)));
            match event.and_then(|e| trace_line(&e)) {
                Some(line) => println!("{line}"),
                None => println!("no trace line contained {text:?} before the run ended"),
            }
            Some(progress)
        }
        Command::Continue => Some(world.run_until(u64::MAX)),
        Command::Help => {
            println!("{HELP}");
            None
        }
        Command::Status | Command::Quit => None,
    }
}

/// Runs `world` on in growing steps, judging the record so far after each, until a violation shows:
/// (its sim ms, the earliest of those found; the sim ms it showed by). `None` if the run ends or
/// `cap_ms` passes first.
fn first_violation_ms(
    world: &mut SteppedWorld,
    sightings: &mut Sightings,
    cap_ms: u64,
) -> Option<(u64, u64)> {
    loop {
        let now = world.now_ms();
        let gap = (now / 20).clamp(1_000, 30_000);
        let progress = world.run_until(now.saturating_add(gap).min(cap_ms));
        let (found, _) = sightings.look(world);
        if let Some(first) = found.iter().map(|v| v.at_ms).min() {
            return Some((first, world.now_ms()));
        }
        if matches!(progress, Progress::Ended(_)) || world.now_ms() >= cap_ms {
            return None;
        }
    }
}

/// Where the world is and what has been found wrong so far.
fn status(world: &SteppedWorld, sightings: &Sightings) {
    position(
        world,
        if world.ended() { Progress::Ended(world.now_ms()) } else { Progress::Paused(world.now_ms()) },
    );
    match sightings.seen() {
        [] => println!("no violation so far (of the oracles that judge a run before its end)"),
        seen => {
            println!("{} violation(s) so far:", seen.len());
            for v in seen {
                println!(
                    "  {} at {} [{}]: {}",
                    v.oracle,
                    seconds(v.at_ms).trim_start(),
                    v.objects.join(", "),
                    v.message
                );
            }
        }
    }
}

/// Where the world is; the violations that showed since the last report, each with its story; at
/// the run's end, what every oracle of the scenario says of it.
fn report(world: &SteppedWorld, progress: Progress, scenario: &dyn Scenario, sightings: &mut Sightings) {
    position(world, progress);
    match progress {
        Progress::Paused(_) => {
            let (found, record) = sightings.look(world);
            print!("{}", failure_story::stories(&record, &found));
        }
        Progress::Ended(_) => judge(world, scenario),
    }
}

fn position(world: &SteppedWorld, progress: Progress) {
    let rv = world.apiserver().resource_version();
    let events = world.record().emitted();
    match progress {
        Progress::Paused(ms) => {
            println!("paused at {} (resourceVersion {rv}, {events} events so far)", seconds(ms).trim_start())
        }
        Progress::Ended(ms) => {
            println!("the run ended at {} (resourceVersion {rv}, {events} events)", seconds(ms).trim_start())
        }
    }
}

fn judge(world: &SteppedWorld, scenario: &dyn Scenario) {
    match world.outcome() {
        Some(Ok(record)) => {
            let violations: Vec<_> = scenario.oracles().iter().flat_map(|o| o.check(record)).collect();
            print!("{}", failure_story::stories(record, &violations));
            match violations.len() {
                0 => println!("PASS: no oracle found a violation"),
                n => println!("FAIL: {n} violation(s)"),
            }
        }
        Some(Err(e)) => println!("the world failed: {e}"),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_is_served_without_allow_remote() {
        let loopback: SocketAddr = "127.0.0.1:6443".parse().unwrap();
        let v6: SocketAddr = "[::1]:6443".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:6443".parse().unwrap();
        assert_eq!(check_listen(loopback, false), Ok(None));
        assert_eq!(check_listen(v6, false), Ok(None));
        let refused = check_listen(any, false).unwrap_err();
        assert!(refused.contains("no authentication") && refused.contains("--allow-remote"), "{refused}");
        assert!(check_listen(any, true).unwrap().unwrap().contains("warning"));
    }
}
