//! The kubelet model against the fake API server and the fake GitHub: pods scheduled, started, run,
//! restarted and killed; runner processes that register, take jobs and die; evictions and crashes.

use std::time::Duration;

use arc_controller::github::wire::JitRunnerSetting;
use arc_controller::github::{ActionsClient, Credentials};
use arc_controller::runtime::metrics::Metrics;
use arc_sim::apiserver::{ApiServerConfig, FakeApiServer};
use arc_sim::faults::FaultPlan;
use arc_sim::github::{EndReason, FakeGitHub, GitHubConfig, JobSpec};
use arc_sim::kubelet::{Kubelet, KubeletConfig, KubeletEventKind, StopCause};
use arc_sim::record::Recorder;
use arc_sim::world::arc_crds;
use arc_sim::{Seed, SimClock, TraceMode};
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::{Value, json};

struct Node {
    apiserver: FakeApiServer,
    github: FakeGitHub,
    kubelet: Kubelet,
    pods: Api<Pod>,
    secrets: Api<Secret>,
    actions: ActionsClient,
}

fn node() -> Node {
    let clock = SimClock::start();
    let trace = Recorder::new(clock, TraceMode::Full);
    let apiserver = FakeApiServer::new(
        Seed(3),
        clock,
        trace.clone(),
        ApiServerConfig::default(),
        &FaultPlan::none(),
        arc_crds(),
    );
    let github_config = GitHubConfig { lost_runner_timeout_ms: 60_000, ..Default::default() };
    let github = FakeGitHub::new(Seed(3), clock, trace.clone(), github_config, &FaultPlan::none()).unwrap();
    let kubelet = Kubelet::start(Seed(3), &apiserver, github.clone(), trace, KubeletConfig::default(), None);
    let client = apiserver.client();
    let actions = ActionsClient::new(
        github.service(),
        "https://github.com/arcsim/app",
        Credentials::Token("ghp_test".into()),
        arc_sim::world::seam::controller_clock(clock),
        Metrics::new(),
    )
    .unwrap();
    Node {
        pods: Api::namespaced(client.clone(), "default"),
        secrets: Api::namespaced(client, "default"),
        apiserver,
        github,
        kubelet,
        actions,
    }
}

fn pod(name: &str, restart: &str, env: Value) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": restart, "containers": [{"name": "runner", "image": "runner:1", "env": env}]}
    }))
    .unwrap()
}

fn jit_pod(name: &str) -> Pod {
    pod(
        name,
        "Never",
        json!([{"name": "ACTIONS_RUNNER_INPUT_JITCONFIG",
        "valueFrom": {"secretKeyRef": {"name": name, "key": "jitToken"}}}]),
    )
}

impl Node {
    fn phase(&self, name: &str) -> Option<String> {
        let pod = self.apiserver.object("pods", "default", name)?;
        pod.pointer("/status/phase").and_then(Value::as_str).map(str::to_string)
    }

    fn events_of(&self, name: &str) -> Vec<KubeletEventKind> {
        let key = format!("default/{name}");
        self.kubelet.events().into_iter().filter(|e| e.pod == key).map(|e| e.kind).collect()
    }

    async fn jit_secret(&self, scale_set: i64, name: &str) -> i64 {
        let setting = JitRunnerSetting { name: name.into(), work_folder: String::new() };
        let jit = self.actions.generate_jit_runner_config(&setting, scale_set).await.unwrap();
        let secret: Secret = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name}, "stringData": {"jitToken": jit.encoded_jit_config}}))
        .unwrap();
        self.secrets.create(&PostParams::default(), &secret).await.unwrap();
        jit.runner.id
    }

    /// Plays the listener: takes the queued jobs for the scale set so the service can assign them.
    async fn acquire_all(&self, scale_set: i64) {
        let session = self.actions.create_message_session(scale_set, "test").await.unwrap();
        let (url, token) = (session.message_queue_url.clone(), session.message_queue_access_token.clone());
        let message = self.actions.get_message(&url, &token, 0, 10).await.unwrap().expect("a job message");
        let jobs = arc_controller::github::JobMessage::parse_batch(&message.body).unwrap();
        let ids: Vec<i64> = jobs.iter().filter_map(|j| j.base().map(|b| b.runner_request_id)).collect();
        self.actions.acquire_jobs(scale_set, &token, &ids).await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_pod_is_bound_started_and_removed_after_a_graceful_delete() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod("idle", "Always", json!([]))).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(n.phase("idle").as_deref(), Some("Running"));
    let stored = n.apiserver.object("pods", "default", "idle").unwrap();
    assert_eq!(stored["spec"]["nodeName"], "arcsim-node-1");
    assert_eq!(stored["status"]["conditions"][3]["status"], "True");
    n.pods.delete("idle", &DeleteParams::default()).await.unwrap();
    assert!(n.apiserver.object("pods", "default", "idle").is_some(), "graceful: still there");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(n.apiserver.object("pods", "default", "idle").is_none());
    let events = n.events_of("idle");
    assert!(events.contains(&KubeletEventKind::PodRemoved), "{events:?}");
    let actors: Vec<String> = n.apiserver.audit().iter().map(|a| a.actor.clone()).collect();
    assert!(actors.iter().filter(|a| *a == "kubelet").count() >= 3, "bind, status, delete: {actors:?}");
}

#[tokio::test(start_paused = true)]
async fn a_jit_runner_takes_one_job_and_its_pod_succeeds() {
    let n = node();
    let scale_set = n.github.create_scale_set("set", 1, &["set"]);
    let runner_id = n.jit_secret(scale_set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    let job = n.github.submit_job(JobSpec::simple(&["set"], 30_000));
    n.acquire_all(scale_set).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(n.phase("r1").as_deref(), Some("Succeeded"));
    let done = n.github.job(job).unwrap();
    assert_eq!(done.runner_id, Some(runner_id));
    assert!(done.is_completed());
    let stopped =
        n.events_of("r1").into_iter().find(|e| matches!(e, KubeletEventKind::ContainerStopped { .. }));
    assert!(matches!(
        stopped,
        Some(KubeletEventKind::ContainerStopped { exit_code: 0, cause: StopCause::Exited, .. })
    ));
}

#[tokio::test(start_paused = true)]
async fn killing_a_busy_runner_loses_its_job_after_the_lost_runner_timeout() {
    let n = node();
    let scale_set = n.github.create_scale_set("set", 1, &["set"]);
    n.jit_secret(scale_set, "r1").await;
    n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
    let job = n.github.submit_job(JobSpec::simple(&["set"], 600_000));
    n.acquire_all(scale_set).await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    n.pods.delete("r1", &DeleteParams::default()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let killed =
        n.events_of("r1").into_iter().find(|e| matches!(e, KubeletEventKind::ContainerStopped { .. }));
    assert!(
        matches!(killed, Some(KubeletEventKind::ContainerStopped { cause: StopCause::PodDeleted, running_job: Some(j), .. }) if j == job),
        "{killed:?}"
    );
    tokio::time::sleep(Duration::from_secs(70)).await;
    assert_eq!(n.github.job(job).unwrap().end_reason(), Some(EndReason::RunnerLost));
}

#[tokio::test(start_paused = true)]
async fn a_container_waits_for_its_missing_secret() {
    let n = node();
    let scale_set = n.github.create_scale_set("set", 1, &["set"]);
    n.pods.create(&PostParams::default(), &jit_pod("late")).await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(n.events_of("late").iter().any(|e| matches!(e, KubeletEventKind::ContainerConfigError { .. })));
    let stored = n.apiserver.object("pods", "default", "late").unwrap();
    assert_eq!(
        stored["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "CreateContainerConfigError"
    );
    n.jit_secret(scale_set, "late").await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(n.events_of("late").iter().any(|e| matches!(e, KubeletEventKind::RunnerConnected { .. })));
}

#[tokio::test(start_paused = true)]
async fn a_legacy_runner_with_an_expired_token_crash_loops() {
    let n = node();
    let token = n.github.issue_registration_token("arcsim/app");
    let env =
        json!([{"name": "RUNNER_TOKEN", "value": token.token}, {"name": "RUNNER_NAME", "value": "legacy"}]);
    tokio::time::sleep(Duration::from_secs(3700)).await;
    n.pods.create(&PostParams::default(), &pod("legacy", "OnFailure", env)).await.unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let failures = n
        .events_of("legacy")
        .into_iter()
        .filter(|e| matches!(e, KubeletEventKind::RegistrationFailed { .. }))
        .count();
    assert!(failures >= 2, "it restarted and failed again: {failures}");
    let stored = n.apiserver.object("pods", "default", "legacy").unwrap();
    assert!(stored["status"]["containerStatuses"][0]["restartCount"].as_u64().unwrap() >= 1);
}

#[tokio::test(start_paused = true)]
async fn an_evicted_pod_fails_with_its_reason_and_a_crash_restarts_the_container() {
    let n = node();
    n.pods.create(&PostParams::default(), &pod("victim", "Never", json!([]))).await.unwrap();
    n.pods.create(&PostParams::default(), &pod("crashy", "Always", json!([]))).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(n.kubelet.evict("default", "victim", "Evicted"));
    assert!(n.kubelet.crash("default", "crashy", 137));
    tokio::time::sleep(Duration::from_secs(20)).await;
    let victim = n.apiserver.object("pods", "default", "victim").unwrap();
    assert_eq!(
        (victim["status"]["phase"].as_str(), victim["status"]["reason"].as_str()),
        (Some("Failed"), Some("Evicted"))
    );
    assert!(
        victim["status"]["containerStatuses"][0]["state"].get("terminated").is_none(),
        "ARC's rule (a) shape"
    );
    let crashy = n.apiserver.object("pods", "default", "crashy").unwrap();
    assert_eq!(crashy["status"]["containerStatuses"][0]["restartCount"], 1);
    assert_eq!(crashy["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"], 137);
    assert_eq!(crashy["status"]["phase"], "Running");
}
