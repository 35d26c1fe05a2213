//! The scenarios arcsim ships, and the objects they start from.

pub mod app_auth;
pub mod assign_during_delete;
pub mod clocks;
pub mod container_failures;
pub mod control;
pub mod equivalence;
pub mod field_reports;
pub mod jobid_equivalence;
pub mod kubectl_delete;
pub mod kubelet_stalls;
pub mod leader_election;
pub mod legacy_registrations;
pub mod legacy_standard;
pub mod legacy_steady_state;
pub mod load;
pub mod network_partition;
pub mod node_capacity;
pub mod node_loss;
pub mod objects;
pub mod paused_leader;
pub mod pauses;
pub mod refresh;
pub mod removed_registrations;
pub mod runner_sessions;
pub mod sidecars;
pub mod slow_starts;
pub mod standard;
pub mod steady_state;
pub mod token_refresh;
pub mod watch_lag;

use crate::scenario::Scenario;

/// Every scenario, in the order `arcsim list` shows them.
pub fn all() -> Vec<&'static dyn Scenario> {
    vec![
        &standard::Standard,
        &watch_lag::WatchLagDuplicateCreate,
        &token_refresh::TokenRefreshRecreation,
        &assign_during_delete::AssignDuringDelete,
        &steady_state::SteadyState,
        &equivalence::OptimisationEquivalence,
        &app_auth::StandardAppAuth,
        &leader_election::LeaderElectionFailover,
        &paused_leader::PausedLeader,
        &network_partition::NetworkPartition,
        &kubectl_delete::KubectlDeleteRunners,
        &legacy_standard::LegacyStandard,
        &legacy_steady_state::LegacySteadyState,
    ]
}

/// The race scenarios' control worlds (run on request, not by a default sweep).
pub fn controls() -> Vec<&'static dyn Scenario> {
    vec![
        &watch_lag::CONTROL,
        &token_refresh::CONTROL,
        &assign_during_delete::CONTROL,
        &network_partition::CONTROL,
        &kubectl_delete::CONTROL,
    ]
}

/// The scenario or control world named `name`, or an error listing the valid names.
pub fn find(name: &str) -> Result<&'static dyn Scenario, String> {
    let known = || all().into_iter().chain(controls()).chain(field_reports::all());
    known().find(|s| s.name() == name).ok_or_else(|| {
        let valid: Vec<&str> = known().map(|s| s.name()).collect();
        format!("unknown scenario {name:?}; valid: {}", valid.join(", "))
    })
}

/// How many of seeds 0–39 of scenario `name` (fixed controller) plan a world that `drew` says drew a
/// window: the swarm's draws are tested by it.
#[cfg(test)]
pub(crate) fn worlds_drawing(name: &str, drew: impl Fn(&arc_world::WorldConfig) -> bool) -> usize {
    let scenario = find(name).expect("a known scenario");
    let fixed = crate::variant::Variant::Fixed;
    (0..40).filter(|s| drew(&scenario.world(arc_sim::Seed(*s), fixed).config)).count()
}

/// The race worlds, which never draw the swarm's windows.
#[cfg(test)]
pub(crate) const RACE_WORLDS: [&str; 4] =
    ["standard", "watch-lag-duplicate-create", "assign-during-delete", "token-refresh-recreation"];
