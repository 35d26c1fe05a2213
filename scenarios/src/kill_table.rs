//! The kill table: which oracle must catch each historic bug, in which scenario, within how many seeds.
//! A bug variant that survives its bound fails the sweep, as does the fixed controller failing any seed.
//!
//! A row holds the kill rate measured by `arcsim measure kills` on seeds no test uses; its bound is
//! derived from that rate ([`Rate::kill_bound`]), never chosen. A (variant, scenario) cell may have a
//! row per oracle expected to fire; each row must be met on its own.
//!
//! Rows name their scenario and oracle by value (the scenario and oracle types themselves), so a row
//! cannot name a scenario or oracle that does not exist.

use arc_controller::Profile;
use arc_sim::github::Assumed;
use arc_sim::github::assumptions;
use arc_sim::net::Network;
use serde::ser::SerializeStruct;

use crate::kill_rates::{RATES_FILE, REPORT_RATES_FILE, RateKey, measured_rates, report_rates};
use crate::scenario::Scenario;
use crate::scenarios::assign_during_delete::AssignDuringDelete;
use crate::scenarios::equivalence::OptimisationEquivalence;
use crate::scenarios::field_reports::{
    REPORT_4000, REPORT_4027, REPORT_4285, REPORT_4307, REPORT_4603, REPORT_4653,
};
use crate::scenarios::kubectl_delete::KubectlDeleteRunners;
use crate::scenarios::leader_election::LeaderElectionFailover;
use crate::scenarios::legacy_standard::LegacyStandard;
use crate::scenarios::legacy_steady_state::LegacySteadyState;
use crate::scenarios::network_partition::NetworkPartition;
use crate::scenarios::paused_leader::PausedLeader;
use crate::scenarios::standard::Standard;
use crate::scenarios::steady_state::SteadyState;
use crate::scenarios::token_refresh::TokenRefreshRecreation;
use crate::scenarios::watch_lag::WatchLagDuplicateCreate;
use crate::variant::Variant;
use arc_judging::oracles::{
    Oracle, TwinOracle, convergence, deletion, equivalence, gate, jobs, leadership, phases, pods,
    registrations, removals, symptoms, tokens,
};
use arc_judging::rates::Rate;

/// The judge a row expects: an oracle of single runs, or one that compares a run with its twin.
#[derive(Clone, Copy)]
pub enum Judge {
    /// Judges one run.
    Run(&'static dyn Oracle),
    /// Compares a run with its twin.
    Twin(&'static dyn TwinOracle),
}

impl Judge {
    /// The judge's name, as its violations carry it.
    pub fn name(self) -> &'static str {
        match self {
            Judge::Run(oracle) => oracle.name(),
            Judge::Twin(oracle) => oracle.name(),
        }
    }
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One row: `variant` must fail `oracle` in `scenario`, on `network`, within its first
/// [`Self::within_seeds`] seeds.
#[derive(Clone, Copy)]
pub struct KillExpectation {
    /// The bug variant.
    pub variant: Variant,
    /// The scenario that exposes it.
    pub scenario: &'static dyn Scenario,
    /// The oracle that must report it.
    pub oracle: Judge,
    /// The alternatives about GitHub it kills under only, `(assumption, alternative)`: measured to
    /// survive where one of them is moved (`arcsim sweep --assumptions each`). Empty: it kills under
    /// every alternative measured.
    pub needs: &'static [(&'static str, &'static str)],
    /// The network its runs use: in process ([`KILL_TABLE`]), or turmoil's simulated TCP
    /// ([`TURMOIL_ROWS`], a sweep with `--network turmoil`), each with its own measured rate.
    pub network: Network,
}

impl KillExpectation {
    /// Seeds in which `oracle` reported it, as measured ([`RATES_FILE`]; every row has a line there,
    /// tested).
    pub fn rate(&self) -> Rate {
        measured_rates().get(&self.key()).copied().unwrap_or_else(|| {
            panic!(
                "{RATES_FILE} has no line for {}: measure it with `arcsim measure kills --write`",
                self.key()
            )
        })
    }

    /// The row's key in [`RATES_FILE`]: a row on turmoil is keyed by `SCENARIO@turmoil`.
    pub fn key(&self) -> RateKey {
        RateKey::of(&self.scenario_key(), self.variant.name(), self.oracle.name())
    }

    /// The scenario's name, with `@turmoil` for a row on the turmoil network.
    pub fn scenario_key(&self) -> String {
        match self.network {
            Network::InProcess => self.scenario.name().to_string(),
            other => format!("{}@{other}", self.scenario.name()),
        }
    }

    /// The bound, in seeds of a sweep: derived from the measured rate.
    pub fn within_seeds(&self) -> u32 {
        self.rate().kill_bound().unwrap_or(u32::MAX)
    }

    /// This row, killing only under `needs`.
    const fn needing(self, needs: &'static [(&'static str, &'static str)]) -> Self {
        KillExpectation { needs, ..self }
    }

    /// This row, on the turmoil network.
    const fn on_turmoil(self) -> Self {
        KillExpectation { network: Network::Turmoil, ..self }
    }

    /// Whether the row is judged in runs under `assumed`: every alternative it needs is in force.
    /// `None` (alternatives drawn per seed): only a row that needs none is.
    pub fn holds_under(&self, assumed: Option<&Assumed>) -> bool {
        match assumed {
            None => self.needs.is_empty(),
            Some(assumed) => self.needs.iter().all(|(name, alternative)| {
                assumptions::find(name).is_some_and(|a| assumed.of(a).name == *alternative)
            }),
        }
    }

    /// The alternatives it needs, `NAME=ALT, …` (empty when none).
    pub fn needs_text(&self) -> String {
        self.needs.iter().map(|(name, alt)| format!("{name}={alt}")).collect::<Vec<_>>().join(", ")
    }
}

impl std::fmt::Debug for KillExpectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KillExpectation")
            .field("variant", &self.variant)
            .field("scenario", &self.scenario.name())
            .field("oracle", &self.oracle)
            .field("rate", &self.rate())
            .field("needs", &self.needs)
            .field("network", &self.network)
            .finish()
    }
}

impl serde::Serialize for KillExpectation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut row = serializer.serialize_struct("KillExpectation", 8)?;
        row.serialize_field("variant", &self.variant)?;
        row.serialize_field("scenario", self.scenario.name())?;
        row.serialize_field("oracle", self.oracle.name())?;
        row.serialize_field("rate", &self.rate())?;
        row.serialize_field("within_seeds", &self.within_seeds())?;
        row.serialize_field("median_seeds_to_kill", &self.rate().median_seeds_to_kill())?;
        row.serialize_field("needs", &self.needs_text())?;
        row.serialize_field("network", &self.network)?;
        row.end()
    }
}

/// A row judged by `oracle`; its rate is in [`RATES_FILE`].
const fn expect(
    variant: Variant,
    scenario: &'static dyn Scenario,
    oracle: &'static dyn Oracle,
) -> KillExpectation {
    KillExpectation { variant, scenario, oracle: Judge::Run(oracle), needs: &[], network: Network::InProcess }
}

/// Every row, with its measured rate. `bug-4647-jobid` has none: in this model a JobID-only runner
/// update is always followed by the listener's runner-set patch (a started job marks the scaler dirty),
/// which wakes the ERS anyway, so dropping the update changes no decision; the equivalence scenario
/// runs it to show that. `bug-unlisted-runner-gone` has none either: it killed no seed of the 50
/// measured (it needs rarer schedules), so no bound can be promised; it is pinned to a seed that
/// kills it in its scenario's tests. `bug-stale-deregistration` killed none in assign-during-delete
/// either, but is killed at a measured rate where an operator deletes runners by hand, as is
/// `bug-4580-short-circuit`, which needs a runner deleted without RemoveRunner in the pass that
/// registers it: in every other world each deleter calls RemoveRunner first.
pub const KILL_TABLE: &[KillExpectation] = &[
    expect(Variant::Bug4201, &WatchLagDuplicateCreate, &pods::NoAlreadyExistsErrors),
    expect(Variant::Bug4201, &WatchLagDuplicateCreate, &pods::BoundedPodCreates),
    expect(Variant::BugSecretsCached, &WatchLagDuplicateCreate, &registrations::JitConfigOncePerRunner),
    expect(Variant::BugSecretsCached, &WatchLagDuplicateCreate, &registrations::NoOrphanRegistration),
    expect(Variant::BugSecretsCached, &WatchLagDuplicateCreate, &convergence::ConvergesAfterHeal),
    expect(Variant::Bug4580Finalizer, &WatchLagDuplicateCreate, &deletion::FinalizersInOneWrite),
    expect(Variant::Bug1087, &TokenRefreshRecreation, &tokens::NoExpiredTokenRegistration),
    // #1125's window is the stale runner list: an uncached one closes it (`--assumptions each`).
    expect(Variant::Bug1125, &TokenRefreshRecreation, &jobs::NoJobLostToControllerKill)
        .needing(&[("legacy-runner-list", "cached-60s")]),
    expect(Variant::BugScaleDownNoRemove, &AssignDuringDelete, &deletion::NoBusyRunnerDeleted),
    expect(Variant::Bug3371, &AssignDuringDelete, &gate::ScaleDownOnlyOnPatchZero),
    expect(Variant::BugRunningOverwritesTerminal, &AssignDuringDelete, &deletion::NoRunningWhileDeleting),
    // The stale removal deletes a busy runner only where RemoveRunner(0) answers 204 (finding 01).
    expect(Variant::BugStaleRemovalSnapshot, &AssignDuringDelete, &deletion::NoBusyRunnerDeleted)
        .needing(&[("unregistered-runner-removal", "no-content")]),
    expect(Variant::BugRunningFromPod, &AssignDuringDelete, &phases::RunningOnlyAfterJobStarted),
    // A user deleting runners by hand while the runner set re-creates them.
    expect(
        Variant::Bug4580ShortCircuit,
        &KubectlDeleteRunners,
        &registrations::RegistrationRemovedBeforeRunnerGone,
    ),
    expect(Variant::Bug4580ShortCircuit, &KubectlDeleteRunners, &registrations::NoOrphanRegistration),
    expect(Variant::Bug4580ShortCircuit, &KubectlDeleteRunners, &convergence::ConvergesAfterHeal),
    expect(
        Variant::BugStaleDeregistration,
        &KubectlDeleteRunners,
        &registrations::RegistrationRemovedBeforeRunnerGone,
    ),
    expect(Variant::BugStaleDeregistration, &KubectlDeleteRunners, &registrations::NoOrphanRegistration),
    expect(Variant::Bug2255NoRemoveOnDelete, &KubectlDeleteRunners, &convergence::NoJobLost),
    expect(
        Variant::Bug2255NoRemoveOnDelete,
        &KubectlDeleteRunners,
        &registrations::RegistrationRemovedBeforeRunnerGone,
    ),
    // The natural world: the steady-state swarm (watch lags drawn from ranges that include 0, nothing
    // tuned to a race), each row measured on 400 seeds from 16,000,000 since the swarm draws full watch
    // buffers, a watch-cache window and stalled watches (issue 42; 2026-12-05).
    expect(Variant::Bug4201, &SteadyState, &pods::NoAlreadyExistsErrors),
    expect(Variant::Bug4201, &SteadyState, &pods::BoundedPodCreates),
    expect(Variant::BugSecretsCached, &SteadyState, &registrations::NoOrphanRegistration),
    expect(Variant::BugSecretsCached, &SteadyState, &convergence::ConvergesAfterHeal),
    expect(Variant::Bug4580Finalizer, &SteadyState, &deletion::FinalizersInOneWrite),
    expect(Variant::BugScaleDownNoRemove, &SteadyState, &deletion::NoBusyRunnerDeleted),
    expect(Variant::Bug3371, &SteadyState, &gate::ScaleDownOnlyOnPatchZero),
    // Rare there (the listener's Running write must meet a runner whose deletion began):
    // swept by `scripts/kill-rows.sh`, not `cargo test`.
    expect(Variant::BugRunningOverwritesTerminal, &SteadyState, &deletion::NoRunningWhileDeleting),
    // The legacy bugs' natural world: the standard workload on legacy runners, tokens expiring hourly
    // as GitHub's do, no faults or crashes (1,000 seeds). `bug-1087` needs a container that restarts
    // after its token expired, and nothing restarts one there (0 of 300).
    expect(Variant::Bug1125, &LegacyStandard, &jobs::NoJobLostToControllerKill),
    // The same with production's disruptions at the swarm's counts (controller restarts, runner
    // containers OOM-killed), 1,000 seeds each. `bug-1087` is rare there: a runner must sit idle past
    // its token's expiry (when the fixed controller recreates its pod), take a job and crash while busy,
    // so its container restarts in place with the old token; swept by `scripts/kill-rows.sh`.
    expect(Variant::Bug1125, &LegacySteadyState, &jobs::NoJobLostToControllerKill),
    expect(Variant::Bug1087, &LegacySteadyState, &tokens::NoExpiredTokenRegistration),
    // The zombie listener needs a long poll that gets no answer: only the turmoil network's faults
    // make one (about 20 CPU-seconds a seed in release).
    expect(Variant::BugZombieListener, &NetworkPartition, &convergence::ConvergesAfterHeal),
    // The plausible bugs (not in ARC) that kill two of the oracles no historic bug fails, each in the least
    // amplified world that shows it: a pod its runner does not control needs no race (standard, 1,000
    // seeds); a create whose answer is lost after it committed needs the swarm's commit-then-fail faults.
    expect(Variant::BugPodOwnerNotController, &Standard, &pods::PodOwnedByItsRunner),
    expect(Variant::BugPodOwnerNotController, &Standard, &convergence::ConvergesAfterHeal),
    // A removal ARC forgets halfway (RemoveRunner went through, the EphemeralRunner's delete failed or the
    // process stopped): the runner stays, counted live with no registration, for as long as its pod
    // runs on, minutes where actions/runner retries "registration not found" (drawn in half the worlds).
    expect(Variant::BugRemovedRunnerKept, &SteadyState, &removals::RemovedRunnerDeletedPromptly),
    // ARC's init-container check (#4457) meets the chart's dind sidecar (#3842): a sidecar that crashed
    // reads as a failed init container until the kubelet restarts it, and a busy runner is deleted
    // (the swarm draws the sidecar, crashing, in 30% of its worlds).
    expect(Variant::BugInitCheckReadsSidecars, &SteadyState, &deletion::NoBusyRunnerDeleted),
    expect(Variant::BugCreateErrorFinal, &SteadyState, &phases::TerminalPhaseIsFinal),
    expect(Variant::BugCreateErrorFinal, &SteadyState, &convergence::ConvergesAfterHeal),
    // A standby that acts: the controllers started before the Lease is held (leader-election world).
    expect(Variant::BugControllersBeforeLease, &LeaderElectionFailover, &leadership::OneLeaderAtATime),
    // A leader stopped past its lease writes once it goes on (client-go's election is not fencing).
    expect(Variant::BugWritesAfterLeaseLost, &PausedLeader, &leadership::OneLeaderAtATime),
    // #4027 as the suite found it: AcquireJobs failing past its retries after the listener acked.
    // Only where the service requires AcquireJobs (GHES, scaleset #90): where a delivered offer is
    // already the scale set's, nothing is lost between the acknowledgement and the acquisition.
    expect(Variant::BugAckBeforeAcquire, &REPORT_4027, &symptoms::JobStartedWithin)
        .needing(&[("job-acquisition", "required")]),
    // #4653 under `unregistered-runner-removal=refuse-id-zero`: a runner deleted before it registers,
    // RemoveRunner(0) refused on every try (`arcsim measure kills --from 12200000 --count 200
    // --scenario report-4653 --variant bug-4653-remove-zero --matrix`).
    expect(Variant::Bug4653RemoveZero, &REPORT_4653, &symptoms::DeletingRunnerGoneWithin),
    // #4307 under `registration-lifetime=unconnected-5-min` with slow starts: a runner refused for a
    // registration that expired is retried with the same JIT config (`arcsim measure kills --from
    // 12300000 --count 200 --scenario report-4307 --variant bug-4307-registration-gone --matrix`).
    expect(Variant::Bug4307RegistrationGone, &REPORT_4307, &convergence::ConvergesAfterHeal),
    KillExpectation {
        variant: Variant::BugArsPredicateCounts,
        scenario: &OptimisationEquivalence,
        oracle: Judge::Twin(&equivalence::SameCallsAndFinalState),
        needs: &[],
        network: Network::InProcess,
    },
];

/// An oracle with no kill row because no fix exists for what it sees: a field report's symptom that
/// every profile, `arcsim` included, shows in the report's world. Its world is its proof that it can
/// fail (the fixed controller fails it there), its unit tests on synthetic records the rest.
#[derive(Clone, Copy)]
pub struct ShownByReport {
    /// The oracle.
    pub oracle: &'static dyn Oracle,
    /// The report's world, which the fixed controller fails.
    pub report: &'static dyn Scenario,
}

impl ShownByReport {
    /// Seeds of `report` in which the fixed controller (profile `arcsim`) showed the symptom, as
    /// measured ([`REPORT_RATES_FILE`]; every such oracle has a line there, tested).
    pub fn shows(&self) -> Rate {
        let key = RateKey::of(self.report.name(), Profile::Arcsim.name(), self.oracle.name());
        report_rates().get(&key).copied().unwrap_or_else(|| {
            panic!(
                "{REPORT_RATES_FILE} has no line for {key}: measure it with `arcsim measure reports --write`"
            )
        })
    }
}

impl std::fmt::Debug for ShownByReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} in {}", self.oracle.name(), self.report.name())
    }
}

/// The oracles without a kill row, each with the report world that shows it.
pub const SHOWN_BY_REPORTS: &[ShownByReport] = &[
    ShownByReport { oracle: &symptoms::NoIdleRunnerRemovedWhileAJobWaits, report: &REPORT_4000 },
    ShownByReport { oracle: &symptoms::NoListenerExitOnSessionConflict, report: &REPORT_4285 },
    ShownByReport { oracle: &symptoms::RunnerGoneAfterItsJob, report: &REPORT_4603 },
];

/// Rows that hold on the turmoil network too: one per race, the race's signature, each with its own
/// rate measured there (`arcsim measure kills --network turmoil`). Judged by a sweep with `--network
/// turmoil` and by `scripts/kill-rows.sh` (turmoil runs cost 10–40× their in-process twins, so
/// `cargo test` sweeps none of them).
pub const TURMOIL_ROWS: &[KillExpectation] = &[
    expect(Variant::Bug4201, &WatchLagDuplicateCreate, &pods::NoAlreadyExistsErrors).on_turmoil(),
    expect(Variant::Bug1087, &TokenRefreshRecreation, &tokens::NoExpiredTokenRegistration).on_turmoil(),
    expect(Variant::BugScaleDownNoRemove, &AssignDuringDelete, &deletion::NoBusyRunnerDeleted).on_turmoil(),
];

/// The rows judged on `network`.
pub fn rows_on(network: Network) -> &'static [KillExpectation] {
    match network {
        Network::InProcess => KILL_TABLE,
        Network::Turmoil => TURMOIL_ROWS,
    }
}

/// Every row, in process then on turmoil.
pub fn all_rows() -> impl Iterator<Item = &'static KillExpectation> {
    KILL_TABLE.iter().chain(TURMOIL_ROWS)
}

/// Seeds `cargo test` may spend on one kill row; rows whose bound is wider are checked by
/// `scripts/kill-rows.sh` (a sweep over each such row's bound).
pub const CI_SEED_BUDGET: u32 = 50;

/// The in-process rows for `variant` in the scenario named `scenario`.
pub fn expectations(variant: Variant, scenario: &str) -> Vec<&'static KillExpectation> {
    expectations_on(Network::InProcess, variant, scenario)
}

/// The rows measured on `network` ([`rows_on`]) for `variant` in the scenario named `scenario`.
pub fn expectations_on(network: Network, variant: Variant, scenario: &str) -> Vec<&'static KillExpectation> {
    rows_on(network).iter().filter(|k| k.variant == variant && k.scenario.name() == scenario).collect()
}

/// The kill-table rows for `variant` in `scenario` under `profile`: the table is `arcsim`'s, so under
/// any other profile there are none.
pub fn expectations_in(profile: Profile, variant: Variant, scenario: &str) -> Vec<&'static KillExpectation> {
    if profile == Profile::Arcsim { expectations(variant, scenario) } else { Vec::new() }
}

/// Where a sweep judges kill rows: the alternatives about GitHub in force (`None`: drawn per seed)
/// and the network its runs use.
#[derive(Debug, Clone, Copy)]
pub struct JudgedUnder<'a> {
    /// The alternatives in force.
    pub assumed: Option<&'a Assumed>,
    /// The network.
    pub network: Network,
}

/// The rows for `variant` in `scenario` under `profile` that are judged `under` these conditions:
/// the table of its network ([`rows_on`]), `arcsim`'s only, each row holding under the alternatives
/// in force ([`KillExpectation::holds_under`]).
pub fn expectations_under(
    profile: Profile,
    variant: Variant,
    scenario: &str,
    under: JudgedUnder<'_>,
) -> Vec<&'static KillExpectation> {
    if profile != Profile::Arcsim {
        return Vec::new();
    }
    let mut rows = expectations_on(under.network, variant, scenario);
    if under.network == Network::Turmoil {
        rows.extend(expectations(variant, scenario).into_iter().filter(|k| always_on_turmoil(k.scenario)));
    }
    rows.retain(|k| k.holds_under(under.assumed));
    rows
}

/// Whether `scenario`'s world runs on turmoil whatever the flag (network-partition's): its in-process
/// rows were measured there, so a sweep on turmoil judges them too.
fn always_on_turmoil(scenario: &dyn Scenario) -> bool {
    scenario.world(arc_sim::Seed(1), Variant::Fixed).config.network == Network::Turmoil
}

/// How many seeds a sweep must run of `variant` in `scenario` under `profile` and `under`: the
/// largest bound of its rows judged there (`None` without rows).
pub fn cell_bound_in(
    profile: Profile,
    variant: Variant,
    scenario: &str,
    under: JudgedUnder<'_>,
) -> Option<u32> {
    expectations_under(profile, variant, scenario, under).iter().map(|k| k.within_seeds()).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_has_its_measured_rate_and_every_rate_its_row() {
        let rows: Vec<RateKey> = all_rows().map(KillExpectation::key).collect();
        for key in &rows {
            assert!(measured_rates().contains_key(key), "{RATES_FILE} lacks {key}");
        }
        for key in measured_rates().keys() {
            assert!(rows.contains(key), "{RATES_FILE} has {key}, which is no kill-table row");
        }
    }

    #[test]
    fn every_oracle_has_a_kill_row_or_a_report_world_that_shows_it() {
        let killed = |name: &str| KILL_TABLE.iter().any(|row| row.oracle.name() == name);
        let shown = |name: &str| SHOWN_BY_REPORTS.iter().any(|s| s.oracle.name() == name);
        for name in crate::names::all_oracle_names() {
            assert!(killed(name) != shown(name), "{name}: a kill row or a report world, one of the two");
        }
        for shown in SHOWN_BY_REPORTS {
            let runs = shown.report.oracles().iter().any(|o| o.name() == shown.oracle.name());
            assert!(runs, "{shown:?}: the report's world does not run its oracle");
            assert!(
                shown.shows().hits > 0,
                "{shown:?}: the measured rate must show the fixed controller failing it"
            );
        }
    }

    #[test]
    fn each_race_has_a_row_on_turmoil_that_is_one_of_its_rows_in_process() {
        for race in ["watch-lag-duplicate-create", "token-refresh-recreation", "assign-during-delete"] {
            let on_turmoil: Vec<_> = TURMOIL_ROWS.iter().filter(|r| r.scenario.name() == race).collect();
            assert!(!on_turmoil.is_empty(), "{race} has no row on turmoil");
            for row in on_turmoil {
                assert_eq!(row.network, Network::Turmoil);
                let same = |k: &&KillExpectation| {
                    k.variant == row.variant
                        && k.oracle.name() == row.oracle.name()
                        && k.scenario.name() == race
                };
                assert!(KILL_TABLE.iter().any(|k| same(&k)), "{row:?} is a row in process too");
                assert_eq!(row.key().scenario, format!("{race}@turmoil"));
            }
        }
        let turmoil = JudgedUnder { assumed: None, network: Network::Turmoil };
        let rows =
            expectations_under(Profile::Arcsim, Variant::Bug4201, "watch-lag-duplicate-create", turmoil);
        assert_eq!(rows.len(), 1, "on turmoil only its turmoil row is judged");
        let partition =
            expectations_under(Profile::Arcsim, Variant::BugZombieListener, "network-partition", turmoil);
        assert_eq!(partition.len(), 1, "a world on turmoil whatever the flag keeps its rows there");
        let in_process = JudgedUnder { network: Network::InProcess, ..turmoil };
        let rows =
            expectations_under(Profile::Arcsim, Variant::Bug4201, "watch-lag-duplicate-create", in_process);
        assert!(rows.len() > 1 && rows.iter().all(|r| r.network == Network::InProcess));
    }

    #[test]
    fn every_field_report_symptom_is_measured_under_every_profile() {
        for report in crate::scenarios::field_reports::all() {
            for oracle in report.oracles() {
                for profile in Profile::ALL {
                    let key = RateKey::of(report.name(), profile.name(), oracle.name());
                    assert!(report_rates().contains_key(&key), "{REPORT_RATES_FILE} lacks {key}");
                }
            }
        }
    }

    #[test]
    fn every_row_names_an_oracle_its_scenario_runs_and_one_row_per_cell() {
        for row in KILL_TABLE {
            let judged = match row.oracle {
                Judge::Run(oracle) => row.scenario.oracles().iter().any(|o| o.name() == oracle.name()),
                Judge::Twin(oracle) => row
                    .scenario
                    .twins(arc_sim::Seed(1), row.variant)
                    .iter()
                    .any(|t| t.oracles.iter().any(|o| o.name() == oracle.name())),
            };
            assert!(judged, "{row:?}: the scenario does not run that oracle");
            assert!(!row.variant.is_fixed() && row.rate().kill_bound().is_some(), "{row:?}");
            let same_row = KILL_TABLE.iter().filter(|k| {
                k.variant == row.variant
                    && k.scenario.name() == row.scenario.name()
                    && k.oracle.name() == row.oracle.name()
            });
            assert_eq!(same_row.count(), 1, "{row:?}");
        }
        let names: Vec<&str> = crate::names::all_oracles().iter().map(|o| o.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "oracle names are unique: {names:?}");
    }

    #[test]
    fn a_row_that_needs_alternatives_is_judged_under_them_only() {
        for row in KILL_TABLE {
            for (name, alt) in row.needs {
                let assumption =
                    assumptions::find(name).unwrap_or_else(|| panic!("{row:?}: no assumption {name}"));
                assert!(assumption.alternative(alt).is_some(), "{row:?}: {name} has no alternative {alt}");
            }
        }
        let conditional =
            KILL_TABLE.iter().find(|r| !r.needs.is_empty()).expect("a row that needs an alternative");
        let (name, alt) = conditional.needs[0];
        assert!(conditional.holds_under(Some(&Assumed::parse([format!("{name}={alt}").as_str()]).unwrap())));
        let other = assumptions::find(name).unwrap().alternatives.iter().find(|a| a.name != alt).unwrap();
        let moved = Assumed::parse([format!("{name}={}", other.name).as_str()]).unwrap();
        assert!(!conditional.holds_under(Some(&moved)), "{conditional:?} is not judged where {name} moves");
        assert!(!conditional.holds_under(None), "nor where alternatives are drawn per seed");
        let plain = KILL_TABLE.iter().find(|r| r.needs.is_empty()).unwrap();
        assert!(plain.holds_under(Some(&moved)) && plain.holds_under(None));
    }
}
