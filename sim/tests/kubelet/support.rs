//! The node harness: a fake API server, a fake GitHub and a kubelet on one paused runtime, with the
//! clients a test needs to play the user and the listener.

use arc_controller::github::wire::JitRunnerSetting;
use arc_controller::github::{ActionsClient, Credentials};
use arc_controller::runtime::metrics::Metrics;
use arc_sim::apiserver::{ApiServerConfig, Committed, FakeApiServer, LagRange};
use arc_sim::faults::FaultPlan;
use arc_sim::github::{FakeGitHub, GitHubConfig, GitHubEvent};
use arc_sim::kubelet::{Kubelet, KubeletConfig, KubeletEventKind};
use arc_sim::record::Recorder;
use arc_sim::{Seed, SimClock, TraceMode};
use arc_world::arc_crds;
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::Api;
use kube::api::PostParams;
use serde_json::{Value, json};

pub(super) struct Node {
    pub apiserver: FakeApiServer,
    pub github: FakeGitHub,
    pub kubelet: Kubelet,
    pub record: Recorder,
    pub clock: SimClock,
    pub pods: Api<Pod>,
    pub secrets: Api<Secret>,
    pub actions: ActionsClient,
}

/// What a node is built from; `Setup::default()` is seed 3, every default, a 60 s lost-runner timeout.
pub(super) struct Setup {
    pub seed: u64,
    pub kubelet: KubeletConfig,
    pub github: GitHubConfig,
    pub faults: FaultPlan,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            seed: 3,
            kubelet: KubeletConfig::default(),
            github: GitHubConfig { lost_runner_timeout_ms: 60_000, ..Default::default() },
            faults: FaultPlan::none(),
        }
    }
}

/// A kubelet whose runners reach GitHub over HTTP, with short fixed delays (the HTTP tests' node).
pub(super) fn http_kubelet() -> KubeletConfig {
    KubeletConfig {
        pod_watch_lag: LagRange::fixed(100),
        scheduling_delay: LagRange::fixed(100),
        sandbox_delay: LagRange::fixed(100),
        start_delay: LagRange::fixed(1_000),
        runner_sessions_over_http: true,
        ..KubeletConfig::default()
    }
}

pub(super) fn node() -> Node {
    node_with(Setup::default())
}

pub(super) fn node_with(setup: Setup) -> Node {
    let clock = SimClock::start();
    let record = Recorder::new(clock, TraceMode::Full);
    let seed = Seed(setup.seed);
    let apiserver = FakeApiServer::new(
        seed,
        clock,
        record.clone(),
        ApiServerConfig::default(),
        &setup.faults,
        arc_crds(),
    );
    let github = FakeGitHub::new(seed, clock, record.clone(), setup.github, &setup.faults).unwrap();
    let kubelet = Kubelet::start(
        seed,
        &apiserver,
        &arc_sim::net::Links::new(arc_sim::net::Network::InProcess, apiserver.clone()),
        github.clone(),
        record.clone(),
        setup.kubelet,
        None,
    );
    let client = apiserver.client_as("user");
    let actions = ActionsClient::new(
        github.service(),
        "https://github.com/arcsim/app",
        Credentials::Token("ghp_test".into()),
        arc_world::seam::controller_clock(clock),
        Metrics::new(),
    )
    .unwrap();
    Node {
        pods: Api::namespaced(client.clone(), "default"),
        secrets: Api::namespaced(client, "default"),
        apiserver,
        github,
        kubelet,
        record,
        clock,
        actions,
    }
}

pub(super) fn pod(name: &str, restart: &str, env: Value) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": restart, "containers": [{"name": "runner", "image": "runner:1", "env": env}]}
    }))
    .unwrap()
}

pub(super) fn jit_pod(name: &str) -> Pod {
    pod(
        name,
        "Never",
        json!([{"name": "ACTIONS_RUNNER_INPUT_JITCONFIG",
        "valueFrom": {"secretKeyRef": {"name": name, "key": "jitToken"}}}]),
    )
}

/// A JIT runner pod with a grace period of `seconds`.
pub(super) fn jit_pod_with_grace(name: &str, seconds: i64) -> Pod {
    let mut pod = jit_pod(name);
    pod.spec.as_mut().unwrap().termination_grace_period_seconds = Some(seconds);
    pod
}

impl Node {
    pub(super) fn now_ms(&self) -> u64 {
        self.clock.elapsed_ms()
    }

    pub(super) fn phase(&self, name: &str) -> Option<String> {
        let pod = self.apiserver.object("pods", "default", name)?;
        pod.pointer("/status/phase").and_then(Value::as_str).map(str::to_string)
    }

    pub(super) fn events_of(&self, name: &str) -> Vec<KubeletEventKind> {
        self.timed_events_of(name).into_iter().map(|(_, e)| e).collect()
    }

    /// The kubelet's events for pod `name`, with their sim ms.
    pub(super) fn timed_events_of(&self, name: &str) -> Vec<(u64, KubeletEventKind)> {
        let key = format!("default/{name}");
        self.kubelet.events().into_iter().filter(|e| e.pod == key).map(|e| (e.ms, e.kind)).collect()
    }

    /// When the kubelet first recorded an event matching `pick` for pod `name`.
    pub(super) fn first(&self, name: &str, pick: impl Fn(&KubeletEventKind) -> bool) -> Option<u64> {
        self.timed_events_of(name).into_iter().find(|(_, e)| pick(e)).map(|(ms, _)| ms)
    }

    /// Every committed version of pod `name`, in order.
    pub(super) fn versions(&self, name: &str) -> Vec<Value> {
        self.record
            .events_of::<Committed>()
            .into_iter()
            .filter(|(_, c)| c.resource == "pods")
            .map(|(_, c)| (*c.change.object).clone())
            .filter(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
            .collect()
    }

    /// The fake GitHub's events, with their sim ms.
    pub(super) fn github_events(&self) -> Vec<GitHubEvent> {
        self.record.events_of::<GitHubEvent>().into_iter().map(|(_, e)| e).collect()
    }

    pub(super) async fn jit_secret(&self, scale_set: i64, name: &str) -> i64 {
        let setting = JitRunnerSetting { name: name.into(), work_folder: String::new() };
        let jit = self.actions.generate_jit_runner_config(&setting, scale_set).await.unwrap();
        let secret: Secret = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name}, "stringData": {"jitToken": jit.encoded_jit_config}}))
        .unwrap();
        self.secrets.create(&PostParams::default(), &secret).await.unwrap();
        jit.runner.id
    }

    /// Plays the listener: takes the queued jobs for the scale set so the service can assign them.
    pub(super) async fn acquire_all(&self, scale_set: i64) {
        let session = self.actions.create_message_session(scale_set, "test").await.unwrap();
        let (url, token) = (session.message_queue_url.clone(), session.message_queue_access_token.clone());
        let message = self.actions.get_message(&url, &token, 0, 10).await.unwrap().expect("a job message");
        let jobs = arc_controller::github::JobMessage::parse_batch(&message.body).unwrap();
        let ids: Vec<i64> = jobs.iter().filter_map(|j| j.base().map(|b| b.runner_request_id)).collect();
        self.actions.acquire_jobs(scale_set, &token, &ids).await.unwrap();
        self.actions.delete_message_session(scale_set, &session.session_id).await.unwrap();
    }
}

/// The condition of type `kind` in a pod's status.
pub(super) fn condition<'a>(pod: &'a Value, kind: &str) -> Option<&'a Value> {
    pod.pointer("/status/conditions")?.as_array()?.iter().find(|c| c["type"] == kind)
}
