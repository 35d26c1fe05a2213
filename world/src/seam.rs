//! The seam between the world and the controller, the one place arcsim's simulation touches
//! `arc_controller`: the world fills the controller's [`Inputs`] (its own API client, the simulated
//! clock, the fake GitHub as the GitHub transport, the run's switches) and hands them to the entry
//! points the controller's binary uses — `arc_controller::start` for the controllers (called by
//! the world's controller host) and [`listener::run`] for every listener pod.

use std::sync::Arc;

use arc_controller::runtime::kube_client::KubeClientLayer;
use arc_controller::runtime::metrics::Metrics;
use arc_controller::runtime::tasks::AsIs;
use arc_controller::scaleset::listener::{self, CancellationToken};
use arc_controller::scaleset::resource_builder::ListenerConfig;
use arc_controller::{Clock, GitHubTransport, Inputs, SharedClock, Switches};
use futures::FutureExt;
use jiff::Timestamp;

use arc_sim::actor::ActorService;
use arc_sim::clock_skew::PartyClock;
use arc_sim::github::ScriptedGitHub;
use arc_sim::kubelet::ListenerLauncher;

use crate::listener_pause::ListenerGates;
use arc_sim::net::sim::Hosting;
use arc_sim::net::{Links, Network};

/// The simulated clock, as the controller process's node reads it, as the controller's clock seam.
#[derive(Debug, Clone, Copy)]
struct ControllerClock(PartyClock);

impl Clock for ControllerClock {
    fn now(&self) -> Timestamp {
        self.0.now()
    }
}

/// The controller's clock seam over `clock` (a [`SimClock`](arc_sim::clock::SimClock) reads true time).
pub fn controller_clock(clock: impl Into<PartyClock>) -> SharedClock {
    Arc::new(ControllerClock(clock.into()))
}

/// The inputs of a controller or listener process in this world: `client` (its own actor), the
/// simulated clock as its party reads it, `metrics`, `github` as the transport, and the run's `switches`.
pub fn inputs(
    client: kube::Client,
    clock: PartyClock,
    metrics: &Metrics,
    github: GitHubTransport,
    switches: Switches,
) -> Inputs {
    Inputs {
        client,
        clock: controller_clock(clock),
        metrics: metrics.clone(),
        github,
        switches,
        tasks: AsIs::shared(),
    }
}

/// How a process whose actor is `actor` reaches the fake GitHub on `links`' network: its service
/// (with its script) directly, or HTTP over turmoil TCP to the GitHub host; either way its calls name
/// `actor` as their caller.
pub fn github_transport(links: &Links, script: &ScriptedGitHub, actor: &str) -> GitHubTransport {
    match links.network() {
        Network::InProcess => GitHubTransport::service(ActorService::new(script.clone(), actor)),
        Network::Turmoil => GitHubTransport::service(ActorService::new(links.github_over_turmoil(), actor)),
    }
}

/// The inputs of a process whose API actor is `actor`, its clients built on `links` (call it inside
/// the host the process runs on).
pub fn inputs_on(
    links: &Links,
    actor: &str,
    clock: PartyClock,
    metrics: &Metrics,
    script: &ScriptedGitHub,
    switches: Switches,
) -> Inputs {
    let client = api_client(links, actor, &client_layers(links, actor));
    inputs(client, clock, metrics, github_transport(links, script, actor), switches)
}

/// The layers the binary puts on the API client of the process whose actor is `actor`: a listener's
/// (`arc-controller listener`) has client-go's default QPS and burst, the controller's (`run`) its
/// flags' defaults; no QPS limit where `links` say the world turned limits off.
fn client_layers(links: &Links, actor: &str) -> KubeClientLayer {
    match (links.rate_limited(), actor) {
        (false, _) => KubeClientLayer::unlimited(),
        (true, "listener") => KubeClientLayer::client_go_defaults(),
        (true, _) => KubeClientLayer::default(),
    }
}

/// The API client of a process whose actor is `actor`, on `links`' network, through `layers` (retry
/// after `Retry-After`, QPS and burst), as the controller's binary builds its own.
pub fn api_client(links: &Links, actor: &str, layers: &KubeClientLayer) -> kube::Client {
    match links.network() {
        Network::InProcess => layers.client(ActorService::new(links.api_in_process(), actor)),
        Network::Turmoil => layers.client(ActorService::new(links.api_over_turmoil(), actor)),
    }
}

/// The kubelet's hook for listener pods: the config file parsed as the binary parses it, then the
/// controller's listener entry point with the pod's name as its hostname, behind a gate of `gates`
/// (a disruption may stop it). Exit 0 when it stops cleanly (cancelled), 1 on any error, as the
/// binary exits.
pub fn listener_launcher(inputs: Inputs, gates: ListenerGates) -> ListenerLauncher {
    Arc::new(move |pod: String, config_file: Vec<u8>, cancel: CancellationToken| {
        gates.gated(pod.clone(), run_listener(inputs.clone(), pod, config_file, cancel)).boxed()
    })
}

/// The listener binary: exit 0 when it stops cleanly (cancelled), 1 on any error.
async fn run_listener(inputs: Inputs, pod: String, config_file: Vec<u8>, cancel: CancellationToken) -> i32 {
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

/// [`listener_launcher`] under turmoil: every listener pod runs on the listener host, its inputs
/// built there by `make_inputs`. A pod started while the host is down exits 1 at once; a pod whose
/// host crashes exits 137, as a killed container does.
pub fn listener_launcher_on(
    hosting: Arc<Hosting>,
    make_inputs: Arc<dyn Fn() -> Inputs + Send + Sync>,
    gates: ListenerGates,
) -> ListenerLauncher {
    Arc::new(move |pod: String, config_file: Vec<u8>, cancel: CancellationToken| {
        let host = hosting.listeners();
        let (make_inputs, gates) = (Arc::clone(&make_inputs), gates.clone());
        async move {
            let Some(host) = host else { return 1 };
            let task = AbortOnDrop(host.spawn(async move {
                let process = run_listener(make_inputs(), pod.clone(), config_file, cancel);
                gates.gated(pod, process).await
            }));
            task.join().await
        }
        .boxed()
    })
}

/// A listener pod's task on the listener host, aborted if the kubelet drops the pod's container.
struct AbortOnDrop(tokio::task::JoinHandle<i32>);

impl AbortOnDrop {
    async fn join(mut self) -> i32 {
        (&mut self.0).await.unwrap_or(137)
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
