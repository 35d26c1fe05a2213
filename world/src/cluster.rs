//! [`Cluster`]: a simulated Kubernetes cluster any kube-rs controller can run in — the simulated
//! clock, the run's record, and the fake API server serving the built-in kinds and the custom
//! resources of the CRD manifests it is given, with its seeded watch lag, latency and faults.
//!
//! [`ClusterBuilder`] is the one place a world's API server is assembled: ARC's
//! [`World`](crate::World), `arcsim apiserver` and `arcsim stage`, the test harness and the benches
//! build theirs through it. A controller is started as a function of a `kube::Client` (naming it to
//! the server) and the simulated clock ([`Cluster::start_controller`]): ours goes through
//! `arc_controller::start` ([`crate::seam`]); any other kube-rs controller goes the same way (the
//! repository's `examples/` holds one, with a race of its own caught by an oracle written for it).

use std::future::Future;

use arc_sim::apiserver::{ApiServerConfig, CrdSet, FakeApiServer};
use arc_sim::faults::FaultPlan;
use arc_sim::record::{Interest, Recorder};
use arc_sim::{Seed, SimClock, TraceMode};

/// How to build a [`Cluster`]; every setting has a default (no custom resources, the API server's
/// default config, no faults, a full trace, keep every event, the clock at the sim epoch).
#[derive(Clone)]
pub struct ClusterBuilder<'a> {
    seed: Seed,
    crds: Option<&'a CrdSet>,
    apiserver: ApiServerConfig,
    faults: Option<&'a FaultPlan>,
    clock: Option<SimClock>,
    trace: TraceMode,
    keep: Interest,
    record: Option<Recorder>,
}

impl<'a> ClusterBuilder<'a> {
    /// A builder for the cluster of `seed`, every setting at its default.
    pub fn new(seed: Seed) -> Self {
        ClusterBuilder {
            seed,
            crds: None,
            apiserver: ApiServerConfig::default(),
            faults: None,
            clock: None,
            trace: TraceMode::Full,
            keep: Interest::everything(),
            record: None,
        }
    }

    /// Serves the custom resources of `crds` (parsed from manifests with
    /// [`CrdSet::from_manifests`], as `kubectl apply` would take them).
    #[must_use]
    pub fn crds(mut self, crds: &'a CrdSet) -> Self {
        self.crds = Some(crds);
        self
    }

    /// The API server's configuration: namespaces, watch lag, latency, watch cache, limits.
    #[must_use]
    pub fn apiserver(mut self, config: ApiServerConfig) -> Self {
        self.apiserver = config;
        self
    }

    /// The fault plan the API server injects from (its `api` rules and perturbations).
    #[must_use]
    pub fn faults(mut self, faults: &'a FaultPlan) -> Self {
        self.faults = Some(faults);
        self
    }

    /// The clock (default: [`SimClock::start`]; a served world passes one at the wall clock's now).
    #[must_use]
    pub fn clock(mut self, clock: SimClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// What the record keeps of trace lines.
    #[must_use]
    pub fn trace(mut self, mode: TraceMode) -> Self {
        self.trace = mode;
        self
    }

    /// Which events the record keeps (what the run's judges read).
    #[must_use]
    pub fn keep(mut self, interest: Interest) -> Self {
        self.keep = interest;
        self
    }

    /// Records into `record` (which has its own clock, trace mode and interest, and may already hold
    /// events, such as the world's config line) instead of a fresh one.
    #[must_use]
    pub fn record(mut self, record: Recorder) -> Self {
        self.record = Some(record);
        self
    }

    /// Starts the API server. Must be called inside the runtime that will drive the cluster.
    pub fn build(self) -> Cluster {
        let record = self.record.unwrap_or_else(|| {
            let record = Recorder::new(self.clock.unwrap_or_else(SimClock::start), self.trace);
            record.keep_only(self.keep);
            record
        });
        let none = FaultPlan::none();
        let empty = CrdSet::new();
        let apiserver = FakeApiServer::new(
            self.seed,
            record.clock(),
            record.clone(),
            self.apiserver,
            self.faults.unwrap_or(&none),
            self.crds.unwrap_or(&empty),
        );
        Cluster { seed: self.seed, record, apiserver }
    }
}

/// A running simulated cluster: its API server and the record it writes to.
#[derive(Clone)]
pub struct Cluster {
    seed: Seed,
    record: Recorder,
    apiserver: FakeApiServer,
}

impl Cluster {
    /// The seed the cluster draws from.
    pub fn seed(&self) -> Seed {
        self.seed
    }

    /// The simulated clock.
    pub fn clock(&self) -> SimClock {
        self.record.clock()
    }

    /// The run's record (trace lines and typed events).
    pub fn record(&self) -> &Recorder {
        &self.record
    }

    /// The fake API server.
    pub fn apiserver(&self) -> &FakeApiServer {
        &self.apiserver
    }

    /// A `kube::Client` whose requests the server attributes to `actor` (in the trace, the audit log
    /// and per-client watch lag).
    pub fn client(&self, actor: &str) -> kube::Client {
        self.apiserver.client_as(actor)
    }

    /// Starts a controller as `actor`: `start` gets its own client and the simulated clock, and its
    /// future is spawned on the cluster's runtime.
    pub fn start_controller<F, Fut>(&self, actor: &str, start: F) -> tokio::task::JoinHandle<Fut::Output>
    where
        F: FnOnce(kube::Client, SimClock) -> Fut,
        Fut: Future + Send + 'static,
        Fut::Output: Send + 'static,
    {
        tokio::spawn(start(self.client(actor), self.clock()))
    }
}
