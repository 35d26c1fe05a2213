//! Several controller replicas with leader election, as a Deployment with `replicas: N` and
//! `--enable-leader-election` runs them: each replica is one controller process
//! ([`arc_controller::ops::run_process`]) with its own API client (actor `controller#<i>`), all
//! electing a leader on one Lease; only the leader runs the controllers.
//!
//! The world turns this on with [`ReplicaConfig`] in its config (absent by default: one controller
//! process, no election, as every other scenario runs). [`super::Disruption::KillLeader`] crashes
//! the replica that leads (no release: its Lease must expire) and restarts it at once as a new
//! process (a new identity, `controller#<i>.<incarnation>`), which stands by.

use std::time::Duration;

use arc_controller::Families;
use arc_controller::ops::{LeaderElection, ProcessStatus, run_process};
use arc_controller::runtime::metrics::Metrics;
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::pause::ProcessGate;
use super::process_clocks::ProcessClocks;
use super::seam;
use arc_controller::Switches;
use arc_sim::github::ScriptedGitHub;
use arc_sim::net::Links;

/// Controller replicas and their election.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplicaConfig {
    /// How many controller processes run.
    pub count: u32,
    /// Namespace of their Lease.
    pub lease_namespace: String,
    /// Name of their Lease.
    pub lease_name: String,
}

/// The API actor of replica `index`; the identity of its `incarnation` is `<actor>.<incarnation>`.
pub fn replica_actor(index: u32) -> String {
    format!("controller#{index}")
}

/// One running replica process.
struct Replica {
    index: u32,
    incarnation: u32,
    gate: ProcessGate,
    status: ProcessStatus,
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

/// The running replicas.
#[derive(Default)]
pub(crate) struct Replicas {
    running: Vec<Replica>,
}

/// What starting a replica needs from the world.
pub(crate) struct ReplicaWorld<'a> {
    /// How each replica builds its own client.
    pub links: &'a Links,
    /// Each replica's clock, by its actor.
    pub clocks: &'a ProcessClocks,
    /// The metrics every replica counts in.
    pub metrics: &'a Metrics,
    /// The fake GitHub.
    pub github: &'a ScriptedGitHub,
    /// The controller's switches.
    pub switches: Switches,
    /// The controllers each replica runs when it leads.
    pub families: &'a Families,
}

impl Replicas {
    /// Starts `replicas.count` processes.
    pub(crate) fn start_all(&mut self, world: &ReplicaWorld<'_>, replicas: &ReplicaConfig) {
        for index in 0..replicas.count {
            self.start(world, replicas, index, 1);
        }
    }

    fn start(&mut self, world: &ReplicaWorld<'_>, replicas: &ReplicaConfig, index: u32, incarnation: u32) {
        let actor = replica_actor(index);
        let gate = ProcessGate::default();
        let mut inputs = seam::inputs_on(
            world.links,
            &actor,
            world.clocks.of(&actor),
            world.metrics,
            world.github,
            world.switches,
        );
        inputs.tasks = std::sync::Arc::new(gate.clone());
        let mut election = LeaderElection::new(
            &replicas.lease_namespace,
            &replicas.lease_name,
            &format!("{actor}.{incarnation}"),
        );
        election.retry_period = Duration::from_secs(2);
        let (status, cancel) = (ProcessStatus::default(), CancellationToken::new());
        let families = world.families.clone();
        let task = {
            let (status, cancel) = (status.clone(), cancel.clone());
            tokio::spawn(gate.gated(async move {
                if let Err(error) = run_process(&inputs, &families, Some(election), &status, cancel).await {
                    tracing::info!(%error, "controller replica stopped");
                }
            }))
        };
        self.running.push(Replica { index, incarnation, gate, status, cancel, task });
    }

    /// Crashes the leading replica (if one leads) and starts its next incarnation; returns its index.
    pub(crate) fn kill_leader(&mut self, world: &ReplicaWorld<'_>, replicas: &ReplicaConfig) -> Option<u32> {
        let position = self.running.iter().position(|r| r.status.is_leading())?;
        let killed = self.running.remove(position);
        // A stopped replica is killed all the same (its pause then ends unrecorded).
        killed.gate.open();
        killed.task.abort();
        self.start(world, replicas, killed.index, killed.incarnation + 1);
        Some(killed.index)
    }

    /// The leading replica's actor and gate, if one leads.
    pub(crate) fn leader_gate(&self) -> Option<(String, ProcessGate)> {
        let leader = self.running.iter().find(|r| r.status.is_leading())?;
        Some((replica_actor(leader.index), leader.gate.clone()))
    }

    /// Whether no replica has been started.
    pub(crate) fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Stops every replica cleanly and waits for them.
    pub(crate) async fn stop_all(&mut self) {
        for replica in &self.running {
            replica.gate.open();
            replica.cancel.cancel();
        }
        for replica in self.running.drain(..) {
            let _ = replica.task.await;
        }
    }
}
