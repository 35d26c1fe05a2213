//! What runs inside a container: a simulated runner process (scale-set JIT or legacy `config.sh`,
//! [`runner`]), the controller's real listener code, or an idle process. Each is a future that
//! ends with an exit code; SIGTERM is a cancellation token the process handles as its image does, and
//! SIGKILL is the kubelet dropping the future (and the connection the process held, [`ProcessState`]).

pub mod config_sh;
pub mod github_http;
pub mod lost_registration;
pub mod runner;
pub mod session;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Container, Pod, Secret};
use kube::Api;
use tokio_util::sync::CancellationToken;

use super::contract::{
    LISTENER_CONFIG_PATH_ENV, LISTENER_PROGRAM, LISTENER_SUBCOMMAND, RUNNER_ENTERPRISE_ENV,
    RUNNER_EPHEMERAL_ENV, RUNNER_GITHUB_URL_ENV, RUNNER_JIT_CONFIG_ENV, RUNNER_LABELS_ENV, RUNNER_NAME_ENV,
    RUNNER_ORG_ENV, RUNNER_REPO_ENV, RUNNER_TOKEN_ENV,
};
use super::events::KubeletEventKind;
use crate::github::{FakeGitHub, RunnerSession};
use runner::Shutdown;

/// Exit code of a process that dies of SIGTERM (128 + 15).
pub const EXIT_SIGTERM: i32 = 143;
/// Exit code of a runner whose version is deprecated (ARC-MODEL §2.4).
pub const EXIT_OUTDATED: i32 = 7;
/// Exit code of a process killed by SIGKILL (128 + 9).
pub const EXIT_SIGKILL: i32 = 137;

/// What a container runs, decided from its spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Process {
    /// A scale-set runner: connects with the JIT config from a secret key.
    ScaleSetRunner {
        /// Secret holding the JIT config.
        secret: String,
        /// Its key.
        key: String,
    },
    /// A legacy runner: `config.sh` with a registration token, then `run.sh`.
    LegacyRunner {
        /// `RUNNER_TOKEN`.
        token: String,
        /// `RUNNER_NAME`.
        name: String,
        /// `RUNNER_LABELS`.
        labels: Vec<String>,
        /// `RUNNER_EPHEMERAL`.
        ephemeral: bool,
        /// `config.sh --url`: `GITHUB_URL` and the org, repository or enterprise.
        url: String,
    },
    /// The listener image: the world's listener (the controller's own entry point) with the config
    /// file from a mounted secret.
    Listener {
        /// The config secret.
        secret: String,
        /// Its key.
        key: String,
    },
    /// Anything else: runs until killed.
    Idle,
}

impl Process {
    /// Classifies `container` of `pod`.
    pub fn of(pod: &Pod, container: &Container) -> Process {
        let env = container.env.clone().unwrap_or_default();
        let plain = |name: &str| env.iter().find(|e| e.name == name).and_then(|e| e.value.clone());
        if let Some(key_ref) = env
            .iter()
            .find(|e| e.name == RUNNER_JIT_CONFIG_ENV)
            .and_then(|e| e.value_from.as_ref())
            .and_then(|v| v.secret_key_ref.as_ref())
        {
            return Process::ScaleSetRunner { secret: key_ref.name.clone(), key: key_ref.key.clone() };
        }
        if let Some(token) = plain(RUNNER_TOKEN_ENV) {
            let name = plain(RUNNER_NAME_ENV).or_else(|| pod.metadata.name.clone()).unwrap_or_default();
            let labels = plain(RUNNER_LABELS_ENV)
                .map(|l| l.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect())
                .unwrap_or_default();
            let ephemeral = plain(RUNNER_EPHEMERAL_ENV).is_some_and(|e| e == "true");
            let url = registration_url(&plain);
            return Process::LegacyRunner { token, name, labels, ephemeral, url };
        }
        if let Some((secret, key)) = plain(LISTENER_CONFIG_PATH_ENV)
            .filter(|_| runs_the_listener(container))
            .and_then(|path| mounted_file(pod, container, &path))
        {
            return Process::Listener { secret, key };
        }
        Process::Idle
    }
}

/// `config.sh --url` as `runner/startup.sh` builds it: `GITHUB_URL` (default `https://github.com/`)
/// followed by the org, else the repository, else `enterprises/<enterprise>`.
fn registration_url(plain: &dyn Fn(&str) -> Option<String>) -> String {
    let given = |name| plain(name).filter(|v: &String| !v.is_empty());
    let base = given(RUNNER_GITHUB_URL_ENV).unwrap_or_else(|| "https://github.com/".to_string());
    let attach = given(RUNNER_ORG_ENV)
        .or_else(|| given(RUNNER_REPO_ENV))
        .or_else(|| given(RUNNER_ENTERPRISE_ENV).map(|e| format!("enterprises/{e}")))
        .unwrap_or_default();
    format!("{}/{attach}", base.trim_end_matches('/'))
}

/// Whether `container` runs `…/arc-controller listener` (command, then args).
fn runs_the_listener(container: &Container) -> bool {
    let argv: Vec<&str> =
        container.command.iter().chain(&container.args).flatten().map(String::as_str).collect();
    let program = argv.first().is_some_and(|p| p.rsplit('/').next() == Some(LISTENER_PROGRAM));
    program && argv.get(1) == Some(&LISTENER_SUBCOMMAND)
}

/// The secret and key behind file `path` of `container`: a secret volume mounted at a directory that
/// holds the file (the file's name is the key).
fn mounted_file(pod: &Pod, container: &Container, path: &str) -> Option<(String, String)> {
    let (dir, file) = path.rsplit_once('/')?;
    let mount =
        container.volume_mounts.as_ref()?.iter().find(|m| m.mount_path.trim_end_matches('/') == dir)?;
    let volumes = pod.spec.as_ref()?.volumes.as_ref()?;
    let secret = volumes.iter().find(|v| v.name == mount.name)?.secret.as_ref()?.secret_name.clone()?;
    Some((secret, file.to_string()))
}

/// Runs a listener pod's process: given the pod's name (its hostname), the config file's bytes and
/// the pod's cancellation token (SIGTERM), resolves to the process's exit code. The world supplies it.
pub type ListenerLauncher =
    Arc<dyn Fn(String, Vec<u8>, CancellationToken) -> BoxFuture<'static, i32> + Send + Sync>;

/// What a running process has told the kubelet about itself (for kill events), and the connection a
/// SIGKILL drops.
#[derive(Debug, Clone, Default)]
pub struct ProcessState {
    /// The GitHub runner it runs as.
    pub runner_id: Option<i64>,
    /// The job it is running (kept when a shutdown canceled it).
    pub running_job: Option<i64>,
    /// Its runner session while connected.
    pub session: Option<RunnerSession>,
}

impl ProcessState {
    /// SIGKILL: the process is gone without a word; its connection to GitHub drops where it stands.
    pub fn killed(&mut self) {
        if let Some(session) = self.session.take() {
            session.process_died();
        }
    }
}

/// Everything a process needs from the world.
#[derive(Clone)]
pub struct ProcessContext {
    /// The fake GitHub.
    pub github: FakeGitHub,
    /// The kubelet's API client (reads mounted secrets).
    pub client: kube::Client,
    /// Namespace of the pod.
    pub namespace: String,
    /// Name of the pod (its hostname).
    pub pod: String,
    /// The listener launcher, when the world runs listeners.
    pub listener: Option<ListenerLauncher>,
    /// Where the process reports its runner and job.
    pub state: Arc<Mutex<ProcessState>>,
    /// Records a kubelet event for this pod.
    pub record: Arc<dyn Fn(KubeletEventKind) + Send + Sync>,
    /// How long a runner takes to shut down after SIGTERM.
    pub shutdown: Shutdown,
    /// A runner's boot before it reaches GitHub (zero unless the node starts slowly).
    pub boot: std::time::Duration,
    /// Whether the runner creates its session over the fake GitHub's HTTP interface ([`session`]).
    pub sessions_over_http: bool,
    /// Whether this runner process hangs once its job ends (`KubeletConfig::runner_hang_percent`).
    pub hangs_after_job: bool,
    /// The run's schedule, at a runner's steps.
    pub schedule: crate::schedule::Scheduler,
    /// The run's seed: a runner draws what it alone needs from a stream of its own.
    pub seed: crate::seed::Seed,
    /// The name of this process's own streams (its pod's uid and the container's start).
    pub stream: String,
}

/// Why a container could not start (the kubelet retries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

/// Reads `key` of secret `name`: what a kubelet does for env `valueFrom` and secret volumes.
pub async fn read_secret_key(ctx: &ProcessContext, name: &str, key: &str) -> Result<Vec<u8>, ConfigError> {
    let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &ctx.namespace);
    let secret = secrets.get_opt(name).await.map_err(|e| ConfigError(format!("secret {name}: {e}")))?;
    let secret = secret.ok_or_else(|| ConfigError(format!("secret \"{name}\" not found")))?;
    let value = secret.data.unwrap_or_default().remove(key);
    value
        .map(|v| v.0)
        .ok_or_else(|| ConfigError(format!("couldn't find key {key} in Secret {}/{name}", ctx.namespace)))
}

/// Resolves what the process needs before it can start (its secrets), so a missing secret keeps the
/// container waiting rather than failing it.
pub async fn prepare(ctx: &ProcessContext, process: &Process) -> Result<Option<Vec<u8>>, ConfigError> {
    match process {
        Process::ScaleSetRunner { secret, key } | Process::Listener { secret, key } => {
            read_secret_key(ctx, secret, key).await.map(Some)
        }
        Process::LegacyRunner { .. } | Process::Idle => Ok(None),
    }
}

/// Runs `process` until it exits (SIGTERM is `sigterm` firing); returns the exit code.
pub async fn run(
    ctx: ProcessContext,
    process: Process,
    input: Option<Vec<u8>>,
    sigterm: CancellationToken,
) -> i32 {
    match process {
        Process::ScaleSetRunner { .. } => {
            let jit = String::from_utf8_lossy(&input.unwrap_or_default()).into_owned();
            runner::scale_set_runner(&ctx, &jit, &sigterm).await
        }
        Process::LegacyRunner { token, name, labels, ephemeral, url } => {
            let args = config_sh::ConfigArgs { token, name, labels, ephemeral, url };
            runner::legacy_runner(&ctx, &args, &sigterm).await
        }
        Process::Listener { .. } => match &ctx.listener {
            Some(launch) => launch(ctx.pod.clone(), input.unwrap_or_default(), sigterm).await,
            None => idle(&sigterm).await,
        },
        Process::Idle => idle(&sigterm).await,
    }
}

/// A process with no behaviour of its own: runs until signalled, and dies of SIGTERM (143).
async fn idle(sigterm: &CancellationToken) -> i32 {
    sigterm.cancelled().await;
    EXIT_SIGTERM
}
