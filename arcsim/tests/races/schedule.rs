//! Schedule exploration (`--schedule fifo|random|pct:D`): `fifo` is the run without a schedule, byte
//! for byte; the same seed and schedule give the same trace (and a capsule keeps its schedule);
//! `random` and `pct:3` change the interleaving of the standard world's seeds while the fixed
//! controller still passes them; a malformed schedule is a clear error on every command that takes one.

use std::process::Command;

use arc_scenarios::on_schedule::OnSchedule;
use arc_scenarios::scenarios;
use arc_scenarios::variant::{Build, Variant};
use arc_scenarios::verdict::Verdict;
use arc_sim::net::Network;
use arc_sim::schedule::Schedule;
use arc_sim::{Seed, TraceMode};
use arcsim::capsule::Capsule;
use arcsim::runner::run_one;

const PCT3: Schedule = Schedule::Pct { depth: 3 };

/// The fixed controller's run of the standard world's `seed` under `schedule`: verdict and trace.
fn standard(seed: u64, schedule: Schedule) -> (Verdict, String) {
    let scenario = OnSchedule::new(scenarios::find("standard").unwrap(), schedule);
    let (verdict, record) =
        run_one(&scenario, Variant::Fixed, Seed(seed), TraceMode::Full).expect("the run completes");
    (verdict.without_wall_time(), record.trace.text())
}

#[test]
fn fifo_is_the_run_without_a_schedule() {
    let scenario = scenarios::find("standard").unwrap();
    let (plain, _) = run_one(scenario, Variant::Fixed, Seed(1), TraceMode::Full).unwrap();
    let (fifo, _) = standard(1, Schedule::Fifo);
    assert_eq!(fifo, plain.without_wall_time());
}

#[test]
fn the_same_seed_and_schedule_give_the_same_trace() {
    for schedule in [Schedule::Random, PCT3] {
        let (first, first_trace) = standard(2, schedule);
        let (second, second_trace) = standard(2, schedule);
        assert_eq!(first, second, "{schedule}: two runs of seed 2 gave different verdicts");
        assert!(first_trace == second_trace, "{schedule}: two runs of seed 2 gave different traces");
        assert!(first_trace.lines().next().unwrap().contains(&format!(r#""schedule":"{schedule}""#)));
    }
}

#[test]
fn random_and_pct_change_the_interleaving_and_the_fixed_controller_still_passes() {
    for seed in 1..=3 {
        let (fifo, _) = standard(seed, Schedule::Fifo);
        for schedule in [Schedule::Random, PCT3] {
            let (verdict, _) = standard(seed, schedule);
            assert_ne!(verdict.trace_hash, fifo.trace_hash, "{schedule} left seed {seed}'s trace as fifo's");
            assert!(verdict.passed(), "{} under {schedule}: {:?}", verdict.label(), verdict.violations);
        }
    }
}

#[test]
fn a_capsule_under_a_schedule_replays_its_runs_exact_trace() {
    let scenario = scenarios::find("standard").unwrap();
    let capsule = Capsule {
        schedule: PCT3,
        ..Capsule::of_run(
            scenario,
            Build::arcsim(Variant::Fixed),
            Seed(2),
            Network::InProcess,
            "bounded-pod-creates",
        )
    };
    let back = Capsule::parse(&capsule.to_json()).unwrap();
    let (replayed, _) = back.run(TraceMode::HashOnly, None).unwrap();
    let (direct, _) = standard(2, PCT3);
    assert_eq!(replayed.trace_hash, direct.trace_hash);
}

#[test]
fn a_malformed_schedule_is_a_clear_error_on_every_command_that_takes_one() {
    let depth = "the depth D of pct:D must be a whole number from 1";
    for (command, seeds, bad, says) in [
        ("run", "--seed", "pct:0", depth),
        ("sweep", "--seeds", "pct:x", depth),
        ("explore", "--seed", "foo", "expected fifo, random or pct:D"),
        ("shrink", "--seed", "pct:-1", depth),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_arcsim"))
            .args([command, "--scenario", "standard", seeds, "1", "--schedule", bad])
            .output()
            .expect("arcsim runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command} --schedule {bad}: {stderr}");
        assert!(
            stderr.contains(says) && !stderr.contains("panicked"),
            "{command} --schedule {bad}: {stderr}"
        );
    }
}
