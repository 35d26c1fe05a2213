//! The fake's timing model: how long each call takes before and after its state change commits, and
//! how long an assigned job takes to be announced (JobStarted) and picked up by its runner process.
//!
//! Every delay is a [`DelayRange`], drawn as `min_ms + (max_ms − min_ms)·u⁴` for `u` uniform in
//! `[0, 1)`: a right-skewed, lognormal-like shape where most draws sit near the minimum and a few
//! reach the maximum (median at `min + span/16`, mean `min + span/5`, 90th percentile `min + 0.66·span`,
//! 99th `min + 0.96·span`). Only multiplication is involved, so draws are bit-identical everywhere.
//!
//! Calls fall into five latency classes ([`LatencyClass`]); each class has a delay before the commit
//! (the request reaching the service and being processed) and one after (the answer travelling back),
//! so the state has changed for a while before the client learns of it. Simplification: one shape
//! for every class, no dependence on load, payload size or time of day.

use std::time::Duration;

use rand::Rng as _;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::operation::Operation;

/// A seeded delay in `[min_ms, max_ms]`, skewed towards `min_ms` (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelayRange {
    /// Shortest delay, in simulated ms.
    pub min_ms: u64,
    /// Longest delay.
    pub max_ms: u64,
}

impl DelayRange {
    /// No delay at all.
    pub const ZERO: DelayRange = DelayRange { min_ms: 0, max_ms: 0 };

    /// A range from `min_ms` to `max_ms`.
    pub const fn between(min_ms: u64, max_ms: u64) -> DelayRange {
        DelayRange { min_ms, max_ms }
    }

    /// Exactly `ms`.
    pub const fn fixed(ms: u64) -> DelayRange {
        DelayRange { min_ms: ms, max_ms: ms }
    }

    /// Draws a delay. A range of one value draws nothing from `rng`.
    pub fn draw(self, rng: &mut ChaCha8Rng) -> Duration {
        if self.max_ms <= self.min_ms {
            return Duration::from_millis(self.min_ms);
        }
        let u: f64 = rng.random();
        let span = (self.max_ms - self.min_ms) as f64;
        Duration::from_millis(self.min_ms + (span * u * u * u * u) as u64)
    }

    /// This range with both ends multiplied by `percent`/100 (a slower or faster service).
    pub fn scaled(self, percent: u64) -> DelayRange {
        DelayRange { min_ms: self.min_ms * percent / 100, max_ms: self.max_ms * percent / 100 }
    }
}

/// How long one class of calls takes on either side of its commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallLatency {
    /// From the request leaving the client to its state change committing (for GetMessage: to the
    /// long poll starting).
    pub before_commit: DelayRange,
    /// From the commit to the answer reaching the client.
    pub after_commit: DelayRange,
}

impl CallLatency {
    /// A call that takes no time.
    pub const ZERO: CallLatency =
        CallLatency { before_commit: DelayRange::ZERO, after_commit: DelayRange::ZERO };

    const fn of(before: (u64, u64), after: (u64, u64)) -> CallLatency {
        CallLatency {
            before_commit: DelayRange::between(before.0, before.1),
            after_commit: DelayRange::between(after.0, after.1),
        }
    }

    /// Draws `(before_commit, after_commit)`.
    pub fn draw(self, rng: &mut ChaCha8Rng) -> (Duration, Duration) {
        (self.before_commit.draw(rng), self.after_commit.draw(rng))
    }

    fn scaled(self, percent: u64) -> CallLatency {
        CallLatency {
            before_commit: self.before_commit.scaled(percent),
            after_commit: self.after_commit.scaled(percent),
        }
    }
}

/// Which latency a call has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyClass {
    /// Tokens, runner groups and runner reads (REST and Actions service).
    Admin,
    /// Scale-set CRUD.
    ScaleSets,
    /// GenerateJitConfig.
    JitConfig,
    /// RemoveRunner and the legacy REST delete.
    RemoveRunner,
    /// Sessions, the message queue and AcquireJobs.
    Sessions,
}

impl LatencyClass {
    /// The class of `operation`.
    pub fn of(operation: Operation) -> LatencyClass {
        match operation {
            Operation::AdminToken
            | Operation::InstallationToken
            | Operation::RegistrationToken
            | Operation::GetRunnerGroup
            | Operation::GetRunner
            | Operation::GetRunnerByName
            | Operation::ListRunners => LatencyClass::Admin,
            Operation::GetScaleSet
            | Operation::CreateScaleSet
            | Operation::UpdateScaleSet
            | Operation::DeleteScaleSet => LatencyClass::ScaleSets,
            Operation::GenerateJitConfig | Operation::RegisterRunner => LatencyClass::JitConfig,
            Operation::RemoveRunner | Operation::DeleteRunner => LatencyClass::RemoveRunner,
            Operation::CreateSession
            | Operation::CreateRunnerSession
            | Operation::RefreshSession
            | Operation::DeleteSession
            | Operation::GetMessage
            | Operation::DeleteMessage
            | Operation::AcquireJobs
            | Operation::GetAcquirableJobs => LatencyClass::Sessions,
        }
    }
}

/// The service's base latency per class. The defaults are assumptions in the range GitHub's APIs are
/// commonly observed to answer in (tens to a few hundred ms; writes slower than reads); medians
/// `before + after`: admin ≈ 50 ms, scale sets ≈ 65 ms, JIT ≈ 90 ms, RemoveRunner ≈ 80 ms, sessions
/// and messages ≈ 30 ms, with tails up to 400–800 ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServiceLatency {
    /// Tokens, runner groups, runner reads. Default before 20–250 ms, after 10–150 ms.
    pub admin: CallLatency,
    /// Scale-set CRUD. Default before 30–400 ms, after 10–150 ms.
    pub scale_sets: CallLatency,
    /// GenerateJitConfig. Default before 40–600 ms, after 10–200 ms.
    pub jit_config: CallLatency,
    /// RemoveRunner and the REST delete. Default before 30–500 ms, after 10–200 ms.
    pub remove_runner: CallLatency,
    /// Sessions, GetMessage (around the long poll), DeleteMessage, AcquireJobs. Default before
    /// 10–200 ms, after 5–100 ms.
    pub sessions: CallLatency,
}

impl Default for ServiceLatency {
    fn default() -> Self {
        ServiceLatency {
            admin: CallLatency::of((20, 250), (10, 150)),
            scale_sets: CallLatency::of((30, 400), (10, 150)),
            jit_config: CallLatency::of((40, 600), (10, 200)),
            remove_runner: CallLatency::of((30, 500), (10, 200)),
            sessions: CallLatency::of((10, 200), (5, 100)),
        }
    }
}

impl ServiceLatency {
    /// Every call answered in zero simulated time.
    pub const ZERO: ServiceLatency = ServiceLatency {
        admin: CallLatency::ZERO,
        scale_sets: CallLatency::ZERO,
        jit_config: CallLatency::ZERO,
        remove_runner: CallLatency::ZERO,
        sessions: CallLatency::ZERO,
    };

    /// The latency of `class`.
    pub fn of(&self, class: LatencyClass) -> CallLatency {
        match class {
            LatencyClass::Admin => self.admin,
            LatencyClass::ScaleSets => self.scale_sets,
            LatencyClass::JitConfig => self.jit_config,
            LatencyClass::RemoveRunner => self.remove_runner,
            LatencyClass::Sessions => self.sessions,
        }
    }

    /// Every range multiplied by `percent`/100.
    #[must_use]
    pub fn scaled(self, percent: u64) -> ServiceLatency {
        ServiceLatency {
            admin: self.admin.scaled(percent),
            scale_sets: self.scale_sets.scaled(percent),
            jit_config: self.jit_config.scaled(percent),
            remove_runner: self.remove_runner.scaled(percent),
            sessions: self.sessions.scaled(percent),
        }
    }

    /// Every range with its field name, for validation messages.
    pub fn ranges(&self) -> Vec<(String, DelayRange)> {
        let classes = [
            ("admin", self.admin),
            ("scale_sets", self.scale_sets),
            ("jit_config", self.jit_config),
            ("remove_runner", self.remove_runner),
            ("sessions", self.sessions),
        ];
        classes
            .into_iter()
            .flat_map(|(name, call)| {
                [
                    (format!("latency.{name}.before_commit"), call.before_commit),
                    (format!("latency.{name}.after_commit"), call.after_commit),
                ]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::Seed;

    #[test]
    fn draws_stay_in_range_and_lean_towards_the_minimum() {
        let mut rng = Seed(3).named_rng("test");
        let range = DelayRange::between(100, 1_100);
        let mut draws: Vec<u64> = (0..2_000).map(|_| range.draw(&mut rng).as_millis() as u64).collect();
        draws.sort_unstable();
        assert!(draws.iter().all(|ms| (100..=1_100).contains(ms)));
        let median = draws[1_000];
        assert!((130..=200).contains(&median), "median {median} near min + span/16");
        assert!(draws[1_990] > 900, "a tail reaches towards the maximum");
    }

    #[test]
    fn a_fixed_range_draws_nothing_from_the_stream() {
        let mut rng = Seed(3).named_rng("test");
        let mut untouched = Seed(3).named_rng("test");
        assert_eq!(DelayRange::fixed(40).draw(&mut rng), Duration::from_millis(40));
        assert_eq!(rng.random::<u64>(), untouched.random::<u64>());
    }

    #[test]
    fn every_operation_has_a_class_and_scaling_scales_both_sides() {
        assert_eq!(LatencyClass::of(Operation::GenerateJitConfig), LatencyClass::JitConfig);
        assert_eq!(LatencyClass::of(Operation::DeleteRunner), LatencyClass::RemoveRunner);
        assert_eq!(LatencyClass::of(Operation::AcquireJobs), LatencyClass::Sessions);
        let slow = ServiceLatency::default().scaled(200);
        assert_eq!(slow.jit_config.before_commit, DelayRange::between(80, 1_200));
        assert_eq!(ServiceLatency::default().ranges().len(), 10);
    }
}
