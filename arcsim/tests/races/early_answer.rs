//! Early answers change no verdict. A sweep stops a bug variant's run once every oracle of its kill rows
//! has fired, which is sound only if those oracles judge a record so far as they judge the whole run.
//! Two checks: every oracle that says it does ([`Oracle::judges_so_far`]) finds nothing on the world's
//! own mid-run records (cut every few seconds, with the fakes' state of that moment) that it does not
//! find on the whole run; and a run stopped early fails the same kill rows, with violations the whole
//! run has too.

use std::sync::{Arc, Mutex};

use arc_judging::oracles::Oracle;
use arc_scenarios::kill_table::KILL_TABLE;
use arc_scenarios::scenario::Scenario;
use arc_scenarios::variant::Build;
use arc_scenarios::verdict::Violation;
use arc_sim::{Seed, TraceMode};
use arc_world::EarlyAnswer;
use arcsim::runner::{judges_interest, must_fail, run_build, run_build_to_answer, run_world_answering};

/// How often the first check cuts a run: every few simulated seconds.
const CUT_EVERY_MS: u64 = 10_000;

/// What identifies a violation across records (a time-limit oracle's message says how long it has
/// waited so far, which a cut shortens).
fn identity(v: &Violation) -> (&'static str, u64, Vec<String>) {
    (v.oracle, v.at_ms, v.objects.clone())
}

/// Every (build, scenario) cell of the kill table whose runs can stop early, each once.
fn stoppable_cells() -> Vec<(Build, &'static dyn Scenario)> {
    let mut cells: Vec<(Build, &'static dyn Scenario)> = Vec::new();
    for row in KILL_TABLE {
        let build = Build::arcsim(row.variant);
        let known = cells.iter().any(|(b, s)| *b == build && s.name() == row.scenario.name());
        if !known && must_fail(row.scenario, build).is_some() {
            cells.push((build, row.scenario));
        }
    }
    cells
}

/// Runs `seed` of `build` in `scenario` twice: once cut every [`CUT_EVERY_MS`] and judged by every
/// oracle that judges a record so far, once whole; panics on a violation the cuts found and the whole
/// run did not.
fn cuts_find_only_what_the_whole_run_finds(scenario: &dyn Scenario, build: Build, seed: u64) {
    let promised = build.profile.switches();
    let so_far: Vec<&'static dyn Oracle> =
        scenario.oracles().into_iter().filter(|o| o.applies(&promised) && o.judges_so_far()).collect();
    let found: Arc<Mutex<Vec<(u64, Violation)>>> = Arc::default();
    let seen = Arc::clone(&found);
    let judges = so_far.clone();
    let cuts = EarlyAnswer::every(CUT_EVERY_MS, move |record| {
        let violations = judges.iter().flat_map(|o| o.check(record));
        seen.lock().unwrap().extend(violations.map(|v| (record.end_ms, v)));
        false
    });
    let plan = scenario.world_for(Seed(seed), build);
    let keep = judges_interest(scenario, &scenario.twins_for(Seed(seed), build));
    let cut_run = run_world_answering(plan, TraceMode::HashOnly, keep, Some(cuts));
    let (cut_run, whole) =
        (cut_run.expect("the run completes"), run_build(scenario, build, Seed(seed), TraceMode::HashOnly));
    let (whole, _) = whole.expect("the run completes");
    assert_eq!(cut_run.trace.hash(), whole.trace_hash, "looking at a run mid-way changed it");
    let known: Vec<_> = whole.violations.iter().map(identity).collect();
    for (cut_ms, v) in found.lock().unwrap().iter() {
        assert!(
            known.contains(&identity(v)),
            "{} / {} / seed {seed}: {} found {v:?} on the record cut at {cut_ms} ms, not on the whole run\nreplay: {}",
            scenario.name(),
            build.variant,
            v.oracle,
            whole.replay_line()
        );
    }
}

/// Runs `seed` of `build` in `scenario` whole and to its answer; panics unless both fail the same kill
/// rows and the early verdict's violations are the whole run's.
fn the_answer_is_the_whole_runs(scenario: &dyn Scenario, build: Build, seed: u64) {
    let rows = must_fail(scenario, build).expect("a cell that stops early");
    let whole = run_build(scenario, build, Seed(seed), TraceMode::HashOnly).expect("runs").0;
    let early = run_build_to_answer(scenario, build, Seed(seed), TraceMode::HashOnly).expect("runs").0;
    let label = format!("{} / {} / seed {seed}", scenario.name(), build.variant);
    let fired = |v: &arc_scenarios::verdict::Verdict| {
        rows.iter().filter(|o| v.violations.iter().any(|x| x.oracle == o.name())).count()
    };
    assert_eq!(
        fired(&early),
        fired(&whole),
        "{label}: the rows fired differ\nreplay: {}",
        whole.replay_line()
    );
    assert_eq!(early.passed(), whole.passed(), "{label}");
    // A run stops only once answered (it may end first, when its last rows fire after its last check).
    if early.answered_at_ms.is_some() {
        assert_eq!(fired(&early), rows.len(), "{label}: stopped before every row fired");
    }
    let known: Vec<_> = whole.violations.iter().map(identity).collect();
    for v in &early.violations {
        assert!(known.contains(&identity(v)), "{label}: {v:?} is not the whole run's");
    }
}

/// The worlds whose stoppable cells the fast tier checks: the two race worlds with the most rows that
/// stop early, cheap to run whole (the slow tier checks every cell).
const FAST_WORLDS: [&str; 2] = ["watch-lag-duplicate-create", "assign-during-delete"];

/// Each cell of [`FAST_WORLDS`] that can stop early, on its first seed: the early verdict fails the
/// same rows.
#[test]
fn a_run_stopped_at_its_answer_fails_the_rows_the_whole_run_fails() {
    let cells = stoppable_cells();
    assert!(cells.len() >= 10, "most kill cells stop early: {}", cells.len());
    for (build, scenario) in cells.into_iter().filter(|(_, s)| FAST_WORLDS.contains(&s.name())) {
        the_answer_is_the_whole_runs(scenario, build, 1);
    }
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`).
mod slow {
    use super::*;

    /// Each cell that can stop early, on its first seed: what its mid-run records show, the whole
    /// run shows (the property every early stop rests on, for every oracle that claims it).
    #[test]
    #[ignore = "slow tier: every so-far oracle on a cut every 10 s of each cell's run"]
    fn every_so_far_oracle_finds_on_a_cut_only_what_the_whole_run_finds() {
        for (build, scenario) in stoppable_cells() {
            cuts_find_only_what_the_whole_run_finds(scenario, build, 1);
        }
    }

    /// The early verdict over six seeds of every stoppable cell.
    #[test]
    #[ignore = "slow tier: six seeds of each cell, whole and to the answer"]
    fn early_answers_fail_the_same_rows_over_six_seeds_of_every_cell() {
        for (build, scenario) in stoppable_cells() {
            for seed in 1..=6 {
                the_answer_is_the_whole_runs(scenario, build, seed);
            }
        }
    }
}
