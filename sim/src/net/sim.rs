//! Running a world on turmoil: [`run_on_turmoil`] builds the simulation (seeded, 1 ms ticks, a LAN's
//! sub-millisecond segment latency), registers the hosts, runs the world as the client [`HOST_NODE`],
//! and steps until the world returns, applying after each step the [`NetCommand`]s the world queued
//! (crashes and bounces need the simulation itself). [`Hosting`] is what the world hands its hosts:
//! the servers to serve, the controller process to start, the listener host's runtime to spawn
//! listener pods on.

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rand::RngCore;

use super::connections::Connections;
use super::serve::{CutWatches, DropLongPolls, serve};
use super::{
    APISERVER_PORT, GITHUB_PORT, HOST_APISERVER, HOST_CONTROLLER, HOST_GITHUB, HOST_LISTENERS, HOST_NODE,
    TICK,
};
use crate::apiserver::FakeApiServer;
use crate::faults::network::{NetCommand, NetFault};
use crate::github::ScriptedGitHub;
use crate::record::Recorder;
use crate::seed::Seed;

/// A process a host runs: started inside the host, alive while the returned value is held (until the
/// host crashes).
pub type Process = Arc<dyn Fn() -> Box<dyn Any> + Send + Sync>;

/// What the server hosts serve.
#[derive(Clone)]
pub struct Servers {
    /// The fake API server.
    pub apiserver: FakeApiServer,
    /// The fake GitHub, with its script.
    pub github: ScriptedGitHub,
    /// The run's record (the server-side faults report in it).
    pub record: Recorder,
    /// The plan's network faults.
    pub faults: Vec<NetFault>,
}

#[derive(Default)]
struct State {
    servers: Option<Servers>,
    controller: Option<Process>,
    listeners: Option<tokio::runtime::Handle>,
    commands: Vec<NetCommand>,
}

/// What the world hands its hosts, and the commands it queues for the simulation. Shared.
#[derive(Default)]
pub struct Hosting {
    state: Mutex<State>,
    connections: Arc<Connections>,
}

impl Hosting {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The run's live connections.
    pub fn connections(&self) -> &Arc<Connections> {
        &self.connections
    }

    /// Hands the servers to their hosts.
    pub fn publish_servers(&self, servers: Servers) {
        self.state().servers = Some(servers);
    }

    /// Lets the controller host start `process` (and start it afresh on every bounce).
    pub fn start_controller(&self, process: Process) {
        self.state().controller = Some(process);
    }

    /// The listener host's runtime, unless the host is down.
    pub fn listeners(&self) -> Option<tokio::runtime::Handle> {
        self.state().listeners.clone()
    }

    /// Queues `command` for the simulation (applied after the current step).
    pub fn command(&self, command: NetCommand) {
        self.state().commands.push(command);
    }

    fn take_commands(&self) -> Vec<NetCommand> {
        std::mem::take(&mut self.state().commands)
    }

    async fn wait_for<T>(&self, pick: impl Fn(&State) -> Option<T>) -> T {
        loop {
            if let Some(found) = pick(&self.state()) {
                return found;
            }
            tokio::time::sleep(TICK).await;
        }
    }
}

/// Why a turmoil run failed.
#[derive(Debug, thiserror::Error)]
#[error("turmoil simulation: {0}")]
pub struct TurmoilError(String);

/// Runs `node` (the world) on a turmoil simulation seeded from `seed`, with the hosts `hosting`
/// feeds, for at most `limit_ms` of simulated time; returns what `node` returned.
pub fn run_on_turmoil<T: 'static>(
    seed: Seed,
    limit_ms: u64,
    hosting: &Arc<Hosting>,
    node: impl Future<Output = T> + 'static,
) -> Result<T, TurmoilError> {
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed.named_rng("turmoil").next_u64())
        .simulation_duration(Duration::from_millis(limit_ms))
        .tick_duration(TICK)
        .min_message_latency(Duration::ZERO)
        .max_message_latency(Duration::from_micros(500))
        .tcp_capacity(1 << 16)
        .build();
    register_hosts(&mut sim, hosting);
    let out: Rc<RefCell<Option<T>>> = Rc::default();
    let slot = Rc::clone(&out);
    sim.client(HOST_NODE, async move {
        *slot.borrow_mut() = Some(node.await);
        Ok(())
    });
    loop {
        let finished = sim.step().map_err(|e| TurmoilError(e.to_string()))?;
        for command in hosting.take_commands() {
            apply(&mut sim, hosting, command);
        }
        if finished {
            break;
        }
    }
    out.borrow_mut().take().ok_or_else(|| TurmoilError("the world did not finish".into()))
}

fn register_hosts(sim: &mut turmoil::Sim<'_>, hosting: &Arc<Hosting>) {
    let h = Arc::clone(hosting);
    sim.host(HOST_APISERVER, move || {
        let h = Arc::clone(&h);
        async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", APISERVER_PORT)).await?;
            let s = h.wait_for(|st| st.servers.clone()).await;
            let service = CutWatches::new(s.apiserver.service(), &s.faults, s.record);
            serve(listener, service, h.connections()).await?;
            Ok(())
        }
    });
    let h = Arc::clone(hosting);
    sim.host(HOST_GITHUB, move || {
        let h = Arc::clone(&h);
        async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", GITHUB_PORT)).await?;
            let s = h.wait_for(|st| st.servers.clone()).await;
            serve(listener, DropLongPolls::new(s.github, &s.faults, s.record), h.connections()).await?;
            Ok(())
        }
    });
    let h = Arc::clone(hosting);
    sim.host(HOST_CONTROLLER, move || {
        let h = Arc::clone(&h);
        async move {
            let process = h.wait_for(|st| st.controller.clone()).await;
            let _running = process();
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    let h = Arc::clone(hosting);
    sim.host(HOST_LISTENERS, move || {
        let h = Arc::clone(&h);
        async move {
            h.state().listeners = Some(tokio::runtime::Handle::current());
            std::future::pending::<()>().await;
            Ok(())
        }
    });
}

fn apply(sim: &mut turmoil::Sim<'_>, hosting: &Hosting, command: NetCommand) {
    match command {
        NetCommand::Partition { a, b, one_way } => {
            hosting.connections.reset_between(sim.lookup(a.as_str()), sim.lookup(b.as_str()));
            match one_way {
                false => sim.partition(a, b),
                true => sim.partition_oneway(a, b),
            }
        }
        NetCommand::Repair { a, b, one_way: false } => sim.repair(a, b),
        NetCommand::Repair { a, b, one_way: true } => sim.repair_oneway(a, b),
        NetCommand::Hold { a, b } => sim.hold(a, b),
        NetCommand::Release { a, b } => sim.release(a, b),
        NetCommand::Latency { a, b, ms } => sim.set_link_latency(a, b, Duration::from_millis(ms)),
        NetCommand::Crash { host } => {
            if host == HOST_LISTENERS {
                hosting.state().listeners = None;
            }
            sim.crash(host);
        }
        NetCommand::Bounce { host } => sim.bounce(host),
    }
}
