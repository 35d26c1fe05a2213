//! `arc-controller run`: the controller against a real cluster (kubeconfig or in-cluster) and GitHub,
//! until SIGTERM or Ctrl-C.

use std::sync::Arc;

use arc_controller::legacy::LegacySettings;
use arc_controller::runtime::client_limit::ClientRateLimitLayer;
use arc_controller::runtime::metrics::Metrics;
use arc_controller::scaleset::{ScaleSetReconcilers, ScaleSetSettings};
use arc_controller::{Families, GitHubTransport, Inputs, SystemClock};

use super::switch_args::SwitchArgs;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Which controllers to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// AutoscalingRunnerSet, EphemeralRunnerSet, EphemeralRunner, AutoscalingListener.
    ScaleSet,
    /// The legacy Runner controller.
    Legacy,
    /// Both families.
    Both,
}

/// Options of `arc-controller run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
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
    /// Image of the listener pods.
    #[arg(long, default_value = "ghcr.io/actions/gha-runner-scale-set-controller:0.13.1")]
    pub listener_image: String,
    /// Kubernetes client requests per second.
    #[arg(long, default_value_t = 20.0)]
    pub qps: f64,
    /// Kubernetes client burst.
    #[arg(long, default_value_t = 30)]
    pub burst: u32,
    /// Run only these scale-set controllers (repeatable; default all): `autoscalingrunnerset`,
    /// `ephemeralrunnerset`, `ephemeralrunner`, `autoscalinglistener`.
    #[arg(long = "controllers", value_name = "NAME", value_delimiter = ',')]
    pub controllers: Vec<String>,
    /// The profile and switch changes.
    #[command(flatten)]
    pub switches: SwitchArgs,
    /// Namespace of the legacy controller's GitHub secret.
    #[arg(long, default_value = "actions-runner-system")]
    pub legacy_secret_namespace: String,
    /// Name of the legacy controller's GitHub secret (key `github_token`).
    #[arg(long, default_value = "controller-manager")]
    pub legacy_secret_name: String,
}

/// Runs the controllers until a stop signal.
pub async fn run(args: RunArgs, cancel: tokio_util::sync::CancellationToken) -> Result<(), BoxError> {
    let families = families(&args)?;
    let config = kube::Config::infer().await?;
    let client = kube::client::ClientBuilder::try_from(config)?
        .with_layer(&ClientRateLimitLayer::new(args.qps, args.burst))
        .build();
    let inputs = Inputs {
        client,
        clock: Arc::new(SystemClock),
        metrics: Metrics::new(),
        github: GitHubTransport::Https,
        switches: args.switches.switches()?,
    };
    let mut manager = arc_controller::start(&inputs, &families);
    tracing::info!(
        families = families.name(),
        profile = %args.switches.profile,
        switches = ?inputs.switches,
        "controllers started; waiting for caches"
    );
    if manager.wait_for_cache_sync().await {
        tracing::info!("caches synced");
    }
    cancel.cancelled().await;
    tracing::info!("stopping");
    manager.shutdown().await;
    tracing::info!(metrics = %inputs.metrics.render(), "final metrics");
    Ok(())
}

/// The controller families and their settings, from the command line.
fn families(args: &RunArgs) -> Result<Families, String> {
    let reconcilers = if args.controllers.is_empty() {
        ScaleSetReconcilers::default()
    } else {
        ScaleSetReconcilers::only(&args.controllers)?
    };
    let scale_set = matches!(args.mode, Mode::ScaleSet | Mode::Both).then(|| ScaleSetSettings {
        controller_namespace: args.controller_namespace.clone(),
        listener_image: args.listener_image.clone(),
        watch_namespace: args.watch_namespace.clone(),
        runner_max_concurrent_reconciles: args.runner_max_concurrent_reconciles,
        reconcilers,
        ..Default::default()
    });
    let legacy = matches!(args.mode, Mode::Legacy | Mode::Both).then(|| LegacySettings {
        github_secret_namespace: args.legacy_secret_namespace.clone(),
        github_secret_name: args.legacy_secret_name.clone(),
        watch_namespace: args.watch_namespace.clone(),
        ..Default::default()
    });
    Ok(Families { scale_set, legacy })
}
