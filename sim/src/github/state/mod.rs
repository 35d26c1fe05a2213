//! [`World`]: everything the fake service knows, behind one lock. Holding that lock is what makes
//! each operation atomic, and in particular what serialises RemoveRunner against job assignment.
//!
//! The operations live in sibling files by concern (`scale_sets`, `jobs`, `runners`, `assign`,
//! `sessions`, `legacy`); this file holds the data, the clocks and counters, and the event log. The
//! parts of the data with their own upkeep are children of this module, since the world holds them:
//! the topic index ([`index`]), the statistics ledger ([`statistics_ledger`]), timed follow-ups
//! ([`later`]), held assignments ([`held`]), REST rate-limit budgets ([`rate_limits`]) and stale read
//! views ([`stale_reads`]).

pub(super) mod held;
pub(super) mod index;
pub(super) mod later;
pub(super) mod rate_limits;
pub(super) mod stale_reads;
mod statistics_ledger;

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use rand_chacha::ChaCha8Rng;

use super::config::GitHubConfig;
use super::events::{EventKind, GitHubEvent};
use super::messages::JobMessage;
use super::model::{Job, Runner, ScaleSet, Session};
use super::wire::{Message, RestRunner};
use crate::clock::SimClock;
use crate::record::Recorder;
use crate::seed::{Component, Seed};
use index::StateIndex;
use statistics_ledger::StatisticsLedger;

/// One scale set's message queue.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    /// Job messages not yet sealed into a message.
    pub pending: Vec<JobMessage>,
    /// Sealed, unacknowledged messages by id.
    pub sealed: BTreeMap<i64, Message>,
    /// The last message id handed out.
    pub last_id: i64,
}

/// A registration token.
#[derive(Debug, Clone)]
pub(crate) struct RegistrationTokenRec {
    /// The REST scope it was created for (`/orgs/x`).
    pub scope: String,
    /// Sim ms it expires.
    pub expires_ms: u64,
}

/// A cached legacy runner list.
#[derive(Debug, Clone)]
pub(crate) struct CachedRunnerList {
    pub taken_ms: u64,
    pub runners: Vec<RestRunner>,
}

/// An issued installation token.
#[derive(Debug, Clone)]
pub(crate) struct InstallationTokenRec {
    /// Sim ms it expires.
    pub expires_ms: u64,
    /// The installation it acts for (whose REST budget it spends).
    pub installation_id: i64,
}

/// The fake service's whole state.
pub(crate) struct World {
    pub cfg: GitHubConfig,
    pub clock: SimClock,
    pub record: Recorder,
    pub seed: Seed,
    /// Assignment latency and runner choice.
    pub rng: ChaCha8Rng,
    /// Call latencies (stream `github/latency`).
    pub latency_rng: ChaCha8Rng,
    /// JobStarted and pickup delays (stream `github/job-timing`).
    pub job_timing_rng: ChaCha8Rng,
    counter: u64,
    pub groups: BTreeMap<i64, String>,
    pub scale_sets: BTreeMap<i64, ScaleSet>,
    pub runners: BTreeMap<i64, Runner>,
    /// The secret in each runner's config, by runner id.
    pub runner_secrets: BTreeMap<i64, String>,
    pub jobs: BTreeMap<i64, Job>,
    pub sessions: BTreeMap<String, Session>,
    pub queues: BTreeMap<i64, Queue>,
    pub registration_tokens: BTreeMap<String, RegistrationTokenRec>,
    pub admin_tokens: BTreeMap<String, u64>,
    pub installation_tokens: BTreeMap<String, InstallationTokenRec>,
    pub legacy_lists: BTreeMap<String, CachedRunnerList>,
    /// REST budgets spent (assumption `rest-rate-limits`).
    pub rate_ledger: rate_limits::RateLedger,
    pub requests: BTreeMap<(String, u16), u64>,
    /// Assigned scale-set jobs whose JobStarted has not been queued yet: request id → runner id.
    pub pending_started: BTreeMap<i64, i64>,
    /// Assigned jobs their runner process has not started yet: request id → sim ms it will.
    pub pickup_due_ms: BTreeMap<i64, u64>,
    /// Per scale set, the queued jobs AcquireJobs left for lack of capacity, to offer again.
    pub deferred: BTreeMap<i64, BTreeSet<i64>>,
    /// Runner and job ids by state, and what changed since the last wake-up.
    pub(crate) index: StateIndex,
    /// Every scale set's statistics, kept as jobs and runners change.
    pub(crate) ledger: StatisticsLedger,
    /// The plan's GitHub-side perturbations (`held`): a held job, held requests.
    pub(crate) held: held::Held,
    /// Timers asked for by the last change, for `Shared::mutate` to start (`later`).
    pub(crate) later: Vec<(std::time::Duration, later::Later)>,
    /// Runners whose process died while idle and that the service has not noticed yet: runner id →
    /// the dead process's connection (assumption `dead-runner-detection`).
    pub dead_processes: BTreeMap<i64, u64>,
    /// Runner sessions created over HTTP whose process has not yet taken them up: session id → the
    /// runner and connection (`runner_sessions`).
    pub(crate) unclaimed_sessions: BTreeMap<String, (i64, u64)>,
    /// The views reads are served from (assumption `service-reads`).
    pub(crate) views: stale_reads::ReadViews,
    /// Who the call being served named as its caller, while it is served (the `by` of its events).
    pub(crate) caller: Option<String>,
}

impl World {
    /// A service with only the runner groups of `cfg`.
    pub(super) fn new(seed: Seed, clock: SimClock, record: Recorder, cfg: GitHubConfig) -> World {
        let mut groups = BTreeMap::from([(1, "Default".to_string())]);
        groups.extend(cfg.runner_groups.iter().cloned().zip(2..).map(|(name, id)| (id, name)));
        World {
            rng: seed.rng(Component::GitHub),
            latency_rng: seed.named_rng("github/latency"),
            job_timing_rng: seed.named_rng("github/job-timing"),
            cfg,
            clock,
            record,
            seed,
            counter: 0,
            groups,
            scale_sets: BTreeMap::new(),
            runners: BTreeMap::new(),
            runner_secrets: BTreeMap::new(),
            jobs: BTreeMap::new(),
            sessions: BTreeMap::new(),
            queues: BTreeMap::new(),
            registration_tokens: BTreeMap::new(),
            admin_tokens: BTreeMap::new(),
            installation_tokens: BTreeMap::new(),
            legacy_lists: BTreeMap::new(),
            rate_ledger: rate_limits::RateLedger::default(),
            requests: BTreeMap::new(),
            pending_started: BTreeMap::new(),
            pickup_due_ms: BTreeMap::new(),
            deferred: BTreeMap::new(),
            index: StateIndex::default(),
            ledger: StatisticsLedger::default(),
            held: Default::default(),
            later: Vec::new(),
            dead_processes: BTreeMap::new(),
            unclaimed_sessions: BTreeMap::new(),
            views: Default::default(),
            caller: None,
        }
    }

    /// A service on seed 7 with the default configuration and a hash-only trace, for unit tests.
    #[cfg(test)]
    pub(crate) fn for_tests() -> World {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        let clock = runtime.block_on(async { SimClock::start() });
        let record = crate::record::Recorder::new(clock, crate::trace::TraceMode::HashOnly);
        World::new(Seed(7), clock, record, GitHubConfig::default())
    }

    /// Sim ms now.
    pub(super) fn now_ms(&self) -> u64 {
        self.clock.elapsed_ms()
    }

    /// The wall-clock timestamp of sim ms `ms`.
    pub(super) fn timestamp(&self, ms: u64) -> Timestamp {
        let offset = SignedDuration::from_millis(i64::try_from(ms).unwrap_or(i64::MAX));
        self.clock.epoch().saturating_add(offset).expect("a non-calendar span always adds")
    }

    /// A fresh number for ids and tokens (shared by every kind, so values never repeat).
    pub(super) fn next_number(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// A fresh positive id.
    pub(super) fn next_id(&mut self) -> i64 {
        i64::try_from(self.next_number()).expect("fewer than 2^63 ids")
    }

    /// Records a state change in the event log and the trace.
    pub(super) fn record(&mut self, kind: EventKind) {
        self.record.emit(GitHubEvent { at_ms: self.now_ms(), kind, by: self.caller.clone() });
    }

    /// Counts one answered request.
    pub(super) fn count_request(&mut self, operation: &str, status: u16) {
        *self.requests.entry((operation.to_string(), status)).or_insert(0) += 1;
    }

    /// The queue of scale set `id`, created on first use.
    pub(super) fn queue(&mut self, id: i64) -> &mut Queue {
        self.queues.entry(id).or_default()
    }
}
