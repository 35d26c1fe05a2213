//! `arcsim apiserver`: the fake API server over real TCP, for kubectl and other clients.
//!
//! It serves an empty world (the configured namespaces, the built-in kinds, and the custom resources of
//! ARC's CRDs, or of the CRD files given with `--crd`) in real time: the simulated clock starts at the
//! wall-clock time of launch and runs at wall speed, so ages read sensibly in kubectl. Each request is
//! printed to stderr as a trace line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use arc_controller::{Clock, SystemClock};
use arc_sim::apiserver::{ApiServerConfig, CrdError, CrdSet, tcp};
use arc_sim::faults::FaultPlan;
use arc_sim::record::{Interest, Recorder};
use arc_sim::{Seed, SimClock, TraceMode};
use arc_world::ClusterBuilder;
use arc_world::arc_crds;

/// Options of `arcsim apiserver`.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiServerArgs {
    /// Address to listen on, e.g. 127.0.0.1:6443 (port 0 picks a free port). Loopback only unless
    /// `--allow-remote`.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Listen on a non-loopback address too. The fake has no authentication: anyone who can reach it
    /// can read and change everything it serves.
    #[arg(long)]
    pub allow_remote: bool,
    /// Seed for generated names, uids and fault dice.
    #[arg(long, default_value = "1", value_parser = crate::cli::parse_seed)]
    pub seed: Seed,
    /// A fault plan: inline JSON, or @FILE to read one.
    #[arg(long, value_parser = crate::cli::parse_fault_plan)]
    pub faults: Option<FaultPlan>,
    /// Priority and fairness under load (`ApiServerConfig::load`): JSON inline or @FILE, e.g.
    /// `{"seats":0,"queue_length":0,...}` to answer every request but a watch with APF's 429.
    #[arg(long, value_parser = crate::cli::parse_load)]
    pub load: Option<arc_sim::apiserver::load::LoadConfig>,
    /// A file of CustomResourceDefinitions (YAML or JSON, `apiextensions.k8s.io/v1`) to serve instead of
    /// ARC's; repeatable. Without it, ARC's CRDs (`arc-controller crds`) are served.
    #[arg(long = "crd", value_name = "FILE")]
    pub crds: Vec<PathBuf>,
}

/// Why the `--crd` files cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum CrdFileError {
    /// A file that cannot be read.
    #[error("cannot read CRD file {path}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file whose content is not servable CRDs.
    #[error(transparent)]
    Invalid(#[from] CrdError),
}

/// The CRDs to serve: those of `files`, or ARC's when none are given.
pub fn load_crds(files: &[PathBuf]) -> Result<CrdSet, CrdFileError> {
    if files.is_empty() {
        return Ok(arc_crds().clone());
    }
    let mut set = CrdSet::new();
    for file in files {
        set.add_manifests(&file.display().to_string(), &read(file)?)?;
    }
    Ok(set)
}

fn read(path: &Path) -> Result<String, CrdFileError> {
    std::fs::read_to_string(path)
        .map_err(|source| CrdFileError::Read { path: path.display().to_string(), source })
}

/// Serves until interrupted (Ctrl-C).
pub fn run(args: ApiServerArgs) -> anyhow::Result<()> {
    super::listen::check_listen(args.listen, args.allow_remote)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(args))
}

async fn serve(args: ApiServerArgs) -> anyhow::Result<()> {
    let crds = load_crds(&args.crds)?;
    let clock = SimClock::start_at(SystemClock.now());
    let record = Recorder::new(clock, TraceMode::Stderr);
    record.keep_only(Interest::none()); // a long-running server: lines to stderr, nothing kept
    let faults = args.faults.unwrap_or_default();
    let config = ApiServerConfig { load: args.load, ..ApiServerConfig::default() };
    let cluster =
        ClusterBuilder::new(args.seed).record(record).apiserver(config).faults(&faults).crds(&crds).build();
    let server = cluster.apiserver().clone();
    let (listener, addr) =
        tcp::bind(args.listen).await.map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.listen))?;
    println!("arcsim fake API server listening on http://{addr} (seed {})", args.seed);
    let served: Vec<&str> = crds.crds().iter().map(|c| c.name.as_str()).collect();
    println!("custom resources: {}", served.join(", "));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_crd_files_arc_crds_are_served() {
        let set = load_crds(&[]).unwrap();
        assert_eq!(set.crds().len(), 5);
    }

    #[test]
    fn a_missing_or_invalid_crd_file_is_a_clear_error() {
        let missing = load_crds(&[PathBuf::from("/nonexistent/crds.yaml")]).unwrap_err();
        assert_eq!(missing.to_string(), "cannot read CRD file /nonexistent/crds.yaml");
        assert!(std::error::Error::source(&missing).is_some(), "the I/O error is its source");
        let dir = std::env::temp_dir().join(format!("arcsim-crd-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.yaml");
        std::fs::write(&bad, "apiVersion: v1\nkind: ConfigMap\n").unwrap();
        let err = load_crds(std::slice::from_ref(&bad)).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: document 1: kind \"ConfigMap\" is not a CustomResourceDefinition", bad.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
