//! `arc-controller run`: the controller against a real cluster (kubeconfig or in-cluster) and GitHub,
//! until SIGTERM or Ctrl-C.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arc_controller::github::{GitHubCredentials, ProxyUrls};
use arc_controller::legacy::LegacySettings;
use arc_controller::ops::{LeaderElection, ProcessStatus, run_process, serve_endpoints};
use arc_controller::runtime::kube_client::{self, KubeClientLayer};
use arc_controller::runtime::metrics::Metrics;
use arc_controller::runtime::tasks::AsIs;
use arc_controller::scaleset::{AcceptedVersions, ScaleSetReconcilers, ScaleSetSettings, resource_builder};
use arc_controller::{Families, GitHubTransport, Inputs, SystemClock};

use super::switch_args::SwitchArgs;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Which controllers to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Mode {
    /// AutoscalingRunnerSet, EphemeralRunnerSet, EphemeralRunner, AutoscalingListener.
    ScaleSet,
    /// The legacy Runner controller.
    Legacy,
    /// Both families.
    Both,
}

/// Options of `arc-controller run`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RunArgs {
    /// Which controllers to run.
    #[arg(long, value_enum, default_value = "scale-set")]
    pub mode: Mode,
    /// Watch only this namespace (default: all).
    #[arg(long)]
    pub watch_namespace: Option<String>,
    /// Namespace of the controller and its listeners.
    #[arg(long, default_value = "arc-systems")]
    pub controller_namespace: String,
    /// Concurrent reconciles of the EphemeralRunner controller.
    #[arg(long, default_value_t = 2)]
    pub runner_max_concurrent_reconciles: usize,
    /// Image of the listener pods: an image of this controller, whose `arc-controller listener` they
    /// run (ARC also takes it from `CONTROLLER_MANAGER_CONTAINER_IMAGE`, the controller's own image).
    #[arg(long, env = "CONTROLLER_MANAGER_CONTAINER_IMAGE", default_value = resource_builder::DEFAULT_LISTENER_IMAGE)]
    pub listener_image: String,
    /// Kubernetes client requests per second.
    #[arg(long, default_value_t = kube_client::DEFAULT_QPS)]
    pub qps: f64,
    /// Kubernetes client burst.
    #[arg(long, default_value_t = kube_client::DEFAULT_BURST)]
    pub burst: u32,
    /// Run only these scale-set controllers (repeatable; default all): `autoscalingrunnerset`,
    /// `ephemeralrunnerset`, `ephemeralrunner`, `autoscalinglistener`.
    #[arg(long = "controllers", value_name = "NAME", value_delimiter = ',')]
    pub controllers: Vec<String>,
    /// Optimisations to switch off; the controller is otherwise the fixed one.
    #[command(flatten)]
    pub switches: SwitchArgs,
    /// Namespace of the legacy controller's GitHub secret.
    #[arg(long, default_value = "actions-runner-system")]
    pub legacy_secret_namespace: String,
    /// Name of the legacy controller's GitHub secret (`github_token`, or the GitHub App keys
    /// `github_app_id`, `github_app_installation_id`, `github_app_private_key`).
    #[arg(long, default_value = "controller-manager")]
    pub legacy_secret_name: String,
    /// `app.kubernetes.io/version` lines of AutoscalingRunnerSets to reconcile besides this build's own
    /// (`MAJOR.MINOR`, comma-separated; `*` accepts any label). Any other label gets a
    /// `VersionAccepted=False` condition and is left alone, never deleted.
    #[arg(long, value_name = "VERSIONS", value_delimiter = ',', default_value = "0.13,0.14,0.15")]
    pub accepted_versions: Vec<String>,

    /// Where `/metrics` is served (Prometheus text), `HOST:PORT` or `:PORT`; `0` turns it off.
    #[arg(long, value_name = "ADDR", default_value = ":8080", help_heading = "Operations")]
    pub metrics_addr: String,
    /// Where `/healthz` and `/readyz` are served, `HOST:PORT` or `:PORT`; `0` turns them off.
    #[arg(long, value_name = "ADDR", default_value = ":8081", help_heading = "Operations")]
    pub health_probe_addr: String,
    /// Run the controllers only while holding a `coordination.k8s.io/v1` Lease, so that replicas
    /// stand by (ARC's `--enable-leader-election`).
    #[arg(long, help_heading = "Leader election")]
    pub enable_leader_election: bool,
    /// Name of the Lease.
    #[arg(long, value_name = "NAME", default_value = "arc-controller", help_heading = "Leader election")]
    pub leader_election_id: String,
    /// Namespace of the Lease (default: the controller namespace).
    #[arg(long, value_name = "NS", help_heading = "Leader election")]
    pub leader_election_namespace: Option<String>,
    /// This replica's identity (default: the hostname and a per-start suffix).
    #[arg(long, value_name = "ID", help_heading = "Leader election")]
    pub leader_election_identity: Option<String>,
    /// Seconds a Lease is good for without renewal.
    #[arg(long, value_name = "SECONDS", default_value_t = 15, help_heading = "Leader election")]
    pub lease_duration: u64,
    /// Seconds the leader keeps trying to renew before it gives up and exits.
    #[arg(long, value_name = "SECONDS", default_value_t = 10, help_heading = "Leader election")]
    pub renew_deadline: u64,
    /// Seconds between retries of standbys and renewals of the leader.
    #[arg(long, value_name = "SECONDS", default_value_t = 2, help_heading = "Leader election")]
    pub retry_period: u64,

    /// Proxy for GitHub `https://` URLs when an AutoscalingRunnerSet names none (default:
    /// `HTTPS_PROXY`/`https_proxy`); credentials as user info.
    #[arg(long, value_name = "URL", help_heading = "GitHub connection")]
    pub https_proxy: Option<String>,
    /// Proxy for GitHub `http://` URLs (default: `HTTP_PROXY`/`http_proxy`).
    #[arg(long, value_name = "URL", help_heading = "GitHub connection")]
    pub http_proxy: Option<String>,
    /// Hosts, domains and CIDRs reached without a proxy, comma-separated (default: `NO_PROXY`).
    #[arg(long, value_name = "LIST", help_heading = "GitHub connection")]
    pub no_proxy: Option<String>,

    /// Legacy mode: the GitHub App id to authenticate as, instead of the secret's credentials (a
    /// scale set's GitHub App is its `githubConfigSecret`: `github_app_id`,
    /// `github_app_installation_id`, `github_app_private_key`).
    #[arg(long, value_name = "ID", env = "GITHUB_APP_ID", help_heading = "GitHub App")]
    pub github_app_id: Option<String>,
    /// Legacy mode: the GitHub App installation id.
    #[arg(long, value_name = "ID", env = "GITHUB_APP_INSTALLATION_ID", help_heading = "GitHub App")]
    pub github_app_installation_id: Option<i64>,
    /// Legacy mode: a file holding the GitHub App's PEM private key (PKCS#1 or PKCS#8).
    #[arg(long, value_name = "FILE", env = "GITHUB_APP_PRIVATE_KEY_FILE", help_heading = "GitHub App")]
    pub github_app_private_key: Option<std::path::PathBuf>,
}

/// Runs the controllers until a stop signal (or, with leader election, until the Lease is lost).
pub(crate) async fn run(args: RunArgs, cancel: tokio_util::sync::CancellationToken) -> Result<(), BoxError> {
    let families = families(&args)?;
    let client = KubeClientLayer::new(args.qps, args.burst).infer().await?;
    let inputs = Inputs {
        client,
        clock: Arc::new(SystemClock),
        metrics: Metrics::new(),
        github: github_transport(&args),
        switches: args.switches.switches()?,
        tasks: AsIs::shared(),
    };
    tracing::info!(
        optimisations_off = ?args.switches.disable_optimisations,
        switches = ?inputs.switches,
        github = ?inputs.github,
        "starting"
    );
    let status = ProcessStatus::default();
    serve(&args, &inputs, &status, &cancel).await?;
    let election = leader_election(&args, inputs.clock.now().as_nanosecond());
    let result = run_process(&inputs, &families, election, &status, cancel).await;
    tracing::info!(metrics = %inputs.metrics.render(), "final metrics");
    Ok(result?)
}

/// Serves the metrics and health endpoints (one server when both addresses are the same).
async fn serve(
    args: &RunArgs,
    inputs: &Inputs,
    status: &ProcessStatus,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<(), BoxError> {
    let metrics = parse_addr(&args.metrics_addr)?;
    let health = parse_addr(&args.health_probe_addr)?;
    let mut addresses: Vec<(SocketAddr, &str)> = Vec::new();
    for (addr, what) in [(metrics, "/metrics"), (health, "/healthz and /readyz")] {
        if let Some(addr) = addr
            && !addresses.iter().any(|(known, _)| *known == addr)
        {
            addresses.push((addr, what));
        }
    }
    for (addr, what) in addresses {
        let bound = serve_endpoints(addr, inputs.metrics.clone(), status.clone(), cancel.clone()).await?;
        tracing::info!(%bound, "serving {what}");
    }
    Ok(())
}

/// `HOST:PORT`, `:PORT` (every interface), or `0` (off).
fn parse_addr(text: &str) -> Result<Option<SocketAddr>, String> {
    match text.trim() {
        "0" | "" => Ok(None),
        port if port.starts_with(':') => format!("0.0.0.0{port}").parse().map(Some),
        addr => addr.parse().map(Some),
    }
    .map_err(|e| format!("invalid address {text:?}: {e} (expected HOST:PORT, :PORT or 0)"))
}

/// The election `--enable-leader-election` asks for; a process's default identity is its hostname
/// and a suffix from its start time, so a restarted process is a new candidate.
fn leader_election(args: &RunArgs, started_nanos: i128) -> Option<LeaderElection> {
    if !args.enable_leader_election {
        return None;
    }
    let namespace =
        args.leader_election_namespace.clone().unwrap_or_else(|| args.controller_namespace.clone());
    let identity = args.leader_election_identity.clone().unwrap_or_else(|| {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "arc-controller".into());
        format!("{host}_{:x}", started_nanos.rem_euclid(1 << 48))
    });
    let mut election = LeaderElection::new(&namespace, &args.leader_election_id, &identity);
    election.lease_duration = Duration::from_secs(args.lease_duration);
    election.renew_deadline = Duration::from_secs(args.renew_deadline);
    election.retry_period = Duration::from_secs(args.retry_period);
    Some(election)
}

/// HTTPS, through the proxies of the flags when any is given (the environment's otherwise).
fn github_transport(args: &RunArgs) -> GitHubTransport {
    if args.https_proxy.is_none() && args.http_proxy.is_none() && args.no_proxy.is_none() {
        return GitHubTransport::Https;
    }
    let flag = |value: &Option<String>| value.clone().unwrap_or_default();
    GitHubTransport::HttpsVia(ProxyUrls {
        http: flag(&args.http_proxy),
        https: flag(&args.https_proxy),
        no_proxy: flag(&args.no_proxy),
    })
}

/// The legacy controller's GitHub App from the flags, if they name one.
fn legacy_app(args: &RunArgs) -> Result<Option<GitHubCredentials>, String> {
    let (Some(app_id), Some(installation), Some(key_file)) =
        (&args.github_app_id, args.github_app_installation_id, &args.github_app_private_key)
    else {
        if args.github_app_id.is_some() || args.github_app_private_key.is_some() {
            return Err(
                "--github-app-id, --github-app-installation-id and --github-app-private-key go together"
                    .into(),
            );
        }
        return Ok(None);
    };
    let key = std::fs::read_to_string(key_file)
        .map_err(|e| format!("cannot read --github-app-private-key {}: {e}", key_file.display()))?;
    let credentials = GitHubCredentials {
        github_app_id: app_id.clone(),
        github_app_installation_id: installation,
        github_app_private_key: key,
        ..Default::default()
    };
    credentials.client_credentials().map_err(|e| e.to_string())?;
    Ok(Some(credentials))
}

/// The controller families and their settings, from the command line.
fn families(args: &RunArgs) -> Result<Families, String> {
    let reconcilers = if args.controllers.is_empty() {
        ScaleSetReconcilers::default()
    } else {
        ScaleSetReconcilers::only(&args.controllers)?
    };
    let accepted_versions = AcceptedVersions::parse(&args.accepted_versions).map_err(|e| e.to_string())?;
    let scale_set = matches!(args.mode, Mode::ScaleSet | Mode::Both).then(|| ScaleSetSettings {
        controller_namespace: args.controller_namespace.clone(),
        listener_image: args.listener_image.clone(),
        watch_namespace: args.watch_namespace.clone(),
        runner_max_concurrent_reconciles: args.runner_max_concurrent_reconciles,
        reconcilers,
        accepted_versions,
        ..Default::default()
    });
    let github_app = legacy_app(args)?;
    let legacy = matches!(args.mode, Mode::Legacy | Mode::Both).then(|| LegacySettings {
        github_secret_namespace: args.legacy_secret_namespace.clone(),
        github_secret_name: args.legacy_secret_name.clone(),
        github_credentials: github_app,
        watch_namespace: args.watch_namespace.clone(),
        ..Default::default()
    });
    Ok(Families { scale_set, legacy })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_take_host_port_or_port_alone_and_zero_turns_an_endpoint_off() {
        assert_eq!(parse_addr(":8080").unwrap(), Some("0.0.0.0:8080".parse().unwrap()));
        assert_eq!(parse_addr("127.0.0.1:9").unwrap(), Some("127.0.0.1:9".parse().unwrap()));
        assert_eq!(parse_addr("0").unwrap(), None);
        assert!(parse_addr("nowhere").unwrap_err().contains("HOST:PORT"));
    }
}
