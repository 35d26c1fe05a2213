//! A fake GitHub with an `ActionsClient` pointed at it, and shortcuts for the usual setup.

use arc_world::seam::controller_clock;

use arc_controller::github::job_messages::JobMessage;
use arc_controller::github::wire::{
    JitRunnerSetting, Label, RunnerScaleSet, RunnerScaleSetMessage, RunnerScaleSetSession, RunnerSetting,
};
use arc_controller::github::{ActionsClient, Credentials};
use arc_controller::runtime::metrics::Metrics;
use arc_sim::faults::FaultPlan;
use arc_sim::github::{FakeGitHub, GitHubConfig, RunnerSession};
use arc_sim::record::Recorder;
use arc_sim::{Seed, SimClock, TraceMode};

/// The organisation every rig serves.
pub(super) const CONFIG_URL: &str = "https://github.com/arcsim";

pub(super) struct Rig {
    pub fake: FakeGitHub,
    pub client: ActionsClient,
    pub metrics: Metrics,
    pub clock: SimClock,
    pub record: Recorder,
}

pub(super) fn rig(seed: u64, config: GitHubConfig) -> Rig {
    rig_with_faults(seed, config, &FaultPlan::none())
}

pub(super) fn rig_with_faults(seed: u64, config: GitHubConfig, faults: &FaultPlan) -> Rig {
    let clock = SimClock::start();
    let trace = Recorder::new(clock, TraceMode::Full);
    let fake = FakeGitHub::new(Seed(seed), clock, trace.clone(), config, faults).expect("valid fake");
    let metrics = Metrics::new();
    let credentials = Credentials::Token("ghp_arcsim".into());
    let client =
        ActionsClient::new(fake.service(), CONFIG_URL, credentials, controller_clock(clock), metrics.clone())
            .expect("valid client");
    Rig { fake, client, metrics, clock, record: trace }
}

impl Rig {
    /// Sim ms now.
    pub(super) fn ms(&self) -> u64 {
        self.clock.elapsed_ms()
    }

    /// Creates scale set `name` (labels: its name) through the API, as ARC does.
    pub(super) async fn scale_set(&self, name: &str) -> i64 {
        let set = RunnerScaleSet {
            name: name.into(),
            runner_group_id: 1,
            labels: vec![Label::system(name)],
            runner_setting: RunnerSetting { disable_update: true, ..RunnerSetting::default() },
            ..RunnerScaleSet::default()
        };
        self.client.create_runner_scale_set(&set).await.expect("create scale set").id
    }

    /// Registers runner `name` by JIT config and connects its process.
    pub(super) async fn runner(&self, scale_set_id: i64, name: &str) -> RunnerSession {
        let setting = JitRunnerSetting { name: name.into(), work_folder: "_work".into() };
        let jit = self.client.generate_jit_runner_config(&setting, scale_set_id).await.expect("jit config");
        self.fake.connect_runner(&jit.encoded_jit_config).expect("runner connects")
    }

    pub(super) async fn session(&self, scale_set_id: i64) -> RunnerScaleSetSession {
        self.client.create_message_session(scale_set_id, "listener").await.expect("session")
    }

    /// One long poll; the message and its decoded job messages, or `None` on 202.
    pub(super) async fn poll(
        &self,
        session: &RunnerScaleSetSession,
        last: i64,
    ) -> Option<(RunnerScaleSetMessage, Vec<JobMessage>)> {
        let message = self
            .client
            .get_message(&session.message_queue_url, &session.message_queue_access_token, last, 10)
            .await
            .expect("get message")?;
        let jobs = JobMessage::parse_batch(&message.body).expect("job messages");
        Some((message, jobs))
    }

    /// Polls once, acks, and acquires every JobAvailable in the message. Returns the message id and
    /// the acquired request ids.
    pub(super) async fn poll_and_acquire(
        &self,
        scale_set_id: i64,
        session: &RunnerScaleSetSession,
        last: i64,
    ) -> (i64, Vec<i64>) {
        let (message, jobs) = self.poll(session, last).await.expect("a message");
        let token = &session.message_queue_access_token;
        self.client.delete_message(&session.message_queue_url, token, message.message_id).await.expect("ack");
        let available: Vec<i64> = jobs
            .iter()
            .filter_map(|j| match j {
                JobMessage::Available(a) => Some(a.base.runner_request_id),
                _ => None,
            })
            .collect();
        let acquired = self.client.acquire_jobs(scale_set_id, token, &available).await.expect("acquire");
        (message.message_id, acquired)
    }
}

/// The message types in a batch, in order.
pub(super) fn types(jobs: &[JobMessage]) -> Vec<&str> {
    jobs.iter().map(|j| j.base().map_or("unknown", |b| b.message_type.as_str())).collect()
}
