//! What runs inside a container: a simulated runner process (scale-set JIT or legacy `config.sh`), the
//! controller's real listener code, or an idle process. Each is a future that ends with an exit code;
//! it watches a cancellation token (SIGTERM) and cleans up at the fake GitHub when killed.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{Container, Pod, Secret};
use kube::Api;
use tokio_util::sync::CancellationToken;

use super::contract::{
    LISTENER_CONFIG_PATH_ENV, LISTENER_PROGRAM, LISTENER_SUBCOMMAND, RUNNER_EPHEMERAL_ENV,
    RUNNER_JIT_CONFIG_ENV, RUNNER_LABELS_ENV, RUNNER_NAME_ENV, RUNNER_TOKEN_ENV,
};
use super::events::KubeletEventKind;
use crate::github::{ConnectRefused, FakeGitHub, JobResult, RunnerSession, SessionEnded};

/// Exit code of a process killed by SIGTERM.
pub const EXIT_SIGTERM: i32 = 143;
/// Exit code of a runner whose version is deprecated (ARC-MODEL §2.4).
pub const EXIT_OUTDATED: i32 = 7;

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
            return Process::LegacyRunner { token, name, labels, ephemeral };
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

/// What a running process has told the kubelet about itself (for kill events).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessState {
    /// The GitHub runner it runs as.
    pub runner_id: Option<i64>,
    /// The job it is running.
    pub running_job: Option<i64>,
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

/// Runs `process` until it exits or `cancel` fires; returns the exit code.
pub async fn run(
    ctx: ProcessContext,
    process: Process,
    input: Option<Vec<u8>>,
    cancel: CancellationToken,
) -> i32 {
    match process {
        Process::ScaleSetRunner { .. } => {
            let jit = String::from_utf8_lossy(&input.unwrap_or_default()).into_owned();
            scale_set_runner(&ctx, &jit, &cancel).await
        }
        Process::LegacyRunner { token, name, labels, ephemeral } => {
            legacy_runner(&ctx, &token, &name, &labels, ephemeral, &cancel).await
        }
        Process::Listener { .. } => match &ctx.listener {
            Some(launch) => launch(ctx.pod.clone(), input.unwrap_or_default(), cancel).await,
            None => idle(&cancel).await,
        },
        Process::Idle => idle(&cancel).await,
    }
}

async fn idle(cancel: &CancellationToken) -> i32 {
    cancel.cancelled().await;
    EXIT_SIGTERM
}

/// A JIT runner: connect; take one job; report it; exit 0. Refused: exit 1 (7 when outdated).
async fn scale_set_runner(ctx: &ProcessContext, jit: &str, cancel: &CancellationToken) -> i32 {
    let session = match ctx.github.connect_runner(jit) {
        Ok(session) => session,
        Err(ConnectRefused::VersionDeprecated) => return EXIT_OUTDATED,
        Err(_) => return 1,
    };
    connected(ctx, &session);
    match serve_jobs(ctx, &session, cancel, true).await {
        Some(code) => code,
        None => EXIT_SIGTERM,
    }
}

/// A legacy runner: `config.sh` with the token (exit 1 when refused), then serve jobs; an ephemeral
/// one exits 0 after its job, a persistent one keeps serving.
async fn legacy_runner(
    ctx: &ProcessContext,
    token: &str,
    name: &str,
    labels: &[String],
    ephemeral: bool,
    cancel: &CancellationToken,
) -> i32 {
    let registration = match ctx.github.legacy_configure(token, name, labels, ephemeral) {
        Ok(registration) => registration,
        Err(e) => {
            (ctx.record)(KubeletEventKind::RegistrationFailed {
                token: token.to_string(),
                reason: e.to_string(),
            });
            return 1;
        }
    };
    let session = match ctx.github.connect_runner(&registration.config) {
        Ok(session) => session,
        Err(ConnectRefused::VersionDeprecated) => return EXIT_OUTDATED,
        Err(_) => return 1,
    };
    connected(ctx, &session);
    serve_jobs(ctx, &session, cancel, ephemeral).await.unwrap_or(EXIT_SIGTERM)
}

fn connected(ctx: &ProcessContext, session: &RunnerSession) {
    ctx.state.lock().expect("process state").runner_id = Some(session.runner_id());
    (ctx.record)(KubeletEventKind::RunnerConnected { runner_id: session.runner_id() });
}

/// Serves jobs until the runner is done (exit code) or the process is killed (`None`, after telling
/// the service the process died).
async fn serve_jobs(
    ctx: &ProcessContext,
    session: &RunnerSession,
    cancel: &CancellationToken,
    once: bool,
) -> Option<i32> {
    loop {
        let job = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                session.process_died();
                return None;
            }
            job = session.next_job() => job,
        };
        let job = match job {
            Ok(job) => job,
            Err(SessionEnded::Removed) => return Some(0),
            Err(_) => return Some(1),
        };
        ctx.state.lock().expect("process state").running_job = Some(job.request_id);
        (ctx.record)(KubeletEventKind::JobStarted {
            runner_id: session.runner_id(),
            request_id: job.request_id,
        });
        let result = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                session.process_died();
                return None;
            }
            () = session.job_ended(job.request_id) => JobResult::Canceled,
            () = tokio::time::sleep(job.duration) => job.planned_result,
        };
        if session.complete_job(result).is_err() {
            return Some(1);
        }
        ctx.state.lock().expect("process state").running_job = None;
        if once {
            return Some(0);
        }
    }
}
