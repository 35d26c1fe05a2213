//! The EphemeralRunner controller against the fake API server and the fake GitHub: ARC's
//! `ephemeralrunner_controller_test.go` (ARC-MODEL §10, one test per row, named after ARC's test),
//! then race 1 (§8.1) with its fix on and off, the secret-cache ablation, the #4580 finalizer bug, the
//! \[V\] Running-from-listener switch (§5.2) and lazy copies (§5.3).
//!
//! Only the ER controller runs. Each test creates its EphemeralRunners itself (with both finalizers, as
//! the ERS would, unless the finalizer step is under test), drives pod states through `/status` patches
//! (there is no kubelet here), and scripts GitHub answers where it needs an exact one. Pods have no
//! node, so the fake API server removes a deleted pod at once.

use std::time::Duration;

use arc_controller::crd::constants::{
    EPHEMERAL_RUNNER_FINALIZER, EPHEMERAL_RUNNER_REGISTRATION_FINALIZER, JIT_SECRET_KEY_RUNNER_ID,
    JIT_SECRET_KEY_TOKEN, REASON_INVALID_POD,
};
use arc_controller::crd::{EphemeralRunner, EphemeralRunnerPhase, EphemeralRunnerSpec};
use arc_controller::github::wire::JitRunnerSetting;
use arc_controller::runtime::manager::Manager;
use arc_controller::runtime::metrics::{
    API_CALLS_TOTAL, DEEP_COPIES_TOTAL, RECONCILE_ERRORS_TOTAL, RECONCILE_TOTAL,
};
use arc_controller::scaleset::ephemeral_runner::CONTROLLER_NAME;
use arc_sim::apiserver::LagRange;
use arc_sim::github::Operation;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::support::fixtures::{CONFIG_SECRET, CONFIG_URL, runner_template};
use crate::support::log_capture::CapturedLogs;
use crate::support::{Harness, HarnessBuilder, RUNNER_NS};

/// The scale set every test registers its runners in.
const SCALE_SET: &str = "er-tests";
/// The runner most tests create.
const RUNNER: &str = "runner-1";
/// Long enough for any step of these tests in simulated time.
const WAIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// An EphemeralRunner `name` of scale set `scale_set_id` with `template`, carrying both finalizers
/// when `finalizers` (as the ERS creates it).
fn runner_with(
    name: &str,
    scale_set_id: i64,
    template: PodTemplateSpec,
    finalizers: bool,
) -> EphemeralRunner {
    let finalizers = finalizers.then(|| {
        vec![EPHEMERAL_RUNNER_FINALIZER.to_string(), EPHEMERAL_RUNNER_REGISTRATION_FINALIZER.to_string()]
    });
    EphemeralRunner {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(RUNNER_NS.into()),
            finalizers,
            ..Default::default()
        },
        spec: EphemeralRunnerSpec {
            github_config_url: CONFIG_URL.into(),
            github_config_secret: CONFIG_SECRET.into(),
            runner_scale_set_id: scale_set_id,
            pod_template: template,
            ..Default::default()
        },
        status: None,
    }
}

/// [`RUNNER`] with the default template and both finalizers.
fn runner(scale_set_id: i64) -> EphemeralRunner {
    runner_with(RUNNER, scale_set_id, runner_template(), true)
}

/// The default template plus an init container, as ARC's example runner has.
fn template_with_init_container() -> PodTemplateSpec {
    let mut template = runner_template();
    let spec = template.spec.as_mut().expect("a pod spec");
    spec.init_containers = Some(vec![serde_json::from_value(json!({
        "name": "setup", "image": "ghcr.io/actions/actions-runner:2.330.0", "command": ["sh", "-c", "true"]
    }))
    .expect("a container")]);
    template
}

/// Starts a manager running only the EphemeralRunner controller. Keep it alive for the test.
fn start(h: &Harness) -> Manager {
    h.start(&["ephemeralrunner"])
}

/// A harness with the scale set and the GitHub secret; returns the scale set's id too.
async fn setup(change: impl FnOnce(&mut HarnessBuilder)) -> (Harness, i64) {
    let h = Harness::with(change);
    let scale_set_id = h.runner_prerequisites(SCALE_SET).await;
    (h, scale_set_id)
}

async fn create(h: &Harness, runner: &EphemeralRunner) {
    h.api::<EphemeralRunner>(RUNNER_NS).create(&PostParams::default(), runner).await.expect("runner created");
}

/// The stored EphemeralRunner `name`, read from the fake.
fn stored_runner(h: &Harness, name: &str) -> Option<EphemeralRunner> {
    let object = h.object("ephemeralrunners", RUNNER_NS, name)?;
    Some(serde_json::from_value(object).expect("a stored EphemeralRunner"))
}

fn stored_pod(h: &Harness, name: &str) -> Option<Pod> {
    let object = h.object("pods", RUNNER_NS, name)?;
    Some(serde_json::from_value(object).expect("a stored pod"))
}

fn stored_secret(h: &Harness, name: &str) -> Option<Secret> {
    let object = h.object("secrets", RUNNER_NS, name)?;
    Some(serde_json::from_value(object).expect("a stored secret"))
}

fn pod_uid(h: &Harness, name: &str) -> Option<String> {
    stored_pod(h, name).and_then(|pod| pod.metadata.uid)
}

fn phase(h: &Harness, name: &str) -> Option<EphemeralRunnerPhase> {
    stored_runner(h, name).and_then(|er| er.status).and_then(|status| status.phase)
}

fn failures(h: &Harness, name: &str) -> usize {
    stored_runner(h, name).map_or(0, |er| er.failure_count())
}

fn runner_id(h: &Harness, name: &str) -> i64 {
    stored_runner(h, name).map_or(0, |er| er.runner_id())
}

/// Waits until the pod of [`RUNNER`] exists (with a uid other than `not`) and returns its uid.
async fn wait_for_pod(h: &Harness, not: Option<&str>) -> String {
    let what = format!("a runner pod other than {not:?}");
    h.eventually(&what, WAIT, || pod_uid(h, RUNNER).is_some_and(|uid| Some(uid.as_str()) != not)).await;
    pod_uid(h, RUNNER).expect("the pod")
}

/// Merge-patches the status of pod `name`, as a kubelet would.
async fn patch_pod_status(h: &Harness, name: &str, status: Value) {
    let patch = json!({ "status": status });
    h.api::<Pod>(RUNNER_NS)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("pod status patched");
}

/// Merge-patches the status of EphemeralRunner `name`, as the listener would.
async fn patch_runner_status(h: &Harness, name: &str, status: Value) {
    let patch = json!({ "status": status });
    h.api::<EphemeralRunner>(RUNNER_NS)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("runner status patched");
}

/// A container status for container `name` in `state` (`{}`: no state yet).
fn container(name: &str, state: Value) -> Value {
    json!({"name": name, "image": "img", "imageID": "", "ready": false, "restartCount": 0, "state": state})
}

fn terminated(exit_code: i32) -> Value {
    json!({"terminated": {"exitCode": exit_code}})
}

/// The listener records a job on the runner; then the test lets the controller's cache see it.
async fn assign_job(h: &Harness) {
    patch_runner_status(h, RUNNER, json!({"jobId": "1", "jobRequestId": 1})).await;
    h.eventually("the job is recorded", WAIT, || stored_runner(h, RUNNER).is_some_and(|er| er.has_job()))
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
}

fn api_calls(h: &Harness, verb: &str, kind: &str, code: &str) -> i64 {
    h.metric(API_CALLS_TOTAL, &[("verb", verb), ("kind", kind), ("code", code)])
}

fn reconcile_errors(h: &Harness, reason: &str) -> i64 {
    h.metric(RECONCILE_ERRORS_TOTAL, &[("controller", CONTROLLER_NAME), ("reason", reason)])
}

fn github_runner_removed(h: &Harness, runner_id: i64) -> bool {
    h.github.runner(runner_id).is_some_and(|runner| runner.is_removed())
}

fn lag_watches(builder: &mut HarnessBuilder, resources: &[&str]) {
    for resource in resources {
        builder.apiserver.watch_lag.per_resource.insert((*resource).into(), LagRange::between(1000, 3000));
    }
}

// ---------------------------------------------------------------------------------------------
// ARC's ephemeralrunner_controller_test.go, "Resource manipulation"
// ---------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn adds_both_finalizers_the_jit_secret_and_the_pod_to_a_new_runner() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner_with(RUNNER, scale_set_id, runner_template(), false)).await;

    wait_for_pod(&h, None).await;
    let er = stored_runner(&h, RUNNER).expect("the runner");
    let finalizers = er.metadata.finalizers.unwrap_or_default();
    assert_eq!(finalizers, [EPHEMERAL_RUNNER_FINALIZER, EPHEMERAL_RUNNER_REGISTRATION_FINALIZER]);
    let secret = stored_secret(&h, RUNNER).expect("the JIT secret");
    assert!(secret.data.unwrap_or_default().contains_key(JIT_SECRET_KEY_TOKEN));
    let pod = stored_pod(&h, RUNNER).expect("the pod");
    assert_eq!(pod.metadata.owner_references.unwrap_or_default()[0].name, RUNNER);
}

#[tokio::test(start_paused = true)]
async fn eventually_records_the_registered_runner_id_and_name() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;

    h.eventually("the runner id is recorded", WAIT, || runner_id(&h, RUNNER) > 0).await;
    let status = stored_runner(&h, RUNNER).and_then(|er| er.status).expect("a status");
    let registered = h.github.runner(status.runner_id).expect("registered at the service");
    assert_eq!((registered.name.as_str(), registered.scale_set_id), (RUNNER, Some(scale_set_id)));
    assert_eq!(status.runner_name, RUNNER);
    let secret = stored_secret(&h, RUNNER).and_then(|s| s.data).expect("secret data");
    assert_eq!(secret[JIT_SECRET_KEY_RUNNER_ID].0, status.runner_id.to_string().into_bytes());
}

#[tokio::test(start_paused = true)]
async fn recreates_the_pod_on_failure_when_no_job_is_assigned() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    let first = wait_for_pod(&h, None).await;

    h.api::<Pod>(RUNNER_NS).delete(RUNNER, &DeleteParams::default()).await.expect("pod deleted");

    let second = wait_for_pod(&h, Some(&first)).await;
    assert_ne!(first, second);
    assert_eq!(failures(&h, RUNNER), 0, "a deleted pod is not a failed pod");
}

#[tokio::test(start_paused = true)]
async fn deletes_the_runner_on_failure_when_a_job_is_assigned() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    let registered = runner_id(&h, RUNNER);
    assign_job(&h).await;

    patch_pod_status(&h, RUNNER, json!({"containerStatuses": [container("runner", terminated(1))]})).await;

    h.eventually("the runner is gone", WAIT, || stored_runner(&h, RUNNER).is_none()).await;
    assert!(github_runner_removed(&h, registered), "the runner is removed from the service");
}

#[tokio::test(start_paused = true)]
async fn deletes_the_runner_when_the_pod_fails_before_the_runner_state_is_recorded_and_a_job_is_assigned() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    assign_job(&h).await;

    patch_pod_status(&h, RUNNER, json!({"phase": "Failed"})).await;

    h.eventually("the runner is gone", WAIT, || stored_runner(&h, RUNNER).is_none()).await;
}

#[tokio::test(start_paused = true)]
async fn recreates_the_pod_when_it_fails_before_the_runner_state_is_recorded_and_no_job_is_assigned() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    let first = wait_for_pod(&h, None).await;

    patch_pod_status(&h, RUNNER, json!({"phase": "Failed"})).await;

    h.eventually("one failure is recorded", WAIT, || failures(&h, RUNNER) == 1).await;
    wait_for_pod(&h, Some(&first)).await;
    let failures = stored_runner(&h, RUNNER).and_then(|er| er.status).expect("status").failures;
    assert!(failures.contains_key(&first), "the failure is keyed by the dead pod's uid");
}

#[tokio::test(start_paused = true)]
async fn recreates_the_pod_when_an_init_container_fails_before_the_pod_phase_is_failed() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner_with(RUNNER, scale_set_id, template_with_init_container(), true)).await;
    let first = wait_for_pod(&h, None).await;

    let init = container("setup", json!({"terminated": {"exitCode": 1, "reason": "StartError"}}));
    patch_pod_status(&h, RUNNER, json!({"phase": "Pending", "initContainerStatuses": [init]})).await;

    h.eventually("one failure is recorded", WAIT, || failures(&h, RUNNER) == 1).await;
    wait_for_pod(&h, Some(&first)).await;
}

#[tokio::test(start_paused = true)]
async fn deletes_the_runner_when_an_init_container_fails_and_a_job_is_assigned() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner_with(RUNNER, scale_set_id, template_with_init_container(), true)).await;
    wait_for_pod(&h, None).await;
    assign_job(&h).await;

    let init = container("setup", json!({"terminated": {"exitCode": 1, "reason": "StartError"}}));
    patch_pod_status(&h, RUNNER, json!({"phase": "Pending", "initContainerStatuses": [init]})).await;

    h.eventually("the runner is gone", WAIT, || stored_runner(&h, RUNNER).is_none()).await;
}

/// Pod Failed while the runner container exited 0 (a sidecar failed): the runner succeeded.
async fn exit_0_in_a_failed_pod_is_success(with_job: bool) {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    if with_job {
        assign_job(&h).await;
    }

    let statuses = [container("runner", terminated(0)), container("sidecar", terminated(1))];
    patch_pod_status(&h, RUNNER, json!({"phase": "Failed", "containerStatuses": statuses})).await;

    h.eventually("the runner is gone", WAIT, || stored_runner(&h, RUNNER).is_none()).await;
}

#[tokio::test(start_paused = true)]
async fn treats_a_failed_pod_with_runner_exit_0_as_success_with_a_job_id() {
    exit_0_in_a_failed_pod_is_success(true).await;
}

#[tokio::test(start_paused = true)]
async fn treats_a_failed_pod_with_runner_exit_0_as_success_without_a_job_id() {
    exit_0_in_a_failed_pod_is_success(false).await;
}

#[tokio::test(start_paused = true)]
async fn marks_a_failure_and_recreates_the_pod_when_no_job_is_assigned_and_the_pod_failed() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    let first = wait_for_pod(&h, None).await;
    let registered = runner_id(&h, RUNNER);

    patch_pod_status(
        &h,
        RUNNER,
        json!({"phase": "Failed", "containerStatuses": [container("runner", terminated(1))]}),
    )
    .await;

    h.eventually("one failure is recorded", WAIT, || failures(&h, RUNNER) == 1).await;
    wait_for_pod(&h, Some(&first)).await;
    assert!(!github_runner_removed(&h, registered), "the registration is kept for the next pod");
    assert_eq!(runner_id(&h, RUNNER), registered);
}

#[tokio::test(start_paused = true)]
async fn fails_the_runner_with_reason_invalid_pod_when_the_pod_template_is_invalid() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    let mut template = runner_template();
    template.spec.as_mut().expect("spec").containers[0].image = None;
    create(&h, &runner_with("invalid-runner", scale_set_id, template, true)).await;

    h.eventually("the runner failed", WAIT, || {
        phase(&h, "invalid-runner") == Some(EphemeralRunnerPhase::Failed)
    })
    .await;
    let status = stored_runner(&h, "invalid-runner").and_then(|er| er.status).expect("status");
    assert_eq!(status.reason, REASON_INVALID_POD);
    assert!(
        status.message.starts_with("Failed to create the pod: Pod \"invalid-runner\" is invalid"),
        "{}",
        status.message
    );
    // RemoveRunner takes GitHub's latency after the Failed write.
    h.eventually("a failed runner leaves the service", WAIT, || github_runner_removed(&h, status.runner_id))
        .await;
    assert!(stored_pod(&h, "invalid-runner").is_none());
}

#[tokio::test(start_paused = true)]
async fn cleans_up_the_pod_the_secret_and_container_hook_resources_when_deleted() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    let mut template = runner_template();
    let runner_container = &mut template.spec.as_mut().expect("spec").containers[0];
    runner_container.env = Some(vec![
        serde_json::from_value(
            json!({"name": "ACTIONS_RUNNER_CONTAINER_HOOKS", "value": "/tmp/hook/index.js"}),
        )
        .expect("an env var"),
    ]);
    create(&h, &runner_with(RUNNER, scale_set_id, template, true)).await;
    wait_for_pod(&h, None).await;
    let registered = runner_id(&h, RUNNER);
    let linked =
        json!({"metadata": {"name": "linked", "namespace": RUNNER_NS, "labels": {"runner-pod": RUNNER}}});
    let mut linked_pod = linked.clone();
    linked_pod["spec"] = json!({"containers": [{"name": "job", "image": "ubuntu:latest"}]});
    let linked_pod: Pod = serde_json::from_value(linked_pod).expect("a pod");
    h.api::<Pod>(RUNNER_NS).create(&PostParams::default(), &linked_pod).await.expect("linked pod");
    let linked_secret: Secret = serde_json::from_value(linked).expect("a secret");
    h.api::<Secret>(RUNNER_NS).create(&PostParams::default(), &linked_secret).await.expect("linked secret");
    tokio::time::sleep(Duration::from_secs(1)).await; // the controller's pod cache sees the linked pod

    h.api::<EphemeralRunner>(RUNNER_NS).delete(RUNNER, &DeleteParams::default()).await.expect("deleted");

    h.eventually("the runner is gone", WAIT, || stored_runner(&h, RUNNER).is_none()).await;
    assert!(stored_pod(&h, RUNNER).is_none() && stored_secret(&h, RUNNER).is_none());
    assert!(stored_pod(&h, "linked").is_none() && stored_secret(&h, "linked").is_none());
    assert!(github_runner_removed(&h, registered));
}

#[tokio::test(start_paused = true)]
async fn patches_the_non_terminating_phase_from_the_pod_upstream() {
    let (h, scale_set_id) = setup(|b| b.switches.optimisations.running_from_listener = false).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;

    for (pod_phase, expected) in
        [("Running", EphemeralRunnerPhase::Running), ("Pending", EphemeralRunnerPhase::Pending)]
    {
        let statuses = [container("runner", json!({}))];
        patch_pod_status(&h, RUNNER, json!({"phase": pod_phase, "containerStatuses": statuses})).await;
        h.eventually(&format!("phase {expected:?}"), WAIT, || phase(&h, RUNNER) == Some(expected)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn with_running_from_the_listener_a_live_pod_only_ever_publishes_pending() {
    let (h, scale_set_id) = setup(|b| b.switches.optimisations.running_from_listener = true).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;

    let running =
        json!({"phase": "Running", "containerStatuses": [container("runner", json!({"running": {}}))]});
    patch_pod_status(&h, RUNNER, running).await;

    h.eventually("phase Pending", WAIT, || phase(&h, RUNNER) == Some(EphemeralRunnerPhase::Pending)).await;
    h.consistently("never Running", Duration::from_secs(5), || {
        phase(&h, RUNNER) == Some(EphemeralRunnerPhase::Pending)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn with_running_from_the_listener_a_running_phase_is_never_demoted() {
    let (h, scale_set_id) = setup(|b| b.switches.optimisations.running_from_listener = true).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    patch_runner_status(&h, RUNNER, json!({"phase": "Running", "jobId": "1"})).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let is_running = |h: &Harness| phase(h, RUNNER) == Some(EphemeralRunnerPhase::Running);

    // Upstream would copy the pod's Pending over the listener's Running.
    let waiting = [container("runner", json!({"waiting": {"reason": "ContainerCreating"}}))];
    patch_pod_status(&h, RUNNER, json!({"phase": "Pending", "containerStatuses": waiting})).await;
    h.consistently("Running is kept", Duration::from_secs(5), || is_running(&h)).await;

    // A readiness change is still published, under the kept phase.
    let now = Time(h.ctx.clock.now());
    let ready = json!({"type": "Ready", "status": "True", "lastTransitionTime": now});
    let running = [container("runner", json!({"running": {}}))];
    patch_pod_status(
        &h,
        RUNNER,
        json!({"phase": "Running", "conditions": [ready], "containerStatuses": running}),
    )
    .await;

    h.eventually("ready", WAIT, || {
        stored_runner(&h, RUNNER).and_then(|er| er.status).is_some_and(|s| s.ready)
    })
    .await;
    assert_eq!(phase(&h, RUNNER), Some(EphemeralRunnerPhase::Running));
}

#[tokio::test(start_paused = true)]
async fn updates_ready_from_the_latest_ready_condition() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    let ready_flag = |h: &Harness| stored_runner(h, RUNNER).and_then(|er| er.status).is_some_and(|s| s.ready);
    let now = h.ctx.clock.now();
    let condition = |status: &str, seconds: i64| {
        let at = Time(now.checked_add(jiff::SignedDuration::from_secs(seconds)).expect("a time"));
        json!({"type": "Ready", "status": status, "lastTransitionTime": at})
    };
    let running = [container("runner", json!({"running": {}}))];

    let scheduled = json!({"type": "PodScheduled", "status": "True", "lastTransitionTime": Time(now)});
    let conditions = [scheduled, condition("True", 0)];
    patch_pod_status(
        &h,
        RUNNER,
        json!({"phase": "Running", "conditions": conditions, "containerStatuses": running}),
    )
    .await;
    h.eventually("ready", WAIT, || ready_flag(&h)).await;

    // An older True condition listed after a newer False one: the latest transition wins.
    let conditions = [condition("False", 2), condition("True", 1)];
    patch_pod_status(&h, RUNNER, json!({"conditions": conditions})).await;
    h.eventually("not ready", WAIT, || !ready_flag(&h)).await;
}

#[tokio::test(start_paused = true)]
async fn does_not_update_the_phase_while_the_runner_container_has_no_state() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;

    patch_pod_status(&h, RUNNER, json!({"phase": "Running"})).await;

    h.consistently("no phase", Duration::from_secs(10), || phase(&h, RUNNER).is_none()).await;
}

#[tokio::test(start_paused = true)]
async fn eventually_deletes_the_runner_after_more_than_five_consecutive_failures() {
    let backoff = vec![Duration::from_millis(20); 6];
    let (h, scale_set_id) = setup(|b| b.settings.failed_runner_backoff = backoff).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;

    let mut previous: Option<String> = None;
    for failed in 1..=5 {
        let uid = wait_for_pod(&h, previous.as_deref()).await;
        patch_pod_status(&h, RUNNER, json!({"containerStatuses": [container("runner", terminated(1))]}))
            .await;
        h.eventually(&format!("{failed} failures"), WAIT, || failures(&h, RUNNER) == failed).await;
        previous = Some(uid);
    }
    wait_for_pod(&h, previous.as_deref()).await;
    assert!(stored_runner(&h, RUNNER).is_some(), "five failures are tolerated");
    patch_pod_status(&h, RUNNER, json!({"containerStatuses": [container("runner", terminated(1))]})).await;

    h.eventually("the runner is gone", WAIT, || stored_runner(&h, RUNNER).is_none()).await;
}

/// Pod Failed with `reason` and a runner container that never started: a new pod.
async fn a_pod_that_failed_for(reason: &str) {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    let first = wait_for_pod(&h, None).await;

    let status =
        json!({"phase": "Failed", "reason": reason, "containerStatuses": [container("runner", json!({}))]});
    patch_pod_status(&h, RUNNER, status).await;

    h.eventually("one failure is recorded", WAIT, || failures(&h, RUNNER) == 1).await;
    wait_for_pod(&h, Some(&first)).await;
    let status = stored_runner(&h, RUNNER).and_then(|er| er.status).expect("status");
    assert_eq!((status.reason.as_str(), status.ready), (reason, false));
}

#[tokio::test(start_paused = true)]
async fn recreates_the_pod_on_eviction() {
    a_pod_that_failed_for("Evicted").await;
}

#[tokio::test(start_paused = true)]
async fn recreates_the_pod_on_a_reason_starting_with_out_of() {
    a_pod_that_failed_for("OutOfpods").await;
}

/// Pod Running then Succeeded, the runner container never terminated: the phase stays `expected`.
async fn no_succeeded_without_termination_status(
    running_from_listener: bool,
    expected: EphemeralRunnerPhase,
) {
    let (h, scale_set_id) =
        setup(|b| b.switches.optimisations.running_from_listener = running_from_listener).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    let running = [container("runner", json!({"running": {}}))];
    patch_pod_status(&h, RUNNER, json!({"phase": "Running", "containerStatuses": running})).await;
    h.eventually(&format!("phase {expected:?}"), WAIT, || phase(&h, RUNNER) == Some(expected)).await;

    patch_pod_status(&h, RUNNER, json!({"phase": "Succeeded"})).await;

    h.consistently("the phase stays", Duration::from_secs(10), || phase(&h, RUNNER) == Some(expected)).await;
    assert!(stored_runner(&h, RUNNER).is_some());
}

#[tokio::test(start_paused = true)]
async fn does_not_set_the_phase_to_succeeded_without_pod_termination_status_upstream() {
    no_succeeded_without_termination_status(false, EphemeralRunnerPhase::Running).await;
}

#[tokio::test(start_paused = true)]
async fn does_not_set_the_phase_to_succeeded_without_pod_termination_status_with_running_from_the_listener() {
    no_succeeded_without_termination_status(true, EphemeralRunnerPhase::Pending).await;
}

// ---------------------------------------------------------------------------------------------
// ARC's "Checking the API"
// ---------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn deletes_the_runner_when_its_pod_exits_successfully_whatever_get_runner_says() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let not_found = r#"{"typeName":"GitHub.DistributedTask.WebApi.AgentNotFoundException","message":"gone"}"#;
    h.script.answer(Operation::GetRunner, 404, not_found);
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;

    patch_pod_status(&h, RUNNER, json!({"containerStatuses": [container("runner", terminated(0))]})).await;

    h.eventually("the runner is gone", WAIT, || stored_runner(&h, RUNNER).is_none()).await;
    assert!(
        !h.script.used().contains(&"get-runner"),
        "since #4142 a clean exit is not checked at the service"
    );
}

// ---------------------------------------------------------------------------------------------
// Deletion and registration edge cases
// ---------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_deleting_runner_whose_job_still_runs_keeps_its_finalizers_and_retries_after_30_seconds() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    let registered = runner_id(&h, RUNNER);
    let still_running =
        r#"{"typeName":"GitHub.DistributedTask.WebApi.JobStillRunningException","message":"busy"}"#;
    h.script.answer(Operation::RemoveRunner, 400, still_running);

    h.api::<EphemeralRunner>(RUNNER_NS).delete(RUNNER, &DeleteParams::default()).await.expect("deleted");

    h.consistently("the runner waits for its job", Duration::from_secs(29), || {
        stored_runner(&h, RUNNER).is_some()
    })
    .await;
    assert!(stored_pod(&h, RUNNER).is_some(), "nothing is cleaned up while the job runs");
    h.eventually("the runner is gone", Duration::from_secs(3), || stored_runner(&h, RUNNER).is_none()).await;
    assert_eq!(h.script.used(), ["remove-runner"]);
    assert!(github_runner_removed(&h, registered));
}

/// A runner with a job whose pod failed: it is deleted, and RemoveRunner answers `JobStillRunning`
/// twice (to the failure's own call, then to the deletion's). Returns the harness, the manager (keep
/// it) and the runner's id.
async fn failed_with_its_job_still_running(background: bool) -> (Harness, Manager, i64) {
    let (h, scale_set_id) = setup(|b| b.switches.releases.deregister_in_background = background).await;
    let manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    let registered = runner_id(&h, RUNNER);
    assign_job(&h).await;
    let still_running =
        r#"{"typeName":"GitHub.DistributedTask.WebApi.JobStillRunningException","message":"busy"}"#;
    h.script.answer(Operation::RemoveRunner, 400, still_running);
    h.script.answer(Operation::RemoveRunner, 400, still_running);
    patch_pod_status(&h, RUNNER, json!({"containerStatuses": [container("runner", terminated(1))]})).await;
    (h, manager, registered)
}

#[tokio::test(start_paused = true)]
async fn with_4664_a_stopped_runner_goes_at_once_and_is_removed_from_the_service_in_the_background() {
    let (h, _manager, registered) = failed_with_its_job_still_running(true).await;

    h.eventually("the runner is gone", Duration::from_secs(5), || stored_runner(&h, RUNNER).is_none()).await;
    assert!(stored_pod(&h, RUNNER).is_none() && stored_secret(&h, RUNNER).is_none());
    assert_eq!(
        h.script.used(),
        ["remove-runner"; 2],
        "the failure's call and the queue's, both JobStillRunning"
    );
    h.consistently("the queue waits 30 s", Duration::from_secs(25), || {
        !github_runner_removed(&h, registered)
    })
    .await;
    h.eventually("the queue removes it", Duration::from_secs(10), || github_runner_removed(&h, registered))
        .await;
}

#[tokio::test(start_paused = true)]
async fn without_4664_a_stopped_runner_waits_for_its_removal_with_its_finalizers() {
    let (h, _manager, registered) = failed_with_its_job_still_running(false).await;

    h.consistently("the runner waits for its job", Duration::from_secs(25), || {
        stored_runner(&h, RUNNER).is_some()
    })
    .await;
    assert!(stored_pod(&h, RUNNER).is_some(), "the pod stays with its runner");
    h.eventually("the runner is gone", Duration::from_secs(10), || stored_runner(&h, RUNNER).is_none()).await;
    assert_eq!(h.script.used(), ["remove-runner"; 2]);
    assert!(github_runner_removed(&h, registered));
}

/// Registers `RUNNER` at the service in scale set `scale_set_id`, as a lost earlier attempt would have.
async fn register_name_at_service(h: &Harness, scale_set_id: i64) -> i64 {
    let client = h.fixture_actions_client().await;
    let setting = JitRunnerSetting { name: RUNNER.into(), work_folder: String::new() };
    let config = client.generate_jit_runner_config(&setting, scale_set_id).await.expect("registered");
    config.runner.id
}

#[tokio::test(start_paused = true)]
async fn a_name_registered_in_the_same_scale_set_is_removed_and_the_runner_registers_again() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let stale = register_name_at_service(&h, scale_set_id).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;

    wait_for_pod(&h, None).await;
    let registered = runner_id(&h, RUNNER);
    assert!(registered > 0 && registered != stale);
    assert!(github_runner_removed(&h, stale));
    assert_eq!(h.github.request_count(Operation::GenerateJitConfig, 409), 1);
}

#[tokio::test(start_paused = true)]
async fn a_name_registered_in_another_scale_set_gets_the_runner_deleted() {
    let (h, scale_set_id) = setup(|_| {}).await;
    let other = h.scale_set("other-scale-set");
    let foreign = register_name_at_service(&h, other).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;

    h.eventually("the runner is gone", WAIT, || stored_runner(&h, RUNNER).is_none()).await;
    assert!(!github_runner_removed(&h, foreign), "another scale set's runner is left alone");
    assert!(stored_pod(&h, RUNNER).is_none());
}

// ---------------------------------------------------------------------------------------------
// Race 1 (ARC-MODEL §8.1): the pod cache lags the create
// ---------------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_pod_create_answered_already_exists_logs_at_info_and_requeues_after_5_seconds() {
    let (logs, _guard) = CapturedLogs::install();
    let (h, scale_set_id) = setup(|b| lag_watches(b, &["pods"])).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    tokio::time::sleep(Duration::from_secs(10)).await;

    assert!(api_calls(&h, "create", "Pod", "409") >= 1, "the lagging cache made a second create");
    assert_eq!(reconcile_errors(&h, "AlreadyExists"), 0);
    let waits = logs.lines(tracing::Level::INFO, "pod already exists, waiting for the pod event");
    assert!(!waits.is_empty());
    assert!(waits.iter().all(|line| line.fields.get("requeue_after_ms").map(String::as_str) == Some("5000")));
    let requeues = h.metric(RECONCILE_TOTAL, &[("controller", CONTROLLER_NAME), ("result", "requeue_after")]);
    assert_eq!(requeues, waits.len() as i64);
    assert!(logs.lines(tracing::Level::ERROR, "Reconciler error").is_empty());
    assert_eq!(h.github.request_count(Operation::GenerateJitConfig, 200), 1);
}

#[tokio::test(start_paused = true)]
async fn without_the_4201_fix_a_pod_create_answered_already_exists_is_a_reconcile_error() {
    let (logs, _guard) = CapturedLogs::install();
    let (h, scale_set_id) = setup(|b| {
        lag_watches(b, &["pods"]);
        b.switches.fixes.already_exists_requeue = false;
    })
    .await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    tokio::time::sleep(Duration::from_secs(10)).await;

    let errors = reconcile_errors(&h, "AlreadyExists");
    assert!(errors > 1, "the rate-limited retries hit AlreadyExists again while the cache lags: {errors}");
    assert_eq!(api_calls(&h, "create", "Pod", "409"), errors);
    assert_eq!(logs.lines(tracing::Level::ERROR, "Reconciler error").len() as i64, errors);
    assert!(logs.lines(tracing::Level::INFO, "pod already exists, waiting for the pod event").is_empty());
    assert_eq!(failures(&h, RUNNER), 0, "AlreadyExists never counts as a pod failure");
}

#[tokio::test(start_paused = true)]
async fn the_jit_config_is_generated_once_per_runner_across_pod_recreations() {
    let (h, scale_set_id) = setup(|b| lag_watches(b, &["pods", "secrets"])).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    let first = wait_for_pod(&h, None).await;
    h.api::<Pod>(RUNNER_NS).delete(RUNNER, &DeleteParams::default()).await.expect("pod deleted");
    wait_for_pod(&h, Some(&first)).await;
    tokio::time::sleep(Duration::from_secs(10)).await;

    let generated: u64 = (h.github.request_counts().iter())
        .filter(|((operation, _), _)| operation == Operation::GenerateJitConfig.as_str())
        .map(|(_, count)| count)
        .sum();
    assert_eq!(generated, 1);
    assert!(!github_runner_removed(&h, runner_id(&h, RUNNER)));
}

#[tokio::test(start_paused = true)]
async fn with_secrets_cached_a_lagging_cache_registers_the_runner_again_and_removes_the_first() {
    let (h, scale_set_id) = setup(|b| {
        lag_watches(b, &["pods", "secrets"]);
        b.switches.fixes.secrets_read_uncached = false;
    })
    .await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    tokio::time::sleep(Duration::from_secs(10)).await;

    assert!(h.github.request_count(Operation::GenerateJitConfig, 200) >= 2);
    assert!(h.github.request_count(Operation::GenerateJitConfig, 409) >= 1);
    assert!(github_runner_removed(&h, runner_id(&h, RUNNER)), "the runner the pod starts with is gone");
}

#[tokio::test(start_paused = true)]
async fn failures_are_keyed_by_pod_uid_so_a_dead_pod_seen_twice_counts_once() {
    let (h, scale_set_id) = setup(|b| {
        lag_watches(b, &["pods"]);
        b.settings.failed_runner_backoff = vec![Duration::ZERO; 6];
    })
    .await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    let first = wait_for_pod(&h, None).await;

    patch_pod_status(
        &h,
        RUNNER,
        json!({"phase": "Failed", "containerStatuses": [container("runner", terminated(1))]}),
    )
    .await;

    wait_for_pod(&h, Some(&first)).await;
    assert_eq!(api_calls(&h, "delete", "Pod", "404"), 1, "the stale cache showed the dead pod again");
    let failures = stored_runner(&h, RUNNER).and_then(|er| er.status).expect("status").failures;
    assert_eq!(failures.keys().collect::<Vec<_>>(), [&first]);
}

// ---------------------------------------------------------------------------------------------
// #4580: finalizers one at a time
// ---------------------------------------------------------------------------------------------

/// Creates a runner without finalizers and returns how many main-resource patches it took.
async fn finalizer_patches(add_both_at_once: bool) -> i64 {
    let (h, scale_set_id) = setup(|b| b.switches.fixes.add_both_finalizers_at_once = add_both_at_once).await;
    let _manager = start(&h);
    create(&h, &runner_with(RUNNER, scale_set_id, runner_template(), false)).await;
    wait_for_pod(&h, None).await;
    let finalizers = stored_runner(&h, RUNNER).and_then(|er| er.metadata.finalizers).unwrap_or_default();
    assert_eq!(finalizers, [EPHEMERAL_RUNNER_FINALIZER, EPHEMERAL_RUNNER_REGISTRATION_FINALIZER]);
    api_calls(&h, "patch", "EphemeralRunner", "200")
}

#[tokio::test(start_paused = true)]
async fn both_finalizers_are_added_in_one_patch() {
    assert_eq!(finalizer_patches(true).await, 1);
}

#[tokio::test(start_paused = true)]
async fn without_the_4580_fix_finalizers_are_added_over_two_reconciles() {
    assert_eq!(finalizer_patches(false).await, 2);
}

// ---------------------------------------------------------------------------------------------
// §5.3: lazy copies
// ---------------------------------------------------------------------------------------------

/// Deep copies of the runner, reconciles, and the controller's writes, for one runner brought up to a
/// pod with lazy copies on or off.
async fn copies_reconciles_and_writes(lazy_copy: bool) -> (i64, i64, Vec<i64>) {
    let (h, scale_set_id) = setup(|b| b.switches.optimisations.lazy_copy = lazy_copy).await;
    let _manager = start(&h);
    create(&h, &runner(scale_set_id)).await;
    wait_for_pod(&h, None).await;
    tokio::time::sleep(Duration::from_secs(10)).await;

    let copies = h.metric(DEEP_COPIES_TOTAL, &[("kind", "EphemeralRunner")]);
    let reconciles = h.metric(RECONCILE_TOTAL, &[("controller", CONTROLLER_NAME)]);
    let writes = [("create", "Secret"), ("create", "Pod"), ("patch", "EphemeralRunner")]
        .into_iter()
        .chain([("patch_status", "EphemeralRunner")])
        .map(|(verb, kind)| h.metric(API_CALLS_TOTAL, &[("verb", verb), ("kind", kind)]))
        .collect();
    (copies, reconciles, writes)
}

#[tokio::test(start_paused = true)]
async fn with_lazy_copies_only_reconciles_that_write_copy_the_runner_and_the_writes_are_the_same() {
    let (lazy_copies, lazy_reconciles, lazy_writes) = copies_reconciles_and_writes(true).await;
    let (eager_copies, eager_reconciles, eager_writes) = copies_reconciles_and_writes(false).await;

    assert_eq!(eager_copies, eager_reconciles, "upstream copies once per reconcile");
    assert!(lazy_copies > 0 && lazy_copies < lazy_reconciles, "{lazy_copies} of {lazy_reconciles}");
    assert_eq!(lazy_reconciles, eager_reconciles);
    assert_eq!(lazy_writes, eager_writes);
}
