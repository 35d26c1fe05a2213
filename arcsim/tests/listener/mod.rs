//! The listener (ARC-MODEL §4, §5.2) against the fake API server and the fake GitHub: the
//! EphemeralRunnerSet and EphemeralRunners are created by each test (no controllers run), jobs are
//! submitted to the fake GitHub, and runner processes connect with JIT configs where a job must
//! start. Each test runs the production `Listener` and reads the outcome from the fakes.

use std::time::Duration;

use arc_controller::crd::{EphemeralRunner, EphemeralRunnerSet};
use arc_controller::github::wire::JitRunnerSetting;
use arc_controller::github::{ActionsClient, ActionsError, Credentials};
use arc_controller::runtime::metrics::API_CALLS_TOTAL;
use arc_controller::scaleset::listener::{CancellationToken, Listener, ListenerError, SessionConflictPolicy};
use arc_controller::scaleset::resource_builder::{GitHubCredentials, ListenerConfig};
use arc_sim::faults::{ApiFault, ApiFaultAction, ApiVerb};
use arc_sim::github::Operation;
use arc_sim::github::{JobSpec, JobState, RunnerSession};
use futures::{FutureExt, StreamExt};
use kube::api::{DeleteParams, PostParams};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::support::fixtures::{CONFIG_SECRET, CONFIG_URL, runner_template};
use crate::support::{Harness, HarnessBuilder, RUNNER_NS};

/// Name of the scale set, its EphemeralRunnerSet and its job label.
const SET: &str = "arc";
/// Long enough for any message to be handled, short of the fake's 50 s long poll.
const SOON: Duration = Duration::from_secs(10);
/// Long enough for a long poll to end with 202.
const AFTER_A_POLL: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

fn listener_config(scale_set_id: i64, min_runners: i32, max_runners: i32) -> ListenerConfig {
    ListenerConfig {
        configure_url: CONFIG_URL.into(),
        github_config_secret: CONFIG_SECRET.into(),
        credentials: GitHubCredentials { github_token: "ghp_arcsim".into(), ..Default::default() },
        ephemeral_runner_set_namespace: RUNNER_NS.into(),
        ephemeral_runner_set_name: SET.into(),
        max_runners,
        min_runners,
        runner_scale_set_id: scale_set_id,
        runner_scale_set_name: SET.into(),
        log_level: "debug".into(),
        log_format: "text".into(),
        server_root_ca: String::new(),
    }
}

/// The production GitHub client over the harness's (scripted) fake.
fn github_client(h: &Harness) -> ActionsClient {
    let token = Credentials::Token("ghp_arcsim".into());
    ActionsClient::new(h.script.clone(), CONFIG_URL, token, h.ctx.clock.clone(), h.metrics.clone())
        .expect("a valid client")
}

/// A running listener task.
struct Running {
    cancel: CancellationToken,
    task: JoinHandle<Result<(), ListenerError>>,
}

impl Running {
    /// Cancels the listener and waits for it to return.
    async fn stop(self) -> Result<(), ListenerError> {
        self.cancel.cancel();
        self.task.await.expect("the listener task does not panic")
    }

    /// Waits for the listener to return on its own.
    async fn exit(self) -> Result<(), ListenerError> {
        self.task.await.expect("the listener task does not panic")
    }
}

fn start(h: &Harness, config: ListenerConfig, owner: &str, policy: SessionConflictPolicy) -> Running {
    let listener = Listener::new(
        config,
        h.client.clone(),
        github_client(h),
        h.ctx.clock.clone(),
        h.metrics.clone(),
        h.ctx.switches,
    )
    .expect("a valid listener")
    .with_session_owner(owner)
    .with_session_conflict_policy(policy);
    let cancel = CancellationToken::new();
    let task = tokio::spawn(listener.run(cancel.clone()));
    Running { cancel, task }
}

/// A scale set at the fake GitHub and its EphemeralRunnerSet, left by an earlier listener at
/// `replicas: 5, patchID: 99` so the first patch shows. Returns the scale set id.
async fn scale_set_with_runner_set(h: &Harness) -> i64 {
    let scale_set_id = h.scale_set(SET);
    let mut runner_spec = serde_json::to_value(runner_template()).expect("a template");
    runner_spec["githubConfigUrl"] = json!(CONFIG_URL);
    runner_spec["githubConfigSecret"] = json!(CONFIG_SECRET);
    runner_spec["runnerScaleSetId"] = json!(scale_set_id);
    let ers = json!({
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "EphemeralRunnerSet",
        "metadata": {"name": SET, "namespace": RUNNER_NS},
        "spec": {"replicas": 5, "patchID": 99, "ephemeralRunnerSpec": runner_spec}
    });
    let ers: EphemeralRunnerSet = serde_json::from_value(ers).expect("a valid runner set");
    h.api(RUNNER_NS).create(&PostParams::default(), &ers).await.expect("the runner set is created");
    scale_set_id
}

/// `(spec.replicas, spec.patchID)` of the EphemeralRunnerSet now.
fn runner_set_spec(h: &Harness) -> (i64, i64) {
    let ers = h.object("ephemeralrunnersets", RUNNER_NS, SET).expect("the runner set exists");
    (ers["spec"]["replicas"].as_i64().unwrap_or(0), ers["spec"]["patchID"].as_i64().unwrap_or(0))
}

/// Registers runner `name` at the fake GitHub, creates its EphemeralRunner (Pending, with a
/// finalizer so a delete leaves it deleting), and connects its runner process (idle).
async fn runner(h: &Harness, scale_set_id: i64, name: &str) -> RunnerSession {
    let setting = JitRunnerSetting { name: name.into(), work_folder: "/home/runner/_work".into() };
    let jit = github_client(h).generate_jit_runner_config(&setting, scale_set_id).await.expect("jit config");
    let mut spec = serde_json::to_value(runner_template()).expect("a template");
    spec["githubConfigUrl"] = json!(CONFIG_URL);
    spec["githubConfigSecret"] = json!(CONFIG_SECRET);
    spec["runnerScaleSetId"] = json!(scale_set_id);
    let er = json!({
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "EphemeralRunner",
        "metadata": {"name": name, "namespace": RUNNER_NS, "finalizers": ["arcsim.test/hold"]},
        "spec": spec
    });
    let er: EphemeralRunner = serde_json::from_value(er).expect("a valid runner");
    h.api(RUNNER_NS).create(&PostParams::default(), &er).await.expect("the runner is created");
    set_status(h, name, json!({"phase": "Pending", "runnerId": jit.runner.id, "runnerName": name})).await;
    h.github.connect_runner(&jit.encoded_jit_config).expect("the runner process connects")
}

/// Replaces the runner's status with `status` merged in, as a controller would (an update: PUT
/// `/status`, so patch faults do not touch it).
async fn set_status(h: &Harness, name: &str, status: Value) {
    let api = h.api::<EphemeralRunner>(RUNNER_NS);
    let mut er = serde_json::to_value(api.get(name).await.expect("the runner exists")).expect("json");
    let merged = er["status"]
        .as_object()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .chain(status.as_object().expect("an object").iter().map(|(k, v)| (k.clone(), v.clone())));
    er["status"] = Value::Object(merged.collect());
    let er: EphemeralRunner = serde_json::from_value(er).expect("a valid runner");
    api.replace_status(name, &PostParams::default(), &er).await.expect("the status is replaced");
}

fn runner_status(h: &Harness, name: &str) -> Value {
    h.object("ephemeralrunners", RUNNER_NS, name).expect("the runner exists")["status"].clone()
}

fn runner_calls(h: &Harness, verb: &str, code: &str) -> i64 {
    h.metric(API_CALLS_TOTAL, &[("verb", verb), ("kind", "EphemeralRunner"), ("code", code)])
}

fn submit(h: &Harness) -> i64 {
    h.github.submit_job(JobSpec::simple(&[SET], 600_000))
}

fn job_state(h: &Harness, request_id: i64) -> JobState {
    h.github.job(request_id).expect("the job exists").state
}

// ---------------------------------------------------------------------------------------------
// Scaling
// ---------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn desired_count_follows_assigned_jobs_with_fresh_patch_ids_and_forces_zero_when_idle_at_min() {
    let h = Harness::new();
    let mut changes = h.apiserver.changes();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let listener = start(&h, listener_config(scale_set_id, 0, 2), "listener", SessionConflictPolicy::Exit);
    h.eventually("the initial patch from the session's statistics", SOON, || runner_set_spec(&h) == (0, 0))
        .await;

    let jobs: Vec<i64> = (0..3).map(|_| submit(&h)).collect();
    h.eventually("three assigned jobs, capped at max 2", SOON, || runner_set_spec(&h) == (2, 2)).await;
    let acquired = jobs.iter().filter(|&&id| job_state(&h, id) == JobState::Acquired).count();
    assert_eq!(acquired, 2, "AcquireJobs honours the capacity header (max 2): the third job stays queued");
    assert_eq!(job_state(&h, jobs[2]), JobState::Queued);
    h.eventually("a 202 repeats the target with a fresh patch ID", AFTER_A_POLL, || {
        runner_set_spec(&h) == (2, 3)
    })
    .await;
    h.github.cancel_job(jobs[0]).expect("cancelled");
    h.eventually("a completed job frees room: the queued job is acquired", SOON, || {
        job_state(&h, jobs[2]) == JobState::Acquired && runner_set_spec(&h) == (2, 5)
    })
    .await;
    h.github.cancel_job(jobs[1]).expect("cancelled");
    h.github.cancel_job(jobs[2]).expect("cancelled");
    h.eventually("back to min with a fresh patch ID", SOON, || runner_set_spec(&h) == (0, 6)).await;
    h.eventually("idle at min: the forced patch 0", AFTER_A_POLL, || runner_set_spec(&h) == (0, 0)).await;
    listener.stop().await.expect("a clean stop");

    let mut history = Vec::new();
    while let Some(Some(change)) = changes.next().now_or_never() {
        if change.object["kind"] == "EphemeralRunnerSet" {
            let spec = &change.object["spec"];
            history.push((spec["replicas"].as_i64().unwrap_or(0), spec["patchID"].as_i64().unwrap_or(0)));
        }
    }
    // (1, 4): the completion leaves one job held; (2, 5): the queued job acquired in the room it left.
    assert_eq!(history, [(5, 99), (0, 0), (2, 2), (2, 3), (1, 4), (2, 5), (0, 6), (0, 0)]);
    let patches = h.metric(API_CALLS_TOTAL, &[("verb", "patch"), ("kind", "EphemeralRunnerSet")]);
    assert_eq!(
        patches, 8,
        "initial, 5 messages (one a no-op forced 0 before the jobs were assigned; one the queued job's \
         acquisition once a completion made room), 2 polls"
    );
    assert_eq!(h.github.scale_sets()[0].max_capacity, Some(2), "GetMessage sends maxRunners as capacity");
}

#[tokio::test(start_paused = true)]
async fn call_handle_regardless_of_initial_message() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    assign_two_jobs_through_an_earlier_session(&h, scale_set_id).await;
    let delivered_before = h.github.request_count(Operation::GetMessage, 200);

    let listener = start(&h, listener_config(scale_set_id, 1, 5), "listener", SessionConflictPolicy::Exit);
    h.eventually("min 1 + 2 assigned jobs from the session's statistics", SOON, || {
        runner_set_spec(&h) == (3, 0)
    })
    .await;
    assert_eq!(h.github.request_count(Operation::GetMessage, 200), delivered_before, "no message yet");
    h.eventually("the 202 scales from the same statistics", AFTER_A_POLL, || runner_set_spec(&h) == (3, 1))
        .await;
    assert_eq!(h.github.request_count(Operation::GetMessage, 200), delivered_before, "still no message");
    listener.stop().await.expect("a clean stop");
}

/// Another listener acquired two jobs and acknowledged every message, then went away.
async fn assign_two_jobs_through_an_earlier_session(h: &Harness, scale_set_id: i64) {
    let client = github_client(h);
    let jobs = [submit(h), submit(h)];
    let session = client.create_message_session(scale_set_id, "earlier").await.expect("a session");
    let (url, token) = (&session.message_queue_url, &session.message_queue_access_token);
    let offered = client.get_message(url, token, 0, 5).await.expect("poll").expect("JobAvailable");
    client.delete_message(url, token, offered.message_id).await.expect("ack");
    client.acquire_jobs(scale_set_id, token, &jobs).await.expect("acquired");
    let assigned =
        client.get_message(url, token, offered.message_id, 5).await.expect("poll").expect("JobAssigned");
    client.delete_message(url, token, assigned.message_id).await.expect("ack");
    client.delete_message_session(scale_set_id, &session.session_id).await.expect("deleted");
    assert_eq!(h.github.statistics(scale_set_id).map(|s| s.total_assigned_jobs), Some(2));
}

// ---------------------------------------------------------------------------------------------
// JobStarted
// ---------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn job_started_records_the_job_on_the_runner_and_sets_it_running() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let _process = runner(&h, scale_set_id, "arc-runner-1").await;
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
    let request_id = submit(&h);

    h.eventually("the job fields on the runner", SOON, || {
        runner_status(&h, "arc-runner-1")["jobId"] != Value::Null
    })
    .await;
    let job = h.github.job(request_id).expect("the job");
    let status = runner_status(&h, "arc-runner-1");
    assert_eq!(status["jobRequestId"], request_id);
    assert_eq!(status["jobId"], job.job_id.as_str());
    assert_eq!(status["jobRepositoryName"], "arcsim/app");
    assert_eq!(status["workflowRunId"], job.workflow_run_id);
    assert_eq!(status["jobWorkflowRef"], job.spec.workflow_ref.as_str());
    assert_eq!(status["jobDisplayName"], "build");
    assert_eq!(status["phase"], "Running", "[V]: the listener sets Running");
    assert_eq!((runner_calls(&h, "get", "200"), runner_calls(&h, "patch_status", "200")), (1, 1));
    listener.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn without_running_from_listener_job_started_writes_only_the_job_fields() {
    let h = Harness::with(|b| b.switches.optimisations.running_from_listener = false);
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let _process = runner(&h, scale_set_id, "arc-runner-1").await;
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
    submit(&h);

    h.eventually("the job fields on the runner", SOON, || {
        runner_status(&h, "arc-runner-1")["jobId"] != Value::Null
    })
    .await;
    assert_eq!(runner_status(&h, "arc-runner-1")["phase"], "Pending", "upstream leaves the phase alone");
    assert_eq!(runner_calls(&h, "get", "200"), 0, "upstream patches without reading");
    listener.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn job_started_for_a_runner_without_an_ephemeral_runner_is_skipped() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let setting = JitRunnerSetting { name: "arc-unknown".into(), work_folder: String::new() };
    let jit = github_client(&h).generate_jit_runner_config(&setting, scale_set_id).await.expect("jit");
    let _process = h.github.connect_runner(&jit.encoded_jit_config).expect("connects");
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
    let request_id = submit(&h);

    h.eventually("the runner looked up and not found", SOON, || runner_calls(&h, "get", "404") == 1).await;
    assert_eq!(job_state(&h, request_id), JobState::Running);
    h.eventually("the listener carries on scaling after the 202", AFTER_A_POLL, || {
        runner_set_spec(&h).1 >= 3
    })
    .await;
    assert!(!listener.task.is_finished(), "NotFound does not stop the listener");
    listener.stop().await.expect("a clean stop");
}

// ---------------------------------------------------------------------------------------------
// The [V] guard: Running never lands on a terminal or deleting runner (§5.2)
// ---------------------------------------------------------------------------------------------

/// What a controller does to the runner while the listener's status patch is in flight.
#[derive(Clone, Copy)]
enum Interference {
    /// Writes phase Failed.
    Fails,
    /// Writes phase Outdated.
    Outdated,
    /// Deletes it (its finalizer keeps it, deleting).
    Deleted,
}

/// Runs one job onto `arc-runner-1` with every EphemeralRunner PATCH delayed 3 s, and applies
/// `interference` while the listener's patch waits: after the listener read the runner (when the
/// guard is on), before its write lands. Returns the runner's final status.
async fn job_started_racing(guard: bool, interference: Interference) -> (Harness, Value) {
    let delay = ApiFault {
        verbs: vec![ApiVerb::Patch],
        resources: vec!["ephemeralrunners".into()],
        probability: 1.0,
        window: None,
        action: ApiFaultAction::Latency { min_ms: 3_000, max_ms: 3_000 },
    };
    let h = Harness::with(|b: &mut HarnessBuilder| {
        b.faults.api.push(delay);
        b.switches.fixes.running_never_overwrites_terminal = guard;
    });
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let _process = runner(&h, scale_set_id, "arc-runner-1").await;
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
    submit(&h);

    let patch_in_flight =
        || h.record.trace().lines().iter().any(|l| l.contains("latency 3000ms patch ephemeralrunners"));
    h.eventually("the listener's status patch in flight", SOON, patch_in_flight).await;
    match interference {
        Interference::Fails => set_status(&h, "arc-runner-1", json!({"phase": "Failed"})).await,
        Interference::Outdated => set_status(&h, "arc-runner-1", json!({"phase": "Outdated"})).await,
        Interference::Deleted => {
            let api = h.api::<EphemeralRunner>(RUNNER_NS);
            api.delete("arc-runner-1", &DeleteParams::default()).await.expect("deletion starts");
        }
    }
    h.eventually("the job fields land", SOON, || runner_status(&h, "arc-runner-1")["jobId"] != Value::Null)
        .await;
    listener.stop().await.expect("a clean stop");
    let status = runner_status(&h, "arc-runner-1");
    (h, status)
}

#[tokio::test(start_paused = true)]
async fn running_is_not_written_over_a_runner_that_failed_between_read_and_write() {
    let (h, status) = job_started_racing(true, Interference::Fails).await;
    assert_eq!(status["phase"], "Failed");
    assert_eq!(runner_calls(&h, "patch_status", "409"), 1, "the locked write lost to the controller's");
    assert_eq!(runner_calls(&h, "get", "200"), 2, "read, conflict, read again and decide again");
}

#[tokio::test(start_paused = true)]
async fn running_is_not_written_over_a_runner_outdated_between_read_and_write() {
    let (_, status) = job_started_racing(true, Interference::Outdated).await;
    assert_eq!(status["phase"], "Outdated");
}

#[tokio::test(start_paused = true)]
async fn running_is_not_written_over_a_runner_deleted_between_read_and_write() {
    let (h, status) = job_started_racing(true, Interference::Deleted).await;
    assert_eq!(status["phase"], "Pending");
    let er = h.object("ephemeralrunners", RUNNER_NS, "arc-runner-1").expect("held by its finalizer");
    assert!(er["metadata"]["deletionTimestamp"].is_string());
}

#[tokio::test(start_paused = true)]
async fn without_the_guard_running_overwrites_a_runner_that_failed() {
    let (h, status) = job_started_racing(false, Interference::Fails).await;
    assert_eq!(status["phase"], "Running", "the bug the guard removes");
    assert_eq!(runner_calls(&h, "get", "200"), 0, "no read, no lock");
}

#[tokio::test(start_paused = true)]
async fn without_the_guard_running_lands_on_a_deleting_runner() {
    let (_, status) = job_started_racing(false, Interference::Deleted).await;
    assert_eq!(status["phase"], "Running");
}

#[tokio::test(start_paused = true)]
async fn running_is_not_written_over_a_runner_already_failed_when_its_job_starts() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let _process = runner(&h, scale_set_id, "arc-runner-1").await;
    set_status(&h, "arc-runner-1", json!({"phase": "Failed"})).await;
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
    submit(&h);

    h.eventually("the job fields on the runner", SOON, || {
        runner_status(&h, "arc-runner-1")["jobId"] != Value::Null
    })
    .await;
    assert_eq!(runner_status(&h, "arc-runner-1")["phase"], "Failed");
    assert_eq!(runner_calls(&h, "patch_status", "409"), 0, "decided on the first read");
    listener.stop().await.expect("a clean stop");
}

// ---------------------------------------------------------------------------------------------
// Session lifecycle
// ---------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn an_expired_queue_token_refreshes_the_session_and_the_listener_carries_on() {
    let h = Harness::with(|b| b.github.queue_token_ttl_ms = 60_000);
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);

    let refreshed = || h.github.request_count(Operation::RefreshSession, 200) == 1;
    h.eventually("a 401 on GetMessage, then a refresh", Duration::from_secs(150), refreshed).await;
    assert_eq!(h.github.request_count(Operation::GetMessage, 401), 1);
    submit(&h);
    h.eventually("a job still scales the runner set up", SOON, || runner_set_spec(&h).0 == 1).await;
    assert_eq!(h.github.sessions().len(), 1, "the same session, refreshed");
    listener.stop().await.expect("a clean stop");
}

/// A job whose offer a dead listener received and the service then dropped
/// (`unacknowledged-messages=dropped`) is acquired by the next session only through
/// `fixes.acquire_acquirable_jobs_on_open`.
#[tokio::test(start_paused = true)]
async fn a_session_that_opens_with_available_jobs_acquires_the_acquirable_ones_only_with_the_fix() {
    for fix in [true, false] {
        let h = Harness::with(|b| {
            b.github.redeliver_unacknowledged = false;
            b.switches.fixes.acquire_acquirable_jobs_on_open = fix;
        });
        let scale_set_id = scale_set_with_runner_set(&h).await;
        let request_id = submit(&h);
        // A listener that received the offer and died: its session is gone, the offer with it.
        let dead = github_client(&h).create_message_session(scale_set_id, "dead").await.unwrap();
        let url = &dead.message_queue_url;
        github_client(&h).get_message(url, &dead.message_queue_access_token, 0, 3).await.unwrap();
        github_client(&h).delete_message_session(scale_set_id, &dead.session_id).await.unwrap();
        let listener =
            start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
        tokio::time::sleep(Duration::from_secs(60)).await;
        let acquired = job_state(&h, request_id) == JobState::Acquired;
        assert_eq!(acquired, fix, "with the fix {fix}: the job acquired? {acquired}");
        assert_eq!(h.github.request_count(Operation::GetAcquirableJobs, 200), u64::from(fix));
        listener.stop().await.expect("a clean stop");
    }
}

/// `session-refresh=ends-with-token` (actions/scaleset #123): the refresh answers 404; with
/// `fixes.new_session_when_session_gone` the listener opens a new session and keeps scaling, without
/// it the listener exits.
#[tokio::test(start_paused = true)]
async fn a_session_gone_at_refresh_is_replaced_only_with_the_fix() {
    for fix in [true, false] {
        let h = Harness::with(|b| {
            b.github.queue_token_ttl_ms = 60_000;
            b.github.session_ends_with_token = true;
            b.switches.fixes.new_session_when_session_gone = fix;
        });
        let scale_set_id = scale_set_with_runner_set(&h).await;
        let listener =
            start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
        let refused = || h.github.request_count(Operation::RefreshSession, 404) == 1;
        h.eventually("the refresh answered 404", Duration::from_secs(150), refused).await;
        if fix {
            let reopened = || h.github.request_count(Operation::CreateSession, 200) == 2;
            h.eventually("a second session", SOON, reopened).await;
            submit(&h);
            h.eventually("a job still scales the runner set up", SOON, || runner_set_spec(&h).0 == 1).await;
            listener.stop().await.expect("a clean stop");
        } else {
            let error = listener.exit().await.expect_err("the listener exits");
            assert!(matches!(error, ListenerError::RefreshSession(_)), "{error}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_401_on_delete_message_and_on_acquire_jobs_refreshes_and_retries_each_once() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    h.script.answer(Operation::DeleteMessage, 401, "");
    h.script.answer(Operation::AcquireJobs, 401, "");
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
    let request_id = submit(&h);

    h.eventually("the job acquired after two refreshes", SOON, || {
        job_state(&h, request_id) == JobState::Acquired
    })
    .await;
    h.eventually("the message acknowledged after the second refresh", SOON, || h.script.used().len() == 2)
        .await;
    assert_eq!(h.script.used(), ["acquire-jobs", "delete-message"], "acquired before acknowledged");
    let refreshed_twice = || h.github.request_count(Operation::RefreshSession, 200) == 2;
    h.eventually("a refresh after each 401", SOON, refreshed_twice).await;
    h.eventually("the acquired job scales the runner set", SOON, || runner_set_spec(&h).0 == 1).await;
    listener.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn a_second_401_after_a_refresh_stops_the_listener_and_deletes_its_session() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    h.script.answer(Operation::GetMessage, 401, "");
    h.script.answer(Operation::GetMessage, 401, "");
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);

    let error = listener.exit().await.expect_err("the retried call failed too");
    assert!(matches!(error, ListenerError::Queue(ActionsError::QueueTokenExpired { .. })), "{error}");
    assert_eq!(h.github.request_count(Operation::RefreshSession, 200), 1, "refreshed once, not twice");
    assert!(h.github.sessions().is_empty(), "the session is deleted on the way out");
}

#[tokio::test(start_paused = true)]
async fn a_second_listener_exits_on_session_conflict_and_leaves_the_first_alone() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let first = start(&h, listener_config(scale_set_id, 0, 3), "listener-a", SessionConflictPolicy::Exit);
    h.eventually("the first session polling", SOON, || {
        h.github.sessions().iter().any(|s| s.polls_in_flight > 0)
    })
    .await;

    let second = start(&h, listener_config(scale_set_id, 0, 3), "listener-b", SessionConflictPolicy::Exit);
    let error = second.exit().await.expect_err("the session is taken");
    assert!(matches!(error, ListenerError::SessionConflict { attempts: 1, .. }), "{error}");
    let owners: Vec<String> = h.github.sessions().into_iter().map(|s| s.owner).collect();
    assert_eq!(owners, ["listener-a"]);
    assert_eq!(h.github.request_count(Operation::DeleteSession, 204), 0);
    assert!(!first.task.is_finished());
    first.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn with_the_0_13_policy_a_second_listener_retries_until_the_session_is_free() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let first = start(&h, listener_config(scale_set_id, 0, 3), "listener-a", SessionConflictPolicy::Exit);
    h.eventually("the first session polling", SOON, || {
        h.github.sessions().iter().any(|s| s.polls_in_flight > 0)
    })
    .await;

    let second =
        start(&h, listener_config(scale_set_id, 0, 3), "listener-b", SessionConflictPolicy::ARC_0_13);
    tokio::time::sleep(Duration::from_secs(45)).await;
    assert_eq!(h.github.request_count(Operation::CreateSession, 409), 2, "at 0 s and 30 s");
    first.stop().await.expect("a clean stop");
    let owned_by_b = || h.github.sessions().iter().any(|s| s.owner == "listener-b");
    h.eventually("the retry at 60 s takes the session", Duration::from_secs(20), owned_by_b).await;
    assert_eq!(h.github.request_count(Operation::CreateSession, 409), 2);
    second.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_listener_deletes_its_session() {
    let h = Harness::new();
    let scale_set_id = scale_set_with_runner_set(&h).await;
    let listener = start(&h, listener_config(scale_set_id, 0, 3), "listener", SessionConflictPolicy::Exit);
    h.eventually("the session polling", SOON, || h.github.sessions().iter().any(|s| s.polls_in_flight > 0))
        .await;

    listener.stop().await.expect("a cancelled listener returns Ok");
    assert!(h.github.sessions().is_empty());
    assert_eq!(h.github.request_count(Operation::DeleteSession, 204), 1);
}
