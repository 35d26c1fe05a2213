//! `arcsim stage`: a staging world on wall-clock time for a controller that runs as its own process.
//!
//! It serves the fake API server (ARC's CRDs, the runner and controller namespaces) and the fake
//! GitHub over plain HTTP on loopback, runs the kubelet (runner pods against the fake GitHub;
//! listener pods run the controller's listener entry point in-process, with the same config file a
//! pod mounts), creates the objects a user would (the GitHub config secret with a PAT, an
//! AutoscalingRunnerSet labelled with ARC's chart version 0.14.1 whose `githubConfigUrl` is the fake
//! GitHub's URL, a GitHub Enterprise Server-style `http://` URL), and submits a small workload. It
//! writes a kubeconfig for the API server, prints its path and the GitHub URL, and reports when
//! every job has completed. The controller is not started: run `arc-controller run` with that
//! kubeconfig.
//!
//! Time is the wall clock: the simulated clock starts at the wall-clock time of launch and runs at
//! wall speed, so traces and timestamps are not reproducible here (the seed still fixes names,
//! tokens and the workload's shape).

use super::exit;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use arc_controller::runtime::metrics::Metrics;
use arc_controller::runtime::tasks::AsIs;
use arc_controller::{Clock, GitHubTransport, Inputs, Profile, SystemClock};
use arc_sim::apiserver::{ApiServerConfig, FakeApiServer, tcp};
use arc_sim::faults::FaultPlan;
use arc_sim::github::{Assumed, FakeGitHub, GitHubConfig};
use arc_sim::kubelet::{Kubelet, KubeletConfig};
use arc_sim::record::{Interest, Recorder};
use arc_sim::workload::{Workload, WorkloadConfig};
use arc_sim::{Seed, SimClock, TraceMode};
use arc_world::ClusterBuilder;
use arc_world::{arc_crds, seam};
use serde_json::{Value, json};

use super::listen::check_listen;
use arc_scenarios::scenarios::objects::{
    CONFIG_SECRET, CONTROLLER_NAMESPACE, RUNNER_NAMESPACE, RUNNER_SET, github_secret,
};

/// Options of `arcsim stage`.
#[derive(Debug, Clone, clap::Args)]
pub struct StageArgs {
    /// Address of the fake API server (port 0 picks a free one). The fake GitHub listens on the same
    /// host, on a port of its own.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Where to write the kubeconfig for the fake API server.
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// Listen on a non-loopback address too. The fakes have no authentication: anyone who can reach
    /// them can read and change everything.
    #[arg(long)]
    pub allow_remote: bool,
    /// Seed for names, tokens and the workload's shape.
    #[arg(long, default_value = "1", value_parser = crate::cli::parse_seed)]
    pub seed: Seed,
    /// Jobs in the workload.
    #[arg(long, default_value_t = 6)]
    pub jobs: u32,
    /// maxRunners of the runner set.
    #[arg(long, default_value_t = 3)]
    pub max_runners: u32,
    /// Exit (0) once every job has completed, instead of serving until Ctrl-C.
    #[arg(long)]
    pub exit_when_done: bool,
    /// Give up (exit 1) if the workload has not completed after this many seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout_seconds: u64,
    /// The profile the listener pods run (give the controller the same `--profile`).
    #[arg(long, default_value = "arcsim", value_parser = crate::cli::parse_profile)]
    pub profile: Profile,
    /// Assume this alternative about GitHub, `NAME=ALT` (repeatable; `arcsim list assumptions`).
    #[arg(long = "assume", value_name = "NAME=ALT")]
    pub assume: Vec<String>,
    /// The node (`KubeletConfig`, every field optional): JSON inline or @FILE, e.g.
    /// `{"node_capacity":{"pods":1}}` for room for one pod, or `slow_starts` for slow and failed pulls.
    #[arg(long, value_parser = crate::cli::parse_kubelet)]
    pub kubelet: Option<KubeletConfig>,
}

/// Runs the staging world until Ctrl-C, or until the workload completes with `--exit-when-done`.
pub fn run(args: StageArgs) -> anyhow::Result<()> {
    check_listen(args.listen, args.allow_remote)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(stage(args))
}

/// The staged fakes and their addresses.
struct Staged {
    apiserver: FakeApiServer,
    github: FakeGitHub,
    api_addr: SocketAddr,
    github_url: String,
}

async fn stage(args: StageArgs) -> anyhow::Result<()> {
    let clock = SimClock::start_at(SystemClock.now());
    let record = Recorder::new(clock, TraceMode::HashOnly);
    record.keep_only(Interest::none());
    let staged = serve_fakes(&args, clock, &record).await?;
    let listener = seam::listener_launcher(
        listener_inputs(&staged, clock, args.profile),
        arc_world::ListenerGates::default(),
    );
    let _kubelet = Kubelet::start(
        args.seed,
        &staged.apiserver,
        &arc_sim::net::Links::new(arc_sim::net::Network::InProcess, staged.apiserver.clone()),
        staged.github.clone(),
        record,
        args.kubelet.clone().unwrap_or_default(),
        Some(listener),
    );
    create_objects(&staged, &args).await?;
    write_kubeconfig(&args.kubeconfig, staged.api_addr)?;
    println!("kubeconfig: {}", args.kubeconfig.display());
    println!("api server: http://{}", staged.api_addr);
    println!("github: {}", staged.github_url);
    let workload = Workload::generate(args.seed, &workload_config(args.jobs))
        .map_err(|e| anyhow::anyhow!("workload: {e}"))?;
    println!(
        "ready: {} jobs; start the controller with KUBECONFIG={}",
        workload.jobs().len(),
        args.kubeconfig.display()
    );
    let github = staged.github.clone();
    let submitted = tokio::spawn(async move { workload.run(&github).await });
    let done = wait_for_completion(&staged.github, submitted, args.timeout_seconds).await;
    match done {
        Some(count) => println!("workload complete: {count} jobs"),
        None => {
            return Err(exit::found(format!(
                "the workload did not complete within {} s",
                args.timeout_seconds
            )));
        }
    }
    if !args.exit_when_done {
        println!("serving until Ctrl-C");
        tokio::signal::ctrl_c().await?;
    }
    Ok(())
}

/// Binds both fakes (refusing a remote host unless allowed) and serves them.
async fn serve_fakes(args: &StageArgs, clock: SimClock, record: &Recorder) -> anyhow::Result<Staged> {
    let (api_listener, api_addr) =
        tcp::bind(args.listen).await.map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.listen))?;
    let github_bind = SocketAddr::new(args.listen.ip(), 0);
    let github_listener = tokio::net::TcpListener::bind(github_bind).await?;
    let github_addr = github_listener.local_addr()?;
    let github_url = format!("http://{github_addr}");
    let mut apiserver_config = ApiServerConfig::default();
    apiserver_config.namespaces.extend([RUNNER_NAMESPACE.to_string(), CONTROLLER_NAMESPACE.to_string()]);
    let cluster = ClusterBuilder::new(args.seed)
        .record(record.clone())
        .apiserver(apiserver_config)
        .crds(arc_crds())
        .build();
    let apiserver = cluster.apiserver().clone();
    let mut github_config = GitHubConfig {
        service_url: format!("{github_url}/_services/arcsim/"),
        broker_url: format!("{github_url}/_broker/arcsim/"),
        ..GitHubConfig::default()
    };
    Assumed::parse(args.assume.iter().map(String::as_str))?.apply(&mut github_config);
    let github = FakeGitHub::new(args.seed, clock, record.clone(), github_config, &FaultPlan::none())
        .map_err(|e| anyhow::anyhow!("fake GitHub: {e}"))?;
    tokio::spawn(tcp::serve(apiserver.clone(), api_listener));
    tokio::spawn(arc_sim::github::tcp::serve(github.clone(), github_listener));
    Ok(Staged { apiserver, github, api_addr, github_url })
}

/// What listener pods run with: their own API client, the clock, the fake GitHub in-process, the
/// profile's switches.
fn listener_inputs(staged: &Staged, clock: SimClock, profile: Profile) -> Inputs {
    Inputs {
        client: staged.apiserver.client_as("listener"),
        clock: seam::controller_clock(clock),
        metrics: Metrics::new(),
        github: GitHubTransport::service(staged.github.service()),
        switches: profile.switches(),
        tasks: AsIs::shared(),
    }
}

/// A handful of short jobs arriving over the first half minute.
fn workload_config(jobs: u32) -> WorkloadConfig {
    WorkloadConfig {
        arrivals_per_minute: 20.0,
        burst_probability: 0.0,
        duration_ms_min: 2_000,
        duration_ms_max: 6_000,
        labels: vec![RUNNER_SET.to_string()],
        failure_probability: 0.0,
        cancel_probability: 0.0,
        start_ms: 5_000,
        horizon_ms: 120_000,
        max_jobs: Some(jobs),
        ..WorkloadConfig::default()
    }
}

/// The runner set a user applies, labelled with ARC's chart version and pointing at the fake GitHub.
fn runner_set(github_url: &str, max_runners: u32) -> Value {
    json!({
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "AutoscalingRunnerSet",
        "metadata": {
            "name": RUNNER_SET,
            "namespace": RUNNER_NAMESPACE,
            "labels": {"app.kubernetes.io/version": "0.14.1"}
        },
        "spec": {
            "githubConfigUrl": format!("{github_url}/arcsim"),
            "githubConfigSecret": CONFIG_SECRET,
            "runnerScaleSetName": RUNNER_SET,
            "minRunners": 0,
            "maxRunners": max_runners,
            "template": {"spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:2.330.0", "command": ["/home/runner/run.sh"]}]
            }}
        }
    })
}

async fn create_objects(staged: &Staged, args: &StageArgs) -> anyhow::Result<()> {
    use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
    let client = staged.apiserver.client_as("user");
    for object in [github_secret(RUNNER_NAMESPACE), runner_set(&staged.github_url, args.max_runners)] {
        let api_version = object["apiVersion"].as_str().unwrap_or_default().to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        let plural = if kind == "Secret" { "secrets" } else { "autoscalingrunnersets" };
        let resource =
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, &kind), plural);
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), RUNNER_NAMESPACE, &resource);
        let object: DynamicObject = serde_json::from_value(object)?;
        api.create(&PostParams::default(), &object)
            .await
            .map_err(|e| anyhow::anyhow!("creating {kind}: {e}"))?;
    }
    Ok(())
}

/// A kubeconfig with one cluster at `http://addr`, no credentials (the fake has no authentication).
fn write_kubeconfig(path: &std::path::Path, addr: SocketAddr) -> anyhow::Result<()> {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: arcsim-stage\n  cluster:\n    server: http://{addr}\n\
         contexts:\n- name: arcsim-stage\n  context:\n    cluster: arcsim-stage\n    user: arcsim-stage\n    \
         namespace: {CONTROLLER_NAMESPACE}\ncurrent-context: arcsim-stage\nusers:\n- name: arcsim-stage\n  user: {{}}\n"
    );
    std::fs::write(path, text).map_err(|e| exit::usage(format!("cannot write {}: {e}", path.display())))
}

/// Waits until the workload has submitted every job and every job has completed: the number of
/// jobs, or `None` after `timeout_seconds`.
async fn wait_for_completion(
    github: &FakeGitHub,
    submitted: tokio::task::JoinHandle<Vec<i64>>,
    timeout_seconds: u64,
) -> Option<usize> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout_seconds); // allow-nondeterminism: tokio clock, wall time in staging
    let submitted = tokio::time::timeout_at(deadline, submitted).await.ok()?.ok()?;
    let mut last_report = 0;
    loop {
        let jobs = github.jobs();
        let completed = jobs.iter().filter(|j| j.is_completed()).count();
        if completed != last_report {
            println!("jobs completed: {completed}/{}", submitted.len());
            last_report = completed;
        }
        if completed == submitted.len() && jobs.len() == submitted.len() {
            return Some(completed);
        }
        let now = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, wall time in staging
        if now >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubeconfig_points_at_the_api_server_over_plain_http() {
        let dir = std::env::temp_dir().join(format!("arcsim-stage-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("kubeconfig");
        write_kubeconfig(&path, "127.0.0.1:6443".parse().unwrap()).unwrap();
        let config = kube::config::Kubeconfig::read_from(&path).expect("kube reads the kubeconfig");
        assert_eq!(config.current_context.as_deref(), Some("arcsim-stage"));
        let cluster = config.clusters[0].cluster.as_ref().expect("a cluster");
        assert_eq!(cluster.server.as_deref(), Some("http://127.0.0.1:6443"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_runner_set_is_labelled_with_arcs_chart_version_and_points_at_the_fake() {
        let ars = runner_set("http://127.0.0.1:7000", 3);
        assert_eq!(ars["metadata"]["labels"]["app.kubernetes.io/version"], "0.14.1");
        assert_eq!(ars["spec"]["githubConfigUrl"], "http://127.0.0.1:7000/arcsim");
    }
}
