//! `arc-controller`: the controller binary.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use arc_controller::crd::constants::ENV_LISTENER_CONFIG_PATH;
use arc_controller::runtime::kube_client::KubeClientLayer;
use arc_controller::runtime::metrics::Metrics;
use arc_controller::runtime::tasks::AsIs;
use arc_controller::scaleset::listener;
use arc_controller::scaleset::resource_builder::ListenerConfig;
use arc_controller::{GitHubTransport, Inputs, Switches, SystemClock};
use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

mod cmd;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The actions-runner-controller re-implementation that arcsim tests.
#[derive(Debug, Parser)]
#[command(name = "arc-controller", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the controllers against the cluster of the kubeconfig (or in-cluster) and GitHub, until
    /// SIGTERM.
    Run(Box<cmd::run::RunArgs>),
    /// Print the five CustomResourceDefinitions as multi-document YAML (`kubectl apply -f -`).
    Crds,
    /// Run one scale set's listener: hold its message session and scale its EphemeralRunnerSet,
    /// until SIGTERM.
    Listener {
        /// The listener config file (ARC: `/etc/gha-listener/config.json`); defaults to
        /// `$LISTENER_CONFIG_PATH`.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Optimisations to switch off (the listener's part of the switches: which listener, and the
        /// Running write); the rest is the fixed controller's.
        #[command(flatten)]
        switches: cmd::switch_args::SwitchArgs,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Run(args)) => run_controllers(*args),
        Some(Command::Crds) => print_crds(),
        Some(Command::Listener { config, switches }) => run_listener(config, &switches),
        None => {
            eprintln!(
                "arc-controller: no subcommand; try `arc-controller run`, `listener` or `crds` (see --help)"
            );
            ExitCode::FAILURE
        }
    }
}

fn print_crds() -> ExitCode {
    print!("{}", arc_controller::crd::MANIFESTS);
    ExitCode::SUCCESS
}

/// `arc-controller run`: the controllers on a multi-threaded runtime until a stop signal.
fn run_controllers(args: cmd::run::RunArgs) -> ExitCode {
    init_tracing("info");
    let cancel = CancellationToken::new();
    let result =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(BoxError::from).and_then(
            |runtime| {
                runtime.block_on(async {
                    tokio::spawn(cancel_on_signal(cancel.clone()));
                    cmd::run::run(args, cancel).await
                })
            },
        );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("arc-controller run: {err}");
            ExitCode::FAILURE
        }
    }
}

/// `arc-controller listener`: reads the config, then runs the listener on a tokio runtime until
/// SIGTERM or a failure (exit 1, as ARC's listener exits so that its pod is recreated).
fn run_listener(config_path: Option<PathBuf>, switch_args: &cmd::switch_args::SwitchArgs) -> ExitCode {
    let read = read_listener_config(config_path).and_then(|c| Ok((c, switch_args.switches()?)));
    let (config, switches) = match read {
        Ok(read) => read,
        Err(err) => {
            eprintln!("arc-controller listener: {err}");
            return ExitCode::FAILURE;
        }
    };
    init_tracing(&config.log_level);
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(BoxError::from)
        .and_then(|runtime| runtime.block_on(listen(config, switches)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!(%err, "listener exited with an error");
            ExitCode::FAILURE
        }
    }
}

fn read_listener_config(path: Option<PathBuf>) -> Result<ListenerConfig, BoxError> {
    let path = path
        .or_else(|| std::env::var_os(ENV_LISTENER_CONFIG_PATH).map(PathBuf::from))
        .ok_or_else(|| format!("no config file: pass --config or set {ENV_LISTENER_CONFIG_PATH}"))?;
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    ListenerConfig::from_json(&bytes).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// Logs to stderr at the config's level (`RUST_LOG` overrides it).
fn init_tracing(level: &str) {
    let level = if level.is_empty() { "info" } else { level };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(level))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}

async fn listen(config: ListenerConfig, switches: Switches) -> Result<(), BoxError> {
    let inputs = Inputs {
        client: KubeClientLayer::client_go_defaults().infer().await?,
        clock: Arc::new(SystemClock),
        metrics: Metrics::new(),
        github: GitHubTransport::Https,
        switches,
        tasks: AsIs::shared(),
    };
    let cancel = CancellationToken::new();
    tokio::spawn(cancel_on_signal(cancel.clone()));
    listener::run(config, &inputs, hostname().as_deref(), cancel).await?;
    Ok(())
}

/// The pod's hostname (its name), the session owner ARC uses.
fn hostname() -> Option<String> {
    let from_env = std::env::var("HOSTNAME").ok();
    let from_file = || std::fs::read_to_string("/etc/hostname").ok();
    from_env.or_else(from_file).map(|name| name.trim().to_string()).filter(|name| !name.is_empty())
}

/// Cancels `cancel` on SIGTERM (what the kubelet sends) or Ctrl-C.
async fn cancel_on_signal(cancel: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    biased;
                    _ = terminate.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(err) => {
                tracing::warn!(%err, "cannot listen for SIGTERM; stopping on Ctrl-C only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("stop signal received; stopping");
    cancel.cancel();
}
