//! `arcsim apiserver`: the fake API server over real TCP, for kubectl and other clients.
//!
//! It serves an empty world (the configured namespaces, the built-in kinds and ARC's custom resources)
//! in real time: the simulated clock starts at the wall-clock time of launch and runs at wall speed, so
//! ages read sensibly in kubectl. Each request is printed to stderr as a trace line.

use std::net::SocketAddr;

use arc_controller::{Clock, SystemClock};
use arc_sim::apiserver::{ApiServerConfig, FakeApiServer, tcp};
use arc_sim::faults::FaultPlan;
use arc_sim::world::arc_crds;
use arc_sim::{Seed, SimClock, Trace, TraceMode};

/// Options of `arcsim apiserver`.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiServerArgs {
    /// Address to listen on, e.g. 127.0.0.1:6443 (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Seed for generated names, uids and fault dice.
    #[arg(long, default_value = "1", value_parser = crate::cli::parse_seed)]
    pub seed: Seed,
    /// A fault plan: inline JSON, or @FILE to read one.
    #[arg(long, value_parser = crate::cli::parse_fault_plan)]
    pub faults: Option<FaultPlan>,
}

/// Serves until interrupted (Ctrl-C).
pub fn run(args: ApiServerArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(args))
}

async fn serve(args: ApiServerArgs) -> anyhow::Result<()> {
    let clock = SimClock::start_at(SystemClock.now());
    let trace = Trace::new(clock, TraceMode::Stderr);
    let faults = args.faults.unwrap_or_default();
    let server = FakeApiServer::new(args.seed, clock, trace, ApiServerConfig::default(), &faults, arc_crds());
    let (listener, addr) =
        tcp::bind(args.listen).await.map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.listen))?;
    println!("arcsim fake API server listening on http://{addr} (seed {})", args.seed);
    println!("try: kubectl --server http://{addr} get pods -A");
    tokio::select! {
        biased;
        _ = tokio::signal::ctrl_c() => {
            println!("interrupted; served {} resourceVersions", server.resource_version());
            Ok(())
        }
        result = tcp::serve(server.clone(), listener) => result.map_err(Into::into),
    }
}
