//! `arcsim sweep --until-probes K`: a fixed-controller cell stops once every probe its scenario
//! declares a floor for has fired in at least K of its seeds, and reports how many seeds that took.
//!
//! The stop is read off the longest unbroken run of results from the cell's first seed, so worker
//! threads that finish out of order cannot move it: the cut is the first position by which every such
//! probe has fired K times. A seed after the cut is skipped, or, if it was already running, left out of
//! the tally, as a killed bug cell's extra seeds are. A scenario without floors (a control world) never
//! stops early.

use std::collections::BTreeMap;

use crate::seed_result::{SeedOutcome, SeedResult};
use arc_judging::probes::ProbeBound;
use arc_scenarios::scenario::Scenario;

/// The probes of `scenario` that `--until-probes` waits for: those with a floor.
pub fn awaited(scenario: &dyn Scenario) -> Vec<&'static str> {
    let goals = scenario.probe_goals().iter();
    goals.filter(|g| matches!(g.bound, ProbeBound::AtLeast(_))).map(|g| g.probe.name).collect()
}

/// The position (0-based) by which every probe of `awaited` has fired in at least `k` seeds, reading
/// `results` from position 0 up to the first gap; `None` if that has not happened (or `awaited` is
/// empty).
pub fn reached_at(results: &BTreeMap<usize, SeedResult>, awaited: &[&str], k: u32) -> Option<usize> {
    if awaited.is_empty() {
        return None;
    }
    let mut fired: BTreeMap<&str, u32> = awaited.iter().map(|p| (*p, 0)).collect();
    for (expected, (position, result)) in results.iter().enumerate() {
        if *position != expected {
            return None;
        }
        if let SeedOutcome::Ran { probes, .. } = &result.outcome {
            for probe in &probes.0 {
                if let Some(n) = fired.get_mut(probe) {
                    *n += 1;
                }
            }
        }
        if fired.values().all(|n| *n >= k) {
            return Some(*position);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use arc_sim::Seed;

    use super::*;
    use arc_scenarios::names::{OracleNames, ProbeNames};

    fn seed(position: usize, probes: &[&'static str]) -> (usize, SeedResult) {
        let outcome = SeedOutcome::Ran {
            oracles: OracleNames(Vec::new()),
            probes: ProbeNames(probes.to_vec()),
            sim_ms: 0,
            wall_ms: 0,
            deterministic: true,
        };
        (position, SeedResult { seed: Seed(position as u64 + 1), nth: position as u32 + 1, outcome })
    }

    #[test]
    fn the_cut_is_where_the_last_awaited_probe_reaches_k() {
        let results: BTreeMap<_, _> =
            [seed(0, &["a"]), seed(1, &["a", "b"]), seed(2, &["c"]), seed(3, &["b"])].into_iter().collect();
        assert_eq!(reached_at(&results, &["a", "b"], 1), Some(1));
        assert_eq!(reached_at(&results, &["a", "b"], 2), Some(3), "b fires its second time at position 3");
        assert_eq!(reached_at(&results, &["a", "c"], 2), None, "c fired once");
        assert_eq!(reached_at(&results, &["b"], 2), Some(3));
        assert_eq!(reached_at(&results, &[], 1), None, "nothing awaited: never stops");
    }

    #[test]
    fn a_gap_in_the_results_stops_the_reading() {
        let results: BTreeMap<_, _> = [seed(0, &["a"]), seed(2, &["a"])].into_iter().collect();
        assert_eq!(reached_at(&results, &["a"], 2), None, "position 1 has not reported yet");
        assert_eq!(reached_at(&results, &["a"], 1), Some(0));
    }
}
