//! Seeing a failure (issue 18): the story `arcsim run` prints, the timeline page, the Mermaid diagram
//! and `arcsim serve`, on the run the issue names (assign-during-delete with the stale removal
//! snapshot, seed 4: the issue named 3; this test used seeds 12 and 5 while it passed as the fakes'
//! timing moved) and on short worlds.
//!
//! [`failing_run`] runs that world once per test binary, keeping its whole record. [`browser`] holds
//! the headless-Chromium check of the page, ignored by default (CI has no browser; see
//! `scripts/see-a-failure.sh`).

mod browser;
mod closed_stdout;
mod exit_status;
mod html;
mod measured_rates;
mod mermaid;
mod refusals;
mod serve;
mod story;

use std::sync::OnceLock;

use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_scenarios::verdict::Verdict;
use arc_sim::record::Interest;
use arc_sim::{Seed, TraceMode};
use arc_world::RunRecord;
use arcsim::runner::run_one_keeping;

/// The scenario and variant the issue names.
pub(crate) const SCENARIO: &str = "assign-during-delete";
/// The variant.
pub(crate) const VARIANT: Variant = Variant::BugStaleRemovalSnapshot;
/// A seed the bug fails (the issue named 3, and 12 stood in until it passed too; 4 since the clients
/// are limited as ARC's are); if the world changes so that it passes, the first failing seed of 1-40
/// stands in (at the cost of a run per seed tried).
pub(crate) const SEED: u64 = 4;

/// The failing run, its verdict and its whole record, computed once.
pub(crate) fn failing_run() -> &'static (Verdict, RunRecord) {
    static RUN: OnceLock<(Verdict, RunRecord)> = OnceLock::new();
    RUN.get_or_init(|| {
        let scenario = scenarios::find(SCENARIO).expect("a known scenario");
        let run = |seed| {
            run_one_keeping(scenario, VARIANT, Seed(seed), TraceMode::Full, Some(Interest::everything()))
                .expect("the run completes")
        };
        let first = run(SEED);
        if !first.0.passed() {
            return first;
        }
        (1..=40).map(run).find(|(v, _)| !v.passed()).expect("the bug fails a seed within its bound")
    })
}
