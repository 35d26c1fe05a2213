//! The fake GitHub: a **stateful** model of the Actions service and GitHub's runner REST API
//! (ARC-MODEL §6), served over the real wire format so the controller's production `ActionsClient`
//! runs against it unchanged.
//!
//! ```text
//!   ActionsClient ──http──► GitHubService ──► faults ──► auth ──► World (one lock)
//!   kubelet model ──Rust──► FakeGitHub::connect_runner ─► RunnerSession (next_job, complete_job, …)
//!   workload      ──Rust──► FakeGitHub::submit_job / cancel_job
//!   oracles       ◄─views── FakeGitHub::runners / jobs / events …
//!   background tasks: the assigner (seeded latency, seeded runner choice), lost-runner timers
//! ```
//!
//! Map of the module: `state` (the data), `scale_sets`, `jobs`, `runners`, `assign` (assignment and
//! RemoveRunner, serialised), `start` (JobStarted and the runner's pickup after an assignment),
//! `capacity` (`X-ScaleSetMaxCapacity` on acquisition and assignment), `sessions` (sessions, queue,
//! long poll), `auth` (tokens), `app_auth` (GitHub App JWTs and installation tokens), `legacy` (REST
//! runners, `config.sh`), `service` + `route` + `reply` (HTTP), `tcp` (the same service on a socket),
//! `timing` (call latency before and after the commit, JobStarted and pickup delays), `faults`,
//! `process` (runner processes), `model` + `events` (what callers can read), `config` (knobs),
//! `tokens`, `scripted` (canned answers layered over the service, for tests), `wire` + `messages`
//! (the bodies, in the fake's own types), `operation` (the names of what it serves), `index` (runners
//! and jobs by state, and which of them a change touched, so each runner process is woken only by a
//! change to its own runner or job), `held` (the GitHub-side perturbations of `arcsim explore`: a held
//! assignment, a held request).
//!
//! Every state change is an event in [`FakeGitHub::events`] and a trace line (actor `github`); every
//! request is counted by operation and status ([`FakeGitHub::request_count`]; status 0 is a dropped
//! connection) and recorded as a [`GitHubCall`], every fault that fires as a [`GitHubFaultFired`].
//! Randomness comes only from `Seed::rng(Component::GitHub)` (assignment latency and runner choice),
//! the named streams `github/latency` (call latency) and `github/job-timing` (JobStarted and pickup
//! delays), and `Component::GitHubFaults` (the fault layer).

mod app_auth;
mod assign;
pub mod assumptions;
mod auth;
mod capacity;
mod config;
mod events;
mod faults;
mod jobs;
mod legacy;
mod messages;
mod model;
mod operation;
mod process;
mod reply;
mod route;
mod rsa_key;
mod runner_sessions;
mod runners;
mod scale_sets;
mod scripted;
mod service;
mod sessions;
mod start;
mod state;
pub mod tcp;
mod timing;
mod tokens;
mod wire;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

pub use app_auth::{CLOCK_DRIFT_SECONDS, MAX_LIFETIME_SECONDS};
pub use assign::SessionEnded;
pub use assumptions::{AssumeError, Assumed};
pub use config::{GitHubApp, GitHubConfig, GitHubConfigError, UnknownRunnerAnswer};
pub use events::{ConnectRefused, EventKind, GitHubCall, GitHubEvent, GitHubFaultFired, RemoveOutcome};
pub use jobs::CancelError;
pub use legacy::{LegacyRegistration, RegistrationFailed};
pub use model::{
    EndReason, Job, JobResult, JobSpec, JobState, RemovalReason, Runner, RunnerState, ScaleSet, Session,
};
pub use operation::Operation;

/// The operation `method path` is, or `None` for a request the fake does not serve.
pub fn operation_of(method: &http::Method, path: &str) -> Option<Operation> {
    route::Route::parse(method, path).map(|r| r.operation())
}
pub use config::RestRateLimit;
pub use process::{AssignedJob, RunnerSession};
pub use scripted::{CannedAnswer, ScriptedGitHub};
pub use service::{ConnectionDropped, GitHubService};
pub use timing::{CallLatency, DelayRange, LatencyClass, ServiceLatency};
pub use wire::{Label, RegistrationToken, RunnerSetting, Statistics};

use crate::clock::SimClock;
use crate::faults::{FaultPlan, FaultPlanError};
use crate::record::Recorder;
use crate::seed::Seed;
use faults::FaultLayer;
use model::Assignment;
use runners::LostJob;
use state::World;
use state::index::Topic;

/// Why a fake could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GitHubSetupError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] GitHubConfigError),
    /// The fault plan is invalid.
    #[error(transparent)]
    Faults(#[from] FaultPlanError),
    /// Called outside a tokio runtime: the fake's background tasks need the run's runtime.
    #[error("FakeGitHub::new must be called inside the run's tokio runtime")]
    NoRuntime,
}

/// State shared by the handle, the service and the background tasks.
pub(crate) struct Shared {
    world: Mutex<World>,
    faults: Mutex<FaultLayer>,
    /// Woken (all waiters) after every change: the assigner and the long polls, a handful.
    changed: Notify,
    /// Per topic, woken after a change that touched it: the runner processes, one or two waiters
    /// per runner, each woken only by a change to its own runner or job.
    topics: Mutex<BTreeMap<Topic, Arc<Notify>>>,
    /// The run's schedule (`service`: around each commit; the assigner).
    schedule: crate::schedule::SchedulerSlot,
    /// This, for the timers a change asks for (`later`).
    this: std::sync::Weak<Shared>,
    /// Whether a long poll is served by a task of its own (`service`), as in worlds whose processes
    /// stop: the service answers a stopped client's poll, and the answer waits for it.
    detached_long_polls: std::sync::atomic::AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs a change under the lock, then wakes the waiters of what it touched (in topic order)
    /// and everyone waiting for any change.
    fn mutate<T>(&self, change: impl FnOnce(&mut World) -> T) -> T {
        let (result, touched, later) = {
            let mut world = self.lock();
            let result = change(&mut world);
            (result, world.take_touched(), world.take_later())
        };
        if let (false, Some(this)) = (later.is_empty(), self.this.upgrade()) {
            state::later::spawn(&this, later);
        }
        self.wake(&touched);
        self.changed.notify_waiters();
        result
    }

    fn topics(&self) -> MutexGuard<'_, BTreeMap<Topic, Arc<Notify>>> {
        self.topics.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Wakes the waiters of each touched topic.
    fn wake(&self, touched: &BTreeSet<Topic>) {
        let topics = self.topics();
        for notify in touched.iter().filter_map(|topic| topics.get(topic)) {
            notify.notify_waiters();
        }
    }

    /// Waits until `probe`, which must read only what `topic` covers, returns a value.
    async fn wait_on<T>(&self, topic: Topic, probe: impl FnMut(&mut World) -> Option<T>) -> T {
        let notify = Arc::clone(self.topics().entry(topic).or_default());
        let value = self.wait_for(&notify, probe).await;
        let mut topics = self.topics();
        if Arc::strong_count(&notify) == 2 {
            topics.remove(&topic);
        }
        value
    }

    /// Waits until `probe` returns a value, probing after every change.
    async fn wait_until<T>(&self, probe: impl FnMut(&mut World) -> Option<T>) -> T {
        self.wait_for(&self.changed, probe).await
    }

    /// Waits until `probe` returns a value, probing again each time `notify` wakes its waiters.
    async fn wait_for<T>(&self, notify: &Notify, mut probe: impl FnMut(&mut World) -> Option<T>) -> T {
        loop {
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(value) = probe(&mut self.lock()) {
                return value;
            }
            notified.await;
        }
    }

    /// Waits until `probe` returns a value or `deadline` passes (then probes once more).
    async fn wait_until_deadline<T>(
        &self,
        deadline: Instant,
        mut probe: impl FnMut(&mut World) -> Option<T>,
    ) -> Option<T> {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(value) = probe(&mut self.lock()) {
                return Some(value);
            }
            tokio::select! {
                biased;
                () = &mut notified => {}
                () = tokio::time::sleep_until(deadline) => return probe(&mut self.lock()),
            }
        }
    }
}

/// The assigner: whenever a job and an idle runner for it exist, wait a seeded latency, then assign
/// whatever is assignable at that moment (and time its JobStarted).
async fn run_assigner(shared: Arc<Shared>) {
    loop {
        shared.wait_until(|w| w.next_assignable().map(drop)).await;
        let latency = shared.lock().draw_assignment_latency();
        tokio::time::sleep(latency).await;
        shared.schedule.get().point(|| "github/assigner".into()).await;
        let assigned = shared.mutate(World::assign_next);
        state::held::time_release(&shared);
        if let Some(Assignment { request_id, job_started_in: Some(delay), .. }) = assigned {
            spawn_job_started_timer(&shared, request_id, delay);
        }
    }
}

fn spawn_job_started_timer(shared: &Arc<Shared>, request_id: i64, delay: Duration) {
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        shared.mutate(|w| w.send_job_started(request_id));
    });
}

fn spawn_lost_runner_timer(shared: &Arc<Shared>, lost: LostJob) {
    let timeout = Duration::from_millis(shared.lock().cfg.lost_runner_timeout_ms);
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        tokio::time::sleep(timeout).await;
        shared.mutate(|w| w.expire_lost_runner(lost.runner_id, lost.request_id));
    });
}

/// A handle on one fake GitHub. Cheap to clone; clones share the fake.
#[derive(Clone)]
pub struct FakeGitHub {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeGitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let world = self.shared.lock();
        f.debug_struct("FakeGitHub")
            .field("scale_sets", &world.scale_sets.len())
            .field("runners", &world.runners.len())
            .field("jobs", &world.jobs.len())
            .finish()
    }
}

impl FakeGitHub {
    /// A fake with no scale sets, runners or jobs. Must be called inside the run's tokio runtime
    /// (current-thread, paused time): it spawns the assigner, which lives as long as the runtime.
    pub fn new(
        seed: Seed,
        clock: SimClock,
        record: Recorder,
        config: GitHubConfig,
        faults: &FaultPlan,
    ) -> Result<FakeGitHub, GitHubSetupError> {
        config.validate()?;
        faults.validate()?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| GitHubSetupError::NoRuntime)?;
        let mut world = World::new(seed, clock, record, config);
        world.held = state::held::Held::new(&faults.perturbations);
        let shared = Arc::new_cyclic(|this| Shared {
            world: Mutex::new(world),
            faults: Mutex::new(FaultLayer::new(seed, faults)),
            changed: Notify::new(),
            topics: Mutex::new(BTreeMap::new()),
            schedule: Default::default(),
            this: this.clone(),
            detached_long_polls: Default::default(),
        });
        runtime.spawn(run_assigner(Arc::clone(&shared)));
        Ok(FakeGitHub { shared })
    }

    /// The HTTP face, for an `ActionsClient`.
    pub fn service(&self) -> GitHubService {
        GitHubService { shared: Arc::clone(&self.shared) }
    }

    /// The configuration in force.
    pub fn config(&self) -> GitHubConfig {
        self.shared.lock().cfg.clone()
    }

    /// Queues a job; returns its request id.
    pub fn submit_job(&self, spec: JobSpec) -> i64 {
        self.shared.mutate(|w| w.submit_job(spec))
    }

    /// Cancels a job that has not ended.
    pub fn cancel_job(&self, request_id: i64) -> Result<(), CancelError> {
        self.shared.mutate(|w| w.cancel_job(request_id))
    }

    /// A runner process starts with `config` (a JIT config, or a legacy registration's config).
    pub fn connect_runner(&self, config: &str) -> Result<RunnerSession, ConnectRefused> {
        let (runner_id, connection) = self.shared.mutate(|w| w.connect(config))?;
        Ok(RunnerSession { shared: Arc::clone(&self.shared), runner_id, connection })
    }

    /// Issues a registration token for REST scope `scope` (`/orgs/my-org`), as
    /// `POST …/actions/runners/registration-token` would.
    pub fn issue_registration_token(&self, scope: &str) -> RegistrationToken {
        self.shared.mutate(|w| w.issue_registration_token(scope))
    }

    /// A legacy runner container runs `config.sh --replace` with `token`.
    pub fn legacy_configure(
        &self,
        token: &str,
        name: &str,
        labels: &[String],
        ephemeral: bool,
    ) -> Result<LegacyRegistration, RegistrationFailed> {
        self.shared.mutate(|w| w.legacy_configure(token, name, labels, ephemeral))
    }

    /// Creates a scale set directly (as if through the API) in runner group `runner_group_id`, with
    /// System labels `labels`. Returns its id.
    pub fn create_scale_set(&self, name: &str, runner_group_id: i64, labels: &[&str]) -> i64 {
        let labels = labels.iter().map(|l| Label::system(*l)).collect();
        let setting = RunnerSetting { disable_update: true, ..RunnerSetting::default() };
        self.shared.mutate(|w| w.create_scale_set(name, runner_group_id, labels, setting))
    }

    /// Deletes the scale set named `name` as an org admin would in GitHub's settings (no check for
    /// busy runners); `false` when there is none. The world's `DeleteScaleSet` disruption (#4370).
    pub fn delete_scale_set_named(&self, name: &str) -> bool {
        self.shared.mutate(|w| {
            let id = w.scale_sets.values().find(|s| s.name == name).map(|s| s.id);
            id.inspect(|id| w.delete_scale_set(*id)).is_some()
        })
    }

    /// Every runner ever registered, removed ones included, by id.
    pub fn runners(&self) -> Vec<Runner> {
        self.shared.lock().runners.values().cloned().collect()
    }

    /// One runner.
    pub fn runner(&self, runner_id: i64) -> Option<Runner> {
        self.shared.lock().runners.get(&runner_id).cloned()
    }

    /// Every job, by request id.
    pub fn jobs(&self) -> Vec<Job> {
        self.shared.lock().jobs.values().cloned().collect()
    }

    /// Whether every job submitted so far has completed.
    pub fn all_jobs_completed(&self) -> bool {
        self.shared.lock().index.open_jobs.is_empty()
    }

    /// One job.
    pub fn job(&self, request_id: i64) -> Option<Job> {
        self.shared.lock().jobs.get(&request_id).cloned()
    }

    /// Every scale set, by id.
    pub fn scale_sets(&self) -> Vec<ScaleSet> {
        self.shared.lock().scale_sets.values().cloned().collect()
    }

    /// Every open session, by id.
    pub fn sessions(&self) -> Vec<Session> {
        self.shared.lock().sessions.values().cloned().collect()
    }

    /// The statistics of a scale set now.
    pub fn statistics(&self, scale_set_id: i64) -> Option<Statistics> {
        let world = self.shared.lock();
        world.scale_sets.contains_key(&scale_set_id).then(|| world.statistics(scale_set_id))
    }

    /// The event log so far.
    pub fn events(&self) -> Vec<GitHubEvent> {
        let record = self.shared.lock().record.clone();
        record.events_of::<GitHubEvent>().into_iter().map(|(_, e)| e).collect()
    }

    /// Requests answered for `operation` with `status`.
    pub fn request_count(&self, operation: Operation, status: u16) -> u64 {
        let world = self.shared.lock();
        world.requests.get(&(operation.as_str().to_string(), status)).copied().unwrap_or(0)
    }

    /// Every request count, by (operation name, status); unroutable requests are under `unknown`.
    pub fn request_counts(&self) -> BTreeMap<(String, u16), u64> {
        self.shared.lock().requests.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceMode;

    #[test]
    fn building_a_fake_outside_a_runtime_is_an_error_not_a_panic() {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        let clock = runtime.block_on(async { SimClock::start() });
        let record = Recorder::new(clock, TraceMode::HashOnly);
        let outside =
            FakeGitHub::new(Seed(1), clock, record.clone(), GitHubConfig::default(), &FaultPlan::none());
        assert_eq!(outside.unwrap_err(), GitHubSetupError::NoRuntime);
        let bad = GitHubConfig { long_poll_timeout_ms: 0, ..GitHubConfig::default() };
        let inside =
            runtime.block_on(async { FakeGitHub::new(Seed(1), clock, record, bad, &FaultPlan::none()) });
        assert!(matches!(inside.unwrap_err(), GitHubSetupError::Config(_)));
    }
}
