//! The race suites: each scenario's fixed controller passes a CI-sized seed range, each historic bug
//! variant is killed within the bound the kill table states, by the oracle it names. Plus pinned
//! regression seeds, determinism within and across processes, and canonical-trace snapshots.
//!
//! Modules: [`watch_lag`] (race 1), [`token_refresh`] (race 2), [`legacy_standard`] (the legacy
//! bugs' natural world), [`legacy_steady_state`] (the same, disrupted), [`assign_during_delete`] (race 3),
//! [`standard`] (the quiet world), [`steady_state`] (the swarm), [`kubectl_delete`] (runners deleted by hand, #4580), [`equivalence`] (predicates and lazy copy), [`determinism`],
//! [`snapshots`], [`client_retry`] (the world's clients retry as the binary's), [`shrink`] (failure capsules, shrunk), [`explore`] (generated perturbation plans), [`schedule`] (`--schedule`). [`suite`] holds the shared assertions.

mod app_auth;
mod assign_during_delete;
mod client_retry;
mod determinism;
mod early_answer;
mod equivalence;
mod explore;
mod field_reports;
mod first_screen;
mod kubectl_delete;
mod leader_election;
mod legacy_standard;
mod legacy_steady_state;
mod network_partition;
mod paused_leader;
mod record;
mod schedule;
mod shrink;
mod snapshots;
mod standard;
mod steady_state;
mod suite;
mod token_refresh;
mod watch_lag;
