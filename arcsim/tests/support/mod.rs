//! The test harness: a fake API server, a fake GitHub (behind a script of canned answers), a
//! `kube::Client`, the controller's inputs, metrics and scale-set context, and fixtures. Controllers
//! start through the controller's own entry point (`arc_controller::start`), as the binary starts them.

pub(crate) mod fixtures;
pub(crate) mod log_capture;

use std::sync::Arc;
use std::time::Duration;

use arc_controller::legacy::LegacySettings;
use arc_controller::runtime::manager::Manager;
use arc_controller::runtime::metrics::Metrics;
use arc_controller::runtime::tasks::AsIs;
use arc_controller::scaleset::{ScaleSetContext, ScaleSetReconcilers, ScaleSetSettings};
use arc_controller::{Families, Fixes, GitHubTransport, Inputs, Switches};
use arc_sim::apiserver::{ApiServerConfig, FakeApiServer, WatchLag};
use arc_sim::faults::FaultPlan;
use arc_sim::github::{FakeGitHub, GitHubConfig, ScriptedGitHub};
use arc_sim::record::Recorder;
use arc_sim::{Seed, SimClock};
use arc_world::ClusterBuilder;
use arc_world::arc_crds;
use arc_world::seam::controller_clock;
use kube::Api;

/// Namespace of the runner sets and runners.
pub(crate) const RUNNER_NS: &str = "arc-runners";
/// Namespace of the controller and its listeners.
pub(crate) const CONTROLLER_NS: &str = "arc-systems";

/// The test's time: tokio's clock, paused in every harness test, so it moves only with the simulation.
pub(crate) fn sim_now() -> tokio::time::Instant {
    tokio::time::Instant::now() // allow-nondeterminism: tokio clock, paused in the sim
}

/// Everything a controller test runs against. Build it inside the test's (paused) runtime.
pub(crate) struct Harness {
    pub seed: Seed,
    pub clock: SimClock,
    pub record: Recorder,
    pub apiserver: FakeApiServer,
    pub github: FakeGitHub,
    pub script: ScriptedGitHub,
    pub client: kube::Client,
    pub metrics: Metrics,
    /// What the controller under test is built from.
    pub inputs: Inputs,
    /// The scale-set settings [`Harness::start`] runs the controllers with.
    pub settings: ScaleSetSettings,
    /// A context on the same inputs, for the builders, the clock and GitHub clients in tests.
    pub ctx: Arc<ScaleSetContext>,
}

/// Settings for a [`Harness`]; every field has the default a test would expect.
pub(crate) struct HarnessBuilder {
    pub seed: Seed,
    pub apiserver: ApiServerConfig,
    pub github: GitHubConfig,
    pub faults: FaultPlan,
    pub switches: Switches,
    pub settings: ScaleSetSettings,
}

impl Default for HarnessBuilder {
    fn default() -> Self {
        let mut apiserver = ApiServerConfig::default();
        apiserver.namespaces.extend([RUNNER_NS.to_string(), CONTROLLER_NS.to_string()]);
        // These tests port ARC's envtest suites, whose API server's watch cache keeps up within a
        // millisecond; races between caches are the race scenarios' subject, not theirs.
        apiserver.watch_cache_lag = WatchLag::default();
        HarnessBuilder {
            seed: Seed(1),
            apiserver,
            github: GitHubConfig::default(),
            faults: FaultPlan::none(),
            switches: Switches::default(),
            settings: ScaleSetSettings { controller_namespace: CONTROLLER_NS.into(), ..Default::default() },
        }
    }
}

impl HarnessBuilder {
    pub(crate) fn build(self) -> Harness {
        let cluster = ClusterBuilder::new(self.seed)
            .apiserver(self.apiserver)
            .faults(&self.faults)
            .crds(arc_crds())
            .build();
        let (clock, trace, apiserver) =
            (cluster.clock(), cluster.record().clone(), cluster.apiserver().clone());
        let github = FakeGitHub::new(self.seed, clock, trace.clone(), self.github, &self.faults)
            .expect("a valid GitHub config inside a runtime");
        let script = ScriptedGitHub::new(github.service());
        let client = apiserver.client();
        let metrics = Metrics::new();
        let inputs = Inputs {
            client: client.clone(),
            clock: controller_clock(clock),
            metrics: metrics.clone(),
            github: GitHubTransport::service(script.clone()),
            switches: self.switches,
            tasks: AsIs::shared(),
        };
        let ctx = Arc::new(ScaleSetContext::new(&inputs, self.settings.clone()));
        let settings = self.settings;
        Harness {
            seed: self.seed,
            clock,
            record: trace,
            apiserver,
            github,
            script,
            client,
            metrics,
            inputs,
            settings,
            ctx,
        }
    }
}

impl Harness {
    /// A harness with every default.
    pub(crate) fn new() -> Self {
        HarnessBuilder::default().build()
    }

    /// A harness with settings changed by `change`.
    pub(crate) fn with(change: impl FnOnce(&mut HarnessBuilder)) -> Self {
        let mut builder = HarnessBuilder::default();
        change(&mut builder);
        builder.build()
    }

    /// Starts the scale-set controllers `reconcilers` names through the controller's entry point;
    /// keep the manager alive for the test.
    pub(crate) fn start(&self, reconcilers: &[&str]) -> Manager {
        let reconcilers = ScaleSetReconcilers::only(reconcilers).expect("known controller names");
        let settings = ScaleSetSettings { reconcilers, ..self.settings.clone() };
        arc_controller::start(&self.inputs, &Families::scale_set(settings))
    }

    /// Starts the legacy Runner controller with `settings` and `fixes` through the controller's entry
    /// point; keep the manager alive for the test.
    pub(crate) fn start_legacy(&self, settings: LegacySettings, fixes: Fixes) -> Manager {
        let inputs = Inputs { switches: Switches { fixes, ..self.inputs.switches }, ..self.inputs.clone() };
        arc_controller::start(&inputs, &Families::legacy(settings))
    }

    /// A typed API in `namespace`.
    pub(crate) fn api<K>(&self, namespace: &str) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Waits in simulated time, polling every 100 ms, until `check` holds; panics naming `what` after
    /// `timeout`.
    pub(crate) async fn eventually(&self, what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
        let deadline = sim_now() + timeout;
        while !check() {
            assert!(sim_now() < deadline, "timed out after {timeout:?} waiting for: {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Checks that `check` holds at every 100 ms poll for `duration` (controller-runtime's `Consistently`).
    pub(crate) async fn consistently(&self, what: &str, duration: Duration, mut check: impl FnMut() -> bool) {
        let deadline = sim_now() + duration;
        while sim_now() < deadline {
            assert!(check(), "stopped holding: {what}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A stored object, read straight from the fake (no API call, no fault).
    pub(crate) fn object(&self, plural: &str, namespace: &str, name: &str) -> Option<serde_json::Value> {
        self.apiserver.object(plural, namespace, name)
    }

    /// A controller metric, summed over labels matching `filter`.
    pub(crate) fn metric(&self, name: &str, filter: &[(&str, &str)]) -> i64 {
        self.metrics.sum(name, filter)
    }
}

/// `json` with every `wall_ms` set to 0: what two sweeps of the same plan must agree on exactly.
pub(crate) fn without_wall_time(mut json: serde_json::Value) -> serde_json::Value {
    fn zero(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if key == "wall_ms" {
                        *v = 0.into();
                    } else {
                        zero(v);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(zero),
            _ => {}
        }
    }
    zero(&mut json);
    json
}
