//! [`ControllerHost`]: the controller process of a world, as the world runs it. It starts the selected
//! [`Families`] through the seam (`arc_controller::start`, with inputs of the world's clients, clock,
//! GitHub transport and switches), restarts it as a fresh process (every informer, queue and
//! in-flight reconcile dropped), hands it to its turmoil host and bounces that host, runs controller
//! replicas that elect a leader and kills the leader, and counts every restart (and those that came
//! mid-reconcile) into the record. What the world does *to* it, and when, is its disruptions'.

use std::sync::Arc;

use arc_controller::runtime::manager::Manager;
use arc_controller::runtime::metrics::{ACTIVE_WORKERS, Metrics};
use arc_controller::{Families, Switches};
use arc_sim::faults::network::NetCommand;
use arc_sim::github::ScriptedGitHub;
use arc_sim::net::sim::Hosting;
use arc_sim::net::{HOST_CONTROLLER, Links};
use arc_sim::record::{Recorder, WorldEvent};

use super::pause::ProcessGate;
use super::process_clocks::ProcessClocks;
use super::replicas::{ReplicaConfig, ReplicaWorld, Replicas};
use super::seam;

/// Why a disruption of the controller process found nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The world runs one controller process, not replicas.
    NoReplicas,
    /// No replica leads at the moment.
    NoneLeads,
    /// The process is stopped already.
    Paused,
}

impl Refused {
    /// What the record says of the failed disruption.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Refused::NoReplicas => "kill-leader needs replicas",
            Refused::NoneLeads => "no replica leads",
            Refused::Paused => "the controller is paused already",
        }
    }
}

/// What the controller process is built from.
pub(crate) struct HostInputs {
    /// The controllers it runs.
    pub families: Families,
    /// Its switches.
    pub switches: Switches,
    /// Replicas electing a leader, if any.
    pub replicas: Option<ReplicaConfig>,
    /// How it builds its clients.
    pub links: Links,
    /// Each of its processes' clocks.
    pub clocks: ProcessClocks,
    /// The fake GitHub it calls.
    pub script: ScriptedGitHub,
    /// Its turmoil host's hosting, under the turmoil network.
    pub hosting: Option<Arc<Hosting>>,
    /// The record its restarts go to.
    pub record: Recorder,
}

/// The world's controller process (or replicas) and its restarts.
pub(crate) struct ControllerHost {
    inputs: HostInputs,
    metrics: Metrics,
    manager: Option<Manager>,
    /// The single controller process's gate (replicas have their own).
    gate: ProcessGate,
    replicas: Replicas,
    restarts: u32,
    restarts_mid_reconcile: u32,
    in_flight_at_crash: Option<i64>,
    handed: bool,
}

impl ControllerHost {
    /// A host that has started nothing yet.
    pub(crate) fn new(inputs: HostInputs) -> Self {
        ControllerHost {
            inputs,
            metrics: Metrics::new(),
            manager: None,
            gate: ProcessGate::default(),
            replicas: Replicas::default(),
            restarts: 0,
            restarts_mid_reconcile: 0,
            in_flight_at_crash: None,
            handed: false,
        }
    }

    /// The metrics every controller process (and replica) counts in.
    pub(crate) fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Controller restarts so far, and how many came while a reconcile was in flight.
    pub(crate) fn restarts(&self) -> (u32, u32) {
        (self.restarts, self.restarts_mid_reconcile)
    }

    /// Starts the controller, or restarts it as a fresh process; with replicas configured, starts
    /// them (once).
    pub(crate) async fn start(&mut self) {
        if let Some(replicas) = self.inputs.replicas.clone() {
            let mut running = std::mem::take(&mut self.replicas);
            if running.is_empty() {
                running.start_all(&self.replica_world(), &replicas);
            }
            self.replicas = running;
            return;
        }
        if let Some(hosting) = self.inputs.hosting.clone() {
            self.start_on_host(&hosting);
            return;
        }
        if let Some(mut old) = self.manager.take() {
            let in_flight = self.in_flight();
            // A stopped process is killed all the same.
            self.gate.open();
            old.shutdown().await;
            self.count_restart(in_flight);
        }
        self.gate = ProcessGate::default();
        let mut inputs = self.process_inputs();
        inputs.tasks = Arc::new(self.gate.clone());
        self.manager = Some(arc_controller::start(&inputs, &self.inputs.families));
    }

    /// Under turmoil: hands the controller process to its host the first time, bounces the host (a
    /// restart from scratch) after.
    fn start_on_host(&mut self, hosting: &Hosting) {
        if !self.handed {
            let clock = self.inputs.clocks.of("controller");
            let HostInputs { links, script, switches, families, .. } = &self.inputs;
            let (links, script, switches, families, metrics) =
                (links.clone(), script.clone(), *switches, families.clone(), self.metrics.clone());
            let gate = self.gate.clone();
            hosting.start_controller(Arc::new(move || {
                let mut inputs = seam::inputs_on(&links, "controller", clock, &metrics, &script, switches);
                inputs.tasks = Arc::new(gate.clone());
                Box::new(arc_controller::start(&inputs, &families))
            }));
            self.handed = true;
            return;
        }
        self.crashing();
        hosting.command(NetCommand::Bounce { host: HOST_CONTROLLER.into() });
        self.bounced();
    }

    /// Notes the in-flight reconciles of a controller about to crash (its host crashed); a stopped
    /// process is killed all the same, and its next incarnation starts unstopped.
    pub(crate) fn crashing(&mut self) {
        self.in_flight_at_crash = Some(self.in_flight());
        self.gate.open();
    }

    /// Stops the controller process (the leading replica, when replicas run) for `for_ms`, then lets
    /// it go on; both recorded.
    pub(crate) fn pause(&mut self, for_ms: u64) -> Result<(), Refused> {
        let (who, gate) = match &self.inputs.replicas {
            Some(_) => self.replicas.leader_gate().ok_or(Refused::NoneLeads)?,
            None => ("controller".to_string(), self.gate.clone()),
        };
        if gate.is_shut() {
            return Err(Refused::Paused);
        }
        gate.shut();
        let record = self.inputs.record.clone();
        record.emit(WorldEvent::ControllerPaused { who: who.clone(), for_ms, in_flight: self.in_flight() });
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(for_ms)).await;
            // A process killed meanwhile had its gate opened at the kill; its successor is not stopped.
            if gate.is_shut() {
                gate.open();
                record.emit(WorldEvent::ControllerResumed { who });
            }
        });
        Ok(())
    }

    /// Counts a controller restart after a crash (its host came back).
    pub(crate) fn bounced(&mut self) {
        let in_flight = self.in_flight_at_crash.take().unwrap_or(0);
        self.count_restart(in_flight);
    }

    /// Crashes the leading replica and restarts it; counted as a controller restart.
    pub(crate) fn kill_leader(&mut self) -> Result<(), Refused> {
        let replicas = self.inputs.replicas.clone().ok_or(Refused::NoReplicas)?;
        let in_flight = self.in_flight();
        let mut running = std::mem::take(&mut self.replicas);
        let killed = running.kill_leader(&self.replica_world(), &replicas);
        self.replicas = running;
        killed.ok_or(Refused::NoneLeads)?;
        self.count_restart(in_flight);
        Ok(())
    }

    /// Stops every controller process at the end of the run.
    pub(crate) async fn stop(&mut self) {
        self.gate.open();
        if let Some(mut manager) = self.manager.take() {
            manager.shutdown().await;
        }
        self.replicas.stop_all().await;
    }

    fn in_flight(&self) -> i64 {
        self.metrics.sum(ACTIVE_WORKERS, &[])
    }

    fn count_restart(&mut self, in_flight: i64) {
        self.restarts += 1;
        if in_flight > 0 {
            self.restarts_mid_reconcile += 1;
        }
        self.inputs.record.emit(WorldEvent::ControllerRestart { number: self.restarts, in_flight });
    }

    fn process_inputs(&self) -> arc_controller::Inputs {
        let HostInputs { links, script, switches, .. } = &self.inputs;
        seam::inputs_on(
            links,
            "controller",
            self.inputs.clocks.of("controller"),
            &self.metrics,
            script,
            *switches,
        )
    }

    /// What replicas are started from.
    fn replica_world(&self) -> ReplicaWorld<'_> {
        ReplicaWorld {
            links: &self.inputs.links,
            clocks: &self.inputs.clocks,
            metrics: &self.metrics,
            github: &self.inputs.script,
            switches: self.inputs.switches,
            families: &self.inputs.families,
        }
    }
}
