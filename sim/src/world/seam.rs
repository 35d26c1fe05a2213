//! The seam between the world and the controller, the one place arcsim's simulation touches
//! `arc_controller`: the world fills the controller's [`Inputs`] (its own API client, the simulated
//! clock, the fake GitHub as the GitHub transport, the run's switches) and hands them to the entry
//! points the controller's binary uses — `arc_controller::start` for the controllers (called by
//! [`World`](super::World)) and [`listener::run`] for every listener pod.

use std::sync::Arc;

use arc_controller::runtime::metrics::Metrics;
use arc_controller::scaleset::listener::{self, CancellationToken};
use arc_controller::scaleset::resource_builder::ListenerConfig;
use arc_controller::{Clock, GitHubTransport, Inputs, SharedClock};
use futures::FutureExt;
use jiff::Timestamp;

use super::WorldConfig;
use crate::clock::SimClock;
use crate::github::ScriptedGitHub;
use crate::kubelet::ListenerLauncher;

/// The simulated clock as the controller's clock seam.
#[derive(Debug, Clone, Copy)]
struct ControllerClock(SimClock);

impl Clock for ControllerClock {
    fn now(&self) -> Timestamp {
        self.0.now()
    }
}

/// The controller's clock seam over `clock`.
pub fn controller_clock(clock: SimClock) -> SharedClock {
    Arc::new(ControllerClock(clock))
}

/// The inputs of a controller or listener process in this world: `client` (its own actor), the
/// simulated clock, `metrics`, the fake GitHub (with its script) as the transport, and the run's
/// switches.
pub fn inputs(
    client: kube::Client,
    clock: SimClock,
    metrics: &Metrics,
    github: &ScriptedGitHub,
    config: &WorldConfig,
) -> Inputs {
    Inputs {
        client,
        clock: controller_clock(clock),
        metrics: metrics.clone(),
        github: GitHubTransport::service(github.clone()),
        switches: config.switches,
    }
}

/// The kubelet's hook for listener pods: the config file parsed as the binary parses it, then the
/// controller's listener entry point with the pod's name as its hostname. Exit 0 when it stops
/// cleanly (cancelled), 1 on any error, as the binary exits.
pub fn listener_launcher(inputs: Inputs) -> ListenerLauncher {
    Arc::new(move |pod: String, config_file: Vec<u8>, cancel: CancellationToken| {
        let inputs = inputs.clone();
        async move {
            let result = match ListenerConfig::from_json(&config_file) {
                Ok(config) => listener::run(config, &inputs, Some(&pod), cancel).await,
                Err(e) => Err(e.into()),
            };
            match result {
                Ok(()) => 0,
                Err(e) => {
                    tracing::info!(error = %e, pod, "listener exited with an error");
                    1
                }
            }
        }
        .boxed()
    })
}
