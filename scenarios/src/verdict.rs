//! Verdicts: everything a sweep reports about one seed (what the oracles found wrong in it is a
//! [`Violation`], from the judges' crate).

use std::collections::BTreeMap;

use arc_controller::Profile;
use arc_sim::Seed;
use serde::Serialize;

use crate::variant::{Build, Variant};

pub use arc_judging::violation::Violation;

/// The outcome of one (scenario, variant, seed) run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Scenario name.
    pub scenario: &'static str,
    /// Profile.
    pub profile: Profile,
    /// Variant (of the profile).
    pub variant: Variant,
    /// Seed.
    pub seed: Seed,
    /// What the oracles found.
    pub violations: Vec<Violation>,
    /// Coverage probes that fired, with their counts.
    pub probes: BTreeMap<&'static str, u32>,
    /// Headline counters (jobs, runners, reconciles, API calls).
    pub counters: BTreeMap<String, i64>,
    /// FNV-1a of the trace.
    pub trace_hash: u64,
    /// FNV-1a of each twin run's trace, by twin name.
    pub twin_hashes: BTreeMap<&'static str, u64>,
    /// Trace lines.
    pub trace_lines: u64,
    /// Simulated time the run took.
    pub sim_ms: u64,
    /// When the run stopped early, having answered what a sweep asks of it (every oracle its bug
    /// variant must fail had fired; the runner's early answer): end-of-run oracles were
    /// not asked. `None`: it ran to its end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_at_ms: Option<u64>,
    /// Wall time the run took.
    pub wall_ms: u64,
}

impl Verdict {
    /// The verdict without its wall time: what two runs of the same seed must agree on exactly.
    pub fn without_wall_time(&self) -> Verdict {
        Verdict { wall_ms: 0, ..self.clone() }
    }

    /// Whether no oracle found anything.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }

    /// The build that ran.
    pub fn build(&self) -> Build {
        Build::new(self.profile, self.variant)
    }

    /// `scenario / variant / seed N` (the profile too when it is not the default): what a failing test
    /// names.
    pub fn label(&self) -> String {
        let profile = match self.profile {
            Profile::Arcsim => String::new(),
            other => format!("{other} / "),
        };
        format!("{} / {profile}{} / seed {}", self.scenario, self.variant, self.seed)
    }

    /// The one command that replays this run.
    pub fn replay_line(&self) -> String {
        replay_line(self.scenario, self.build(), self.seed)
    }
}

/// How replay commands start: `cargo run --release -p arcsim --` when cargo ran
/// this process (it sets `CARGO`), otherwise the program as it was invoked (`./arcsim`,
/// `target/release/arcsim`), so a line can be pasted where it was printed.
pub fn replay_program() -> String {
    const UNDER_CARGO: &str = "cargo run --release -p arcsim --";
    if std::env::var_os("CARGO").is_some() {
        return UNDER_CARGO.to_string();
    }
    std::env::args()
        .next()
        .filter(|program| !program.contains(' '))
        .unwrap_or_else(|| UNDER_CARGO.to_string())
}

/// The command that replays (scenario, build, seed); the default profile is not named.
pub fn replay_line(scenario: &str, build: Build, seed: Seed) -> String {
    let profile = match build.profile {
        Profile::Arcsim => String::new(),
        other => format!(" --profile {other}"),
    };
    let variant = build.variant;
    format!("{} run --scenario {scenario}{profile} --variant {variant} --seed {seed}", replay_program())
}
