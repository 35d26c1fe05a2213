//! The same seed gives the same run, wherever it can break: the whole verdict (violations, probes,
//! counters, the trace hash of the run and of each twin) in this process and in a child process, for
//! every scenario and one bug variant; and a sweep gives the same report on one worker thread as on
//! two, with its own determinism check on (each seed run twice in one process).

use std::process::Command;

use arc_scenarios::scenario::Scenario;
use arc_scenarios::scenarios;
use arc_scenarios::scenarios::watch_lag::WatchLagDuplicateCreate;
use arc_scenarios::variant::Variant;
use arc_sim::{Seed, TraceMode};
use arcsim::runner::run_one;
use arcsim::sweep::{SweepPlan, sweep};

use crate::support::without_wall_time;

const SEED: u64 = 11;

/// Every scenario with the fixed controller, and one bug variant.
fn cases() -> Vec<(&'static dyn Scenario, Variant)> {
    let mut cases: Vec<(&'static dyn Scenario, Variant)> =
        scenarios::all().into_iter().map(|s| (s, Variant::Fixed)).collect();
    cases.push((&WatchLagDuplicateCreate, Variant::Bug4201));
    cases
}

/// Steady-state seed 5 restarts the controller at 297.9 s; its informers sync in one instant and wake
/// the workers waiting on them through `tokio::sync::watch`, whose wake order tokio draws from its own
/// RNG. Unseeded, that RNG differs per process (three different traces in six processes); seeded from
/// the run's seed, every process gives the same verdict.
#[test]
fn child_processes_agree_where_tokio_draws_a_wake_order() {
    let verdicts = child_verdicts("wake-order", &["run", "--scenario", "steady-state", "--seed", "5"], 3);
    assert_eq!(verdicts[0].0, verdicts[1].0, "two processes ran steady-state seed 5 differently");
    assert_eq!(verdicts[0].0, verdicts[2].0, "two processes ran steady-state seed 5 differently");
}

/// The verdicts (wall time zeroed) of `children` processes of `arcsim` with `args` and `--json`, each
/// with whether the process exited 0.
fn child_verdicts(tag: &str, args: &[&str], children: usize) -> Vec<(serde_json::Value, bool)> {
    let dir = std::env::temp_dir().join(format!("arcsim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let verdicts = (0..children)
        .map(|child| {
            let file = dir.join(format!("{child}.json"));
            let status = Command::new(env!("CARGO_BIN_EXE_arcsim"))
                .args(args)
                .arg("--json")
                .arg(&file)
                .status()
                .expect("arcsim runs");
            let mut verdict: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&file).expect("the child wrote its verdict"))
                    .expect("JSON");
            verdict["wall_ms"] = 0.into();
            (verdict, status.success())
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    verdicts
}

#[test]
fn a_sweep_on_one_thread_and_on_two_gives_the_same_report() {
    let plan = |jobs| SweepPlan {
        profile: arc_controller::Profile::Arcsim,
        scenarios: vec![scenarios::find("standard").unwrap(), &WatchLagDuplicateCreate],
        variants: vec![Variant::Fixed, Variant::Bug4201],
        seeds: vec![Seed(3)],
        fixed_seeds: None,
        jobs,
        check_determinism: true,
        exhaustive: false,
        matrix: false,
        shard: arcsim::shard::Shard::WHOLE,
        runners: None,
        network: arc_sim::net::Network::InProcess,
        schedule: arc_sim::schedule::Schedule::Fifo,
        assumed: arc_sim::github::Assumed::defaults(),
        draws_assumptions: false,
        until_probes: None,
    };
    let report = |jobs| {
        let json = without_wall_time(serde_json::to_value(sweep(&plan(jobs), &|_, _| {})).unwrap());
        for cell in json["cells"].as_array().unwrap() {
            assert_eq!(cell["nondeterministic"], serde_json::json!([]), "{cell}");
        }
        json
    };
    assert_eq!(report(1), report(2));
}

#[test]
fn until_probes_stops_at_the_same_seed_on_one_thread_and_on_two() {
    let plan = |jobs| SweepPlan {
        profile: arc_controller::Profile::Arcsim,
        scenarios: vec![&WatchLagDuplicateCreate],
        variants: vec![Variant::Fixed],
        seeds: (1..=8).map(Seed).collect(),
        fixed_seeds: None,
        jobs,
        check_determinism: false,
        exhaustive: false,
        matrix: false,
        shard: arcsim::shard::Shard::WHOLE,
        runners: None,
        until_probes: Some(2),
        network: arc_sim::net::Network::InProcess,
        schedule: arc_sim::schedule::Schedule::Fifo,
        assumed: arc_sim::github::Assumed::defaults(),
        draws_assumptions: false,
    };
    let cells: Vec<_> = [1, 2].map(|jobs| sweep(&plan(jobs), &|_, _| {}).cells.remove(0)).into();
    for cell in &cells {
        let reached = cell.probes_reached_at.expect("race 1's probes fire in two of eight seeds");
        assert_eq!(cell.runs, reached, "the cell tallies exactly the seeds up to the stop");
        assert!(reached < 8, "it stopped before the last seed");
        for probe in arcsim::coverage::awaited(&WatchLagDuplicateCreate) {
            assert!(cell.probe_seeds[probe] >= 2, "{probe} fired in two seeds by the stop");
        }
    }
    assert_eq!(cells[0].probes_reached_at, cells[1].probes_reached_at);
    let tallied = |i: usize| without_wall_time(serde_json::to_value(&cells[i].seeds).unwrap());
    assert_eq!(tallied(0), tallied(1), "the same seeds, with the same probes, either way");
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`).
mod slow {
    use super::*;

    /// Twice for each case: in this process (with the full trace kept) and in a child `arcsim run` (hash
    /// only), started first so that both run at once. The whole verdicts must agree, wall time aside: the
    /// trace hash (each write's line carries a hash of its body), the twins' hashes, violations, probes and
    /// counters. This process runs the cases one after another on one thread, so a run that left state
    /// behind (a global, a thread-local, a reused RNG) would change the next case here and not in its
    /// fresh child; the child shares nothing with this process but the binary's code.
    #[test]
    #[ignore = "slow tier: a child process per scenario"]
    fn the_same_seed_gives_the_same_verdict_in_this_process_and_in_a_child() {
        let dir = std::env::temp_dir().join(format!("arcsim-determinism-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        for (scenario, variant) in cases() {
            let name = scenario.name();
            let file = dir.join(format!("{name}-{variant}.json"));
            let mut child = Command::new(env!("CARGO_BIN_EXE_arcsim"))
                .args(["run", "--scenario", name, "--variant", variant.name(), "--seed", &SEED.to_string()])
                .arg("--json")
                .arg(&file)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("arcsim runs");
            let (here, _) =
                run_one(scenario, variant, Seed(SEED), TraceMode::Full).expect("the run completes");
            let here = here.without_wall_time();
            let status = child.wait().expect("arcsim ran");
            assert_eq!(status.success(), here.passed(), "{name}: the child's exit status");
            let mut there: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&file).expect("the child wrote its verdict"))
                    .expect("JSON");
            there["wall_ms"] = 0.into();
            assert_eq!(there, serde_json::to_value(&here).unwrap(), "{name}/{variant}: the child's verdict");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Under `--network turmoil` the world runs on turmoil's hosts, each with its own runtime, and turmoil
    /// draws segment latencies and every host runtime's scheduler seed from its RNG: seeded from the run's
    /// seed, two processes give the same verdict and trace hash.
    #[test]
    #[ignore = "slow tier: a child process per scenario"]
    fn child_processes_agree_on_the_turmoil_network() {
        let args = ["run", "--scenario", "standard", "--seed", "11", "--network", "turmoil"];
        let verdicts = child_verdicts("turmoil", &args, 2);
        assert!(verdicts[0].1, "standard seed 11 fails on the turmoil network");
        assert_eq!(verdicts[0], verdicts[1], "two processes ran standard seed 11 on turmoil differently");
    }
}
