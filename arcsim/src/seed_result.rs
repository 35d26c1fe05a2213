//! One seed of a sweep as the sweep keeps it: what its cell's tally reads (the oracles that failed it,
//! the probes that fired, simulated and wall time, whether a second run agreed) or why it could not
//! run. A sweep's JSON lists these per cell, so `arcsim merge` can tally shards' seeds as one sweep
//! would have. The violations themselves are kept only for a cell's first failure (they run to
//! hundreds of kilobytes a seed for some bugs), in the cell's `first_failure`.

use arc_sim::Seed;
use serde::{Deserialize, Serialize};

use arc_scenarios::names::{OracleNames, ProbeNames};
use arc_scenarios::verdict::{Verdict, Violation};

/// One seed's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedResult {
    /// The seed.
    pub seed: Seed,
    /// Its position among its cell's seeds (1-based).
    pub nth: u32,
    /// What became of it.
    #[serde(flatten)]
    pub outcome: SeedOutcome,
}

/// A run and what the judges found, or why there was no run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SeedOutcome {
    /// The seed ran.
    Ran {
        /// The oracles that found a violation, each once, by name.
        #[serde(default, skip_serializing_if = "is_empty")]
        oracles: OracleNames,
        /// The probes that fired.
        probes: ProbeNames,
        /// Simulated ms.
        sim_ms: u64,
        /// Wall ms.
        wall_ms: u64,
        /// Whether a second run gave the same trace (always true without `--check-determinism`).
        #[serde(default = "yes", skip_serializing_if = "is_yes")]
        deterministic: bool,
    },
    /// The seed could not be run.
    Failed {
        /// Why.
        error: String,
    },
}

impl SeedResult {
    /// The result of a run of the seed at `position` (0-based) of its cell.
    pub fn ran(position: usize, verdict: &Verdict, deterministic: bool) -> SeedResult {
        SeedResult {
            seed: verdict.seed,
            nth: nth(position),
            outcome: SeedOutcome::Ran {
                oracles: OracleNames(oracles(&verdict.violations)),
                probes: ProbeNames(verdict.probes.keys().copied().collect()),
                sim_ms: verdict.sim_ms,
                wall_ms: verdict.wall_ms,
                deterministic,
            },
        }
    }

    /// The seed at `position` of its cell, which could not run.
    pub fn not_run(position: usize, seed: Seed, error: String) -> SeedResult {
        SeedResult { seed, nth: nth(position), outcome: SeedOutcome::Failed { error } }
    }

    /// The oracles that found a violation (none when the seed could not run).
    pub fn oracles(&self) -> &[&'static str] {
        match &self.outcome {
            SeedOutcome::Ran { oracles, .. } => &oracles.0,
            SeedOutcome::Failed { .. } => &[],
        }
    }

    /// Whether some oracle found a violation.
    pub fn is_failure(&self) -> bool {
        !self.oracles().is_empty()
    }
}

/// The names of the oracles of `violations`, each once, sorted.
fn oracles(violations: &[Violation]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = violations.iter().map(|v| v.oracle).collect();
    names.sort_unstable();
    names.dedup();
    names
}

fn is_empty(names: &OracleNames) -> bool {
    names.0.is_empty()
}

fn yes() -> bool {
    true
}

fn is_yes(value: &bool) -> bool {
    *value
}

/// The 1-based position of the 0-based `position`.
fn nth(position: usize) -> u32 {
    u32::try_from(position + 1).unwrap_or(u32::MAX)
}
