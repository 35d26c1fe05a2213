//! The legacy Runner controller (ARC-MODEL §7) against the fake API server and the fake GitHub, through
//! races 2 and 3 (§8.2 token refresh and pod recreation, #1087; §8.3 job assigned during delete, #1125).
//!
//! There is no kubelet model yet, so [`Kubelet`] stands in for one: when a runner pod appears it "starts
//! the container", which runs `config.sh` (`FakeGitHub::legacy_configure`) with the pod's `RUNNER_TOKEN`
//! and connects the runner; it patches the pod's status, runs the jobs GitHub assigns, and kills the
//! runner process when the pod is deleted (deleting with grace 0 if the pod lingers). Everything it saw
//! is in its log, so a test can ask whether a pod was ever killed mid-job.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_controller::Fixes;
use arc_controller::crd::{Runner, RunnerSpec};
use arc_controller::github::wire::LegacyRunner;
use arc_controller::legacy::LegacySettings;
use arc_controller::runtime::manager::Manager;
use arc_controller::runtime::metrics::{LEGACY_POD_RECREATIONS_TOTAL, LEGACY_RECREATIONS_DEFERRED_TOTAL};
use arc_controller::scaleset::resource_builder::GitHubCredentials;
use arc_sim::SimClock;
use arc_sim::apiserver::{Change, EventType};
use arc_sim::github::Operation;
use arc_sim::github::{
    EndReason, FakeGitHub, JobResult, JobSpec, JobState, RegistrationFailed, RunnerSession,
};
use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::support::fixtures::{CONFIG_SECRET, CONFIG_URL};
use crate::support::{CONTROLLER_NS, Harness, RUNNER_NS};

/// The Runner every test creates.
const RUNNER: &str = "legacy-runner";
/// Its custom label; jobs ask for it.
const LABEL: &str = "legacy";
/// The recheck interval plus jitter (ARC's defaults), the longest a due registration check waits.
const CHECK_INTERVAL: Duration = Duration::from_secs(60 + 10);

/// What the stand-in kubelet saw happen to runner containers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum KubeletEvent {
    /// `config.sh` succeeded with `token` and the runner connected.
    Started { pod_uid: String, token: String, runner_id: i64, at_ms: u64 },
    /// `config.sh` failed.
    RegistrationFailed { pod_uid: String, token: String, error: RegistrationFailed },
    /// The pod was deleted and its runner process died, holding `job` if it had one.
    Killed { pod_uid: String, runner_id: i64, job: Option<i64>, at_ms: u64 },
}

/// The stand-in kubelet's log.
#[derive(Clone, Default)]
struct Kubelet {
    events: Arc<Mutex<Vec<KubeletEvent>>>,
}

impl Kubelet {
    /// Starts playing the kubelet for pods in [`RUNNER_NS`]; the containers of the first `stalled`
    /// pods never start (an image that never pulls). Call before any pod exists.
    fn start(h: &Harness, stalled: usize) -> Kubelet {
        let kubelet = Kubelet::default();
        let pods = h.apiserver.registry().find_plural("pods").expect("pods are served");
        let worker = KubeletLoop {
            pods: h.api::<Pod>(RUNNER_NS),
            github: h.github.clone(),
            clock: h.clock,
            log: kubelet.clone(),
            containers: BTreeMap::new(),
            stalled,
        };
        let changes = h.apiserver.changes();
        tokio::spawn(worker.run(changes, pods));
        kubelet
    }

    fn record(&self, event: KubeletEvent) {
        self.events.lock().unwrap().push(event);
    }

    fn events(&self) -> Vec<KubeletEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Every successful start: (pod uid, token, runner id, sim ms).
    fn starts(&self) -> Vec<(String, String, i64, u64)> {
        let starts = self.events().into_iter().filter_map(|e| match e {
            KubeletEvent::Started { pod_uid, token, runner_id, at_ms } => {
                Some((pod_uid, token, runner_id, at_ms))
            }
            _ => None,
        });
        starts.collect()
    }

    /// Every kill: (pod uid, job the runner held, sim ms).
    fn kills(&self) -> Vec<(String, Option<i64>, u64)> {
        let kills = self.events().into_iter().filter_map(|e| match e {
            KubeletEvent::Killed { pod_uid, job, at_ms, .. } => Some((pod_uid, job, at_ms)),
            _ => None,
        });
        kills.collect()
    }

    fn registration_failures(&self) -> Vec<KubeletEvent> {
        let failures =
            self.events().into_iter().filter(|e| matches!(e, KubeletEvent::RegistrationFailed { .. }));
        failures.collect()
    }
}

/// A started runner container.
struct Container {
    pod_uid: String,
    runner_id: i64,
    session: RunnerSession,
    work: JoinHandle<()>,
}

/// The task behind [`Kubelet`].
struct KubeletLoop {
    pods: Api<Pod>,
    github: FakeGitHub,
    clock: SimClock,
    log: Kubelet,
    /// By pod name.
    containers: BTreeMap<String, Container>,
    /// Pods still to come whose containers never start.
    stalled: usize,
}

impl KubeletLoop {
    async fn run(mut self, mut changes: UnboundedReceiver<Arc<Change>>, pods: usize) {
        while let Some(change) = changes.next().await {
            if change.key.resource != pods || change.key.namespace != RUNNER_NS {
                continue;
            }
            let Ok(pod) = serde_json::from_value::<Pod>(Value::clone(&change.object)) else { continue };
            match change.kind {
                EventType::Added if self.stalled > 0 => self.stalled -= 1,
                EventType::Added => self.start_container(&pod).await,
                EventType::Modified if pod.metadata.deletion_timestamp.is_some() => {
                    self.kill(&pod);
                    let name = pod.metadata.name.clone().unwrap_or_default();
                    let _gone = self.pods.delete(&name, &DeleteParams::default().grace_period(0)).await;
                }
                EventType::Deleted => self.kill(&pod),
                EventType::Modified => {}
            }
        }
    }

    /// The runner container starts: `config.sh` with the pod's token, then `run.sh`.
    async fn start_container(&mut self, pod: &Pod) {
        let env = runner_env(pod);
        let (name, pod_uid) = (pod.metadata.name.clone().unwrap_or_default(), uid_of(pod));
        let token = env.get("RUNNER_TOKEN").cloned().unwrap_or_default();
        let labels: Vec<String> = env
            .get("RUNNER_LABELS")
            .into_iter()
            .flat_map(|l| l.split(','))
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        let ephemeral = env.get("RUNNER_EPHEMERAL").is_some_and(|e| e == "true");
        let registration = match self.github.legacy_configure(&token, &name, &labels, ephemeral) {
            Ok(registration) => registration,
            Err(error) => {
                self.log.record(KubeletEvent::RegistrationFailed { pod_uid, token, error });
                patch_status(&self.pods, &name, crash_looping()).await;
                return;
            }
        };
        let session =
            self.github.connect_runner(&registration.config).expect("a fresh registration connects");
        let runner_id = registration.runner_id;
        let at_ms = self.clock.elapsed_ms();
        self.log.record(KubeletEvent::Started { pod_uid: pod_uid.clone(), token, runner_id, at_ms });
        patch_status(&self.pods, &name, running()).await;
        let work = tokio::spawn(run_jobs(session.clone(), ephemeral, self.pods.clone(), name.clone()));
        self.containers.insert(name, Container { pod_uid, runner_id, session, work });
    }

    /// The pod is going: its runner process dies, mid-job or not.
    fn kill(&mut self, pod: &Pod) {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let Some(container) = self.containers.remove(&name) else { return };
        if container.pod_uid != uid_of(pod) {
            self.containers.insert(name, container);
            return;
        }
        container.work.abort();
        let job = self.github.runner(container.runner_id).and_then(|r| r.job());
        let at_ms = self.clock.elapsed_ms();
        let runner_id = container.runner_id;
        self.log.record(KubeletEvent::Killed { pod_uid: container.pod_uid, runner_id, job, at_ms });
        container.session.process_died();
    }
}

/// The runner process: runs the jobs GitHub assigns; an ephemeral one exits 0 after its first.
async fn run_jobs(session: RunnerSession, ephemeral: bool, pods: Api<Pod>, name: String) {
    if ephemeral {
        if session.run_one_job().await.is_ok() {
            patch_status(&pods, &name, exited_zero()).await;
        }
        return;
    }
    while session.run_one_job().await.is_ok() {}
}

fn uid_of(pod: &Pod) -> String {
    pod.metadata.uid.clone().unwrap_or_default()
}

fn runner_env(pod: &Pod) -> BTreeMap<String, String> {
    let containers = pod.spec.iter().flat_map(|s| s.containers.iter());
    let runner = containers.filter(|c| c.name == "runner").flat_map(|c| c.env.iter().flatten());
    runner.map(|e| (e.name.clone(), e.value.clone().unwrap_or_default())).collect()
}

fn runner_container_status(ready: bool, state: Value) -> Value {
    json!({"name": "runner", "image": "summerwind/actions-runner:latest", "imageID": "", "ready": ready, "restartCount": 0, "state": state})
}

fn running() -> Value {
    json!({"status": {"phase": "Running", "containerStatuses": [runner_container_status(true, json!({"running": {}}))]}})
}

fn crash_looping() -> Value {
    let waiting = json!({"waiting": {"reason": "CrashLoopBackOff"}});
    json!({"status": {"phase": "Running", "containerStatuses": [runner_container_status(false, waiting)]}})
}

fn exited_zero() -> Value {
    let terminated = json!({"terminated": {"exitCode": 0, "reason": "Completed"}});
    json!({"status": {"phase": "Succeeded", "containerStatuses": [runner_container_status(false, terminated)]}})
}

/// Patches a pod's status; a pod already gone is fine (the kubelet is told late).
async fn patch_status(pods: &Api<Pod>, name: &str, patch: Value) {
    let _maybe_gone = pods.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await;
}

/// The harness, the Runner controller on it, and the stand-in kubelet.
struct World {
    h: Harness,
    kubelet: Kubelet,
    _manager: Manager,
}

impl World {
    /// The controller with `fixes`, its GitHub secret in [`CONTROLLER_NS`], and the kubelet.
    async fn start(fixes: Fixes) -> World {
        World::start_stalling(fixes, 0).await
    }

    /// [`World::start`] with the first `stalled` pods' containers never starting.
    async fn start_stalling(fixes: Fixes, stalled: usize) -> World {
        let h = Harness::new();
        h.github_secret(CONTROLLER_NS).await;
        let settings = LegacySettings {
            github_secret_namespace: CONTROLLER_NS.into(),
            github_secret_name: CONFIG_SECRET.into(),
            watch_namespace: Some(RUNNER_NS.into()),
            ..LegacySettings::default()
        };
        let manager = h.start_legacy(settings, fixes);
        let kubelet = Kubelet::start(&h, stalled);
        World { h, kubelet, _manager: manager }
    }

    /// Creates the Runner for `arcsim/app`, and waits until its first pod's runner has registered.
    async fn runner_started(&self, ephemeral: bool) -> (String, String, i64, u64) {
        self.create_runner(ephemeral).await;
        let kubelet = &self.kubelet;
        let started = || !kubelet.starts().is_empty();
        self.h.eventually("the first runner pod registers", Duration::from_secs(30), started).await;
        self.kubelet.starts().remove(0)
    }

    /// Creates the Runner for `arcsim/app`.
    async fn create_runner(&self, ephemeral: bool) {
        let spec = RunnerSpec {
            repository: "arcsim/app".into(),
            labels: vec![LABEL.into()],
            ephemeral: Some(ephemeral),
            ..RunnerSpec::default()
        };
        let runner = Runner::new(RUNNER, spec);
        self.h
            .api::<Runner>(RUNNER_NS)
            .create(&PostParams::default(), &runner)
            .await
            .expect("the Runner is created");
    }

    fn runner(&self) -> Option<Runner> {
        let object = self.h.object("runners", RUNNER_NS, RUNNER)?;
        Some(serde_json::from_value(object).expect("a stored Runner reads back"))
    }

    fn pod(&self) -> Option<Pod> {
        let object = self.h.object("pods", RUNNER_NS, RUNNER)?;
        Some(serde_json::from_value(object).expect("a stored pod reads back"))
    }

    /// The registration token in the Runner's status and when it expires.
    fn status_token(&self) -> (String, Timestamp) {
        let runner = self.runner().expect("the Runner exists");
        let registration = runner.status.expect("the Runner has a status").registration;
        (registration.token, registration.expires_at.expect("the token has an expiry").0)
    }

    /// Sleeps in simulated time until `at`.
    async fn sleep_until(&self, at: Timestamp) {
        let wait = at.duration_since(self.h.clock_now());
        tokio::time::sleep(Duration::try_from(wait).unwrap_or(Duration::ZERO)).await;
    }

    /// GitHub's REST list of the scope's runners, through the production client: what the controller
    /// would read now (GitHub caches it up to 60 s, so this also fixes what it reads for that long).
    async fn list_runners(&self) -> Vec<LegacyRunner> {
        let credentials =
            GitHubCredentials { github_token: "ghp_arcsim".into(), ..GitHubCredentials::default() };
        let client = self
            .h
            .ctx
            .github
            .get(CONFIG_URL, &credentials, &Default::default())
            .expect("a client for the fake");
        client.list_runners().await.expect("the fake lists runners")
    }

    fn job_state(&self, job: i64) -> JobState {
        self.h.github.job(job).expect("the job exists").state
    }

    fn submit_job(&self, minutes: u64) -> i64 {
        self.h.github.submit_job(JobSpec::simple(&["self-hosted", LABEL], minutes * 60_000))
    }

    /// Waits until `runner_id` holds `job`.
    async fn job_assigned(&self, job: i64, runner_id: i64) {
        let github = &self.h.github;
        let holds = || github.runner(runner_id).is_some_and(|r| r.job() == Some(job));
        self.h.eventually("GitHub assigns the job to the runner", Duration::from_secs(10), holds).await;
    }
}

impl Harness {
    fn clock_now(&self) -> Timestamp {
        self.ctx.clock.now()
    }
}

fn plus(at: Timestamp, seconds: i64) -> Timestamp {
    at.checked_add(SignedDuration::from_secs(seconds)).expect("in range")
}

/// §8.3's schedule: 30 s before the token expires, GitHub's runner list is read (and cached) with the
/// runner idle; then a job is assigned to it. The controller's registration check right after the
/// expiry reads the stale "idle" and decides to recreate the pod.
async fn stale_idle_listing_then_job(w: &World, runner_id: i64, expires: Timestamp) -> i64 {
    w.sleep_until(plus(expires, -30)).await;
    let idle = |list: &[LegacyRunner]| list.iter().any(|r| r.id == runner_id && !r.busy);
    assert!(idle(&w.list_runners().await), "the runner is listed idle before the job");
    let job = w.submit_job(20);
    w.job_assigned(job, runner_id).await;
    assert!(idle(&w.list_runners().await), "the list still says idle: it is cached");
    job
}

#[tokio::test(start_paused = true)]
async fn an_idle_runner_gets_a_pod_with_the_new_token_within_a_check_interval_of_expiry() {
    let w = World::start(Fixes::all_on()).await;
    let (first_pod, first_token, _, _) = w.runner_started(false).await;
    let (token, expires) = w.status_token();
    assert_eq!(first_token, token, "the pod registers with the status token");

    w.sleep_until(expires).await;
    let kubelet = &w.kubelet;
    let bound = CHECK_INTERVAL + Duration::from_secs(5);
    w.h.eventually("a new pod registers with the refreshed token", bound, || kubelet.starts().len() == 2)
        .await;

    let (second_pod, second_token, _, _) = kubelet.starts().remove(1);
    let (refreshed, _) = w.status_token();
    assert_ne!(refreshed, token);
    assert_eq!(second_token, refreshed, "the new pod carries the new token");
    assert_ne!(second_pod, first_pod);
    assert_eq!(
        kubelet.kills().iter().map(|(uid, job, _)| (uid.clone(), *job)).collect::<Vec<_>>(),
        [(first_pod, None)]
    );
    assert!(kubelet.registration_failures().is_empty(), "{:?}", kubelet.registration_failures());
    assert_eq!(
        w.h.github.request_count(Operation::DeleteRunner, 204),
        1,
        "unregistered before the delete (#1125)"
    );
    assert_eq!(w.h.metric(LEGACY_POD_RECREATIONS_TOTAL, &[("reason", "template_changed")]), 1);
}

#[tokio::test(start_paused = true)]
async fn a_busy_runner_keeps_its_pod_through_a_token_refresh_until_its_job_ends() {
    let w = World::start(Fixes::all_on()).await;
    let (first_pod, token, runner_id, _) = w.runner_started(false).await;
    let (_, expires) = w.status_token();
    let job = w.submit_job(90);
    w.job_assigned(job, runner_id).await;

    w.sleep_until(plus(expires, 120)).await;
    let (refreshed, _) = w.status_token();
    assert_ne!(refreshed, token, "the token was refreshed at expiry");
    assert_eq!(w.pod().and_then(|p| p.metadata.uid), Some(first_pod.clone()), "the busy runner's pod stays");

    let github = &w.h.github;
    let done = || github.job(job).is_some_and(|j| j.is_completed());
    w.h.eventually("the job runs to its end", Duration::from_secs(90 * 60), done).await;
    let succeeded = JobState::Completed { result: JobResult::Succeeded, reason: EndReason::Completed };
    assert_eq!(w.job_state(job), succeeded);
    assert!(
        w.kubelet.kills().is_empty(),
        "nothing killed the runner while it was busy: {:?}",
        w.kubelet.kills()
    );

    let kubelet = &w.kubelet;
    let replaced = || kubelet.starts().len() == 2;
    w.h.eventually(
        "the idle runner's pod is replaced",
        2 * CHECK_INTERVAL + Duration::from_secs(60),
        replaced,
    )
    .await;
    assert_eq!(kubelet.starts()[1].1, refreshed);
    assert_eq!(kubelet.kills()[0].1, None, "replaced only once idle");
}

#[tokio::test(start_paused = true)]
async fn without_the_token_in_the_hash_the_pod_keeps_an_expired_token() {
    let w = World::start(Fixes { token_in_pod_hash: false, ..Fixes::all_on() }).await;
    let (first_pod, token, _, _) = w.runner_started(false).await;
    let (_, expires) = w.status_token();

    w.sleep_until(plus(expires, 5 * 60)).await;
    let (refreshed, _) = w.status_token();
    assert_ne!(refreshed, token, "the status got a new token");
    let pod = w.pod().expect("the pod is still there");
    assert_eq!(pod.metadata.uid, Some(first_pod), "the pod was not recreated");
    assert_eq!(runner_env(&pod)["RUNNER_TOKEN"], token, "it still carries the expired token");
    assert!(w.kubelet.kills().is_empty(), "{:?}", w.kubelet.kills());

    let restart = w.h.github.legacy_configure(&token, RUNNER, &[LABEL.into()], false);
    assert_eq!(restart, Err(RegistrationFailed::TokenExpired), "a container restart cannot register");
}

#[tokio::test(start_paused = true)]
async fn without_unregister_a_stale_idle_listing_kills_a_busy_runner_and_loses_its_job() {
    let w = World::start(Fixes { unregister_before_recreate: false, ..Fixes::all_on() }).await;
    let (_, _, runner_id, _) = w.runner_started(false).await;
    let (_, expires) = w.status_token();
    let job = stale_idle_listing_then_job(&w, runner_id, expires).await;

    let kubelet = &w.kubelet;
    w.h.eventually("the pod is deleted after the expiry", CHECK_INTERVAL, || !kubelet.kills().is_empty())
        .await;
    assert_eq!(kubelet.kills()[0].1, Some(job), "the pod was killed mid-job (#911)");
    assert_eq!(w.h.github.request_count(Operation::DeleteRunner, 204), 0, "no unregister before #1125");

    let github = &w.h.github;
    let over = || github.job(job).is_some_and(|j| j.is_completed());
    w.h.eventually("the job ends", Duration::from_secs(10 * 60), over).await;
    assert_eq!(w.h.github.job(job).unwrap().end_reason(), Some(EndReason::RunnerLost));
}

#[tokio::test(start_paused = true)]
async fn with_unregister_a_stale_idle_listing_keeps_a_busy_runners_pod_and_its_job_completes() {
    let w = World::start(Fixes::all_on()).await;
    let (first_pod, _, runner_id, _) = w.runner_started(false).await;
    let (_, expires) = w.status_token();
    let job = stale_idle_listing_then_job(&w, runner_id, expires).await;

    w.sleep_until(plus(expires, 90)).await;
    assert!(w.h.github.request_count(Operation::DeleteRunner, 422) >= 1, "RemoveRunner answered busy");
    assert_eq!(w.h.github.request_count(Operation::DeleteRunner, 204), 0);
    assert!(w.h.metric(LEGACY_RECREATIONS_DEFERRED_TOTAL, &[("reason", "runner_busy")]) >= 1);
    assert!(w.kubelet.kills().is_empty(), "the pod was kept: {:?}", w.kubelet.kills());
    assert_eq!(w.pod().and_then(|p| p.metadata.uid), Some(first_pod));

    let github = &w.h.github;
    let over = || github.job(job).is_some_and(|j| j.is_completed());
    w.h.eventually("the job ends", Duration::from_secs(20 * 60), over).await;
    let succeeded = JobState::Completed { result: JobResult::Succeeded, reason: EndReason::Completed };
    assert_eq!(w.job_state(job), succeeded);
    let kubelet = &w.kubelet;
    let replaced = || kubelet.starts().len() == 2;
    w.h.eventually(
        "the idle runner's pod is replaced",
        2 * CHECK_INTERVAL + Duration::from_secs(60),
        replaced,
    )
    .await;
    assert_eq!(kubelet.kills()[0].1, None);
}

#[tokio::test(start_paused = true)]
async fn a_stopped_ephemeral_runner_is_deleted_after_its_job() {
    let w = World::start(Fixes::all_on()).await;
    let (_, _, runner_id, _) = w.runner_started(true).await;
    let job = w.submit_job(5);
    w.job_assigned(job, runner_id).await;

    let gone = || w.runner().is_none() && w.pod().is_none();
    w.h.eventually("the Runner and its pod go", Duration::from_secs(5 * 60 + 120), gone).await;
    assert!(w.h.github.job(job).unwrap().is_completed());
    assert_eq!(w.kubelet.kills().iter().map(|(_, job, _)| *job).collect::<Vec<_>>(), [None]);
    assert_eq!(w.kubelet.starts().len(), 1, "an ephemeral runner's pod is not recreated");
}

#[tokio::test(start_paused = true)]
async fn deleting_a_runner_unregisters_it_before_its_finalizer_goes() {
    let w = World::start(Fixes::all_on()).await;
    let (_, _, runner_id, _) = w.runner_started(false).await;
    let finalizers = w.runner().and_then(|r| r.metadata.finalizers).unwrap_or_default();
    assert_eq!(finalizers, ["runner.actions.summerwind.dev"]);

    w.h.api::<Runner>(RUNNER_NS)
        .delete(RUNNER, &DeleteParams::default())
        .await
        .expect("the delete is accepted");
    let gone = || w.runner().is_none();
    w.h.eventually("the Runner goes", Duration::from_secs(30), gone).await;
    assert!(w.h.github.runner(runner_id).is_some_and(|r| r.is_removed()), "GitHub no longer has the runner");
    assert_eq!(w.h.github.request_count(Operation::DeleteRunner, 204), 1);
}

#[tokio::test(start_paused = true)]
async fn a_runner_that_never_registers_gets_its_pod_recreated_after_the_registration_timeout() {
    let w = World::start_stalling(Fixes::all_on(), 1).await;
    w.create_runner(false).await;
    let h = &w.h;
    h.eventually("the first pod exists", Duration::from_secs(10), || w.pod().is_some()).await;
    let first_pod = w.pod().and_then(|p| p.metadata.uid);

    let timeout = Duration::from_secs(10 * 60);
    h.consistently("the unregistered pod is given the timeout", timeout, || {
        w.pod().and_then(|p| p.metadata.uid) == first_pod
    })
    .await;
    let list_calls = h.metric("arc_github_calls_total", &[("operation", "list-runners")]);
    // Once per interval, plus one for a reconcile that read the Runner before its check stamp landed;
    // without the deferral every stamp would trigger the next check at once.
    assert!(list_calls <= 12, "ListRunners at most once per recheck interval, not {list_calls} times");

    let kubelet = &w.kubelet;
    h.eventually("a new pod registers", CHECK_INTERVAL + Duration::from_secs(5), || {
        kubelet.starts().len() == 1
    })
    .await;
    assert_ne!(Some(kubelet.starts()[0].0.clone()), first_pod);
    assert_eq!(h.metric(LEGACY_POD_RECREATIONS_TOTAL, &[("reason", "never_registered")]), 1);
}
