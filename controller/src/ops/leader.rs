//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's `leaderelection` semantics
//! (facts from its docs, not its code):
//!
//! - A candidate reads the Lease. If it does not exist, it creates it naming itself. If another
//!   identity holds it, the candidate waits until it has *observed* the same record, unchanged, for
//!   `lease_duration` on its own clock (never trusting the holder's `renewTime`, so clock skew
//!   between replicas does not matter), then takes it over with an update carrying the
//!   resourceVersion it read (optimistic concurrency: of two candidates only one update succeeds).
//! - The leader renews every `retry_period`. If it has not renewed for `renew_deadline` it has lost
//!   the lease and must stop acting at once (the process exits, as controller-runtime's does).
//! - A leader that stops cleanly releases the Lease (empty holder, 1 s duration), so a standby takes
//!   over without waiting out the lease (controller-runtime's `LeaderElectionReleaseOnCancel`).
//!
//! Retries are not jittered (client-go jitters them by up to 20 %), so a simulated run stays
//! reproducible; identities are unique per process (hostname plus a suffix), so a restarted
//! process never mistakes the dead one's lease for its own.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio_util::sync::CancellationToken;

use crate::runtime::clock::SharedClock;
use crate::runtime::lease_deadline::LeaseDeadline;
use crate::runtime::metrics::{LEADER_ELECTION_MASTER_STATUS, Metrics};

/// Where and how to elect a leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElection {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease (ARC: `--leader-election-id`).
    pub name: String,
    /// This process's identity, unique among the candidates.
    pub identity: String,
    /// How long a lease is good for without renewal (client-go default 15 s).
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before giving up (default 10 s).
    pub renew_deadline: Duration,
    /// How often candidates retry and the leader renews (default 2 s).
    pub retry_period: Duration,
}

impl LeaderElection {
    /// client-go's default timings for Lease `namespace/name` and candidate `identity`.
    pub fn new(namespace: &str, name: &str, identity: &str) -> Self {
        LeaderElection {
            namespace: namespace.into(),
            name: name.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

/// How leadership ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Cancelled; the holder should stop acting and release the Lease.
    Released,
    /// Renewal failed for `renew_deadline`: another process may lead already.
    Lost,
}

/// The record last seen, and when (on this process's clock).
#[derive(Debug, Default)]
struct Observed {
    spec: Option<LeaseSpec>,
    at: Option<Timestamp>,
}

/// One candidate.
pub struct LeaderElector {
    api: Api<Lease>,
    clock: SharedClock,
    metrics: Metrics,
    config: LeaderElection,
    observed: tokio::sync::Mutex<Observed>,
    deadline: LeaseDeadline,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector").field("config", &self.config).finish_non_exhaustive()
    }
}

fn seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs()).unwrap_or(i32::MAX)
}

impl LeaderElector {
    /// A candidate for `config` over `client`, reading time from `clock`.
    pub fn new(client: Client, clock: SharedClock, metrics: Metrics, config: LeaderElection) -> Self {
        let api = Api::namespaced(client, &config.namespace);
        LeaderElector {
            api,
            clock,
            metrics,
            config,
            observed: Default::default(),
            deadline: LeaseDeadline::default(),
        }
    }

    /// Until when this candidate's leadership is known good: `renew_deadline` after the attempt that
    /// last acquired or renewed the Lease began.
    pub fn deadline(&self) -> LeaseDeadline {
        self.deadline.clone()
    }

    /// The election's settings.
    pub fn config(&self) -> &LeaderElection {
        &self.config
    }

    /// Waits until this candidate holds the Lease (`true`) or `cancel` fires (`false`).
    pub async fn acquire(&self, cancel: &CancellationToken) -> bool {
        self.set_leading(false);
        loop {
            let attempt_began = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    self.deadline.renewed(attempt_began, self.config.renew_deadline);
                    tracing::info!(lease = %self.config.name, identity = %self.config.identity, "became leader");
                    self.set_leading(true);
                    return true;
                }
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(%error, lease = %self.config.name, "leader election: cannot read or write the lease")
                }
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => return false,
                () = tokio::time::sleep(self.config.retry_period) => {}
            }
        }
    }

    /// Renews the Lease until `cancel` fires ([`Ended::Released`]: the caller stops acting, then
    /// calls [`LeaderElector::release`]) or renewal fails for `renew_deadline` ([`Ended::Lost`]).
    pub async fn hold(&self, cancel: &CancellationToken) -> Ended {
        let mut last_renewal = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
        loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Ended::Released,
                () = tokio::time::sleep(self.config.retry_period) => {}
            }
            let attempt_began = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
            match self.try_acquire_or_renew().await {
                Ok(true) => {
                    self.deadline.renewed(attempt_began, self.config.renew_deadline);
                    last_renewal = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused in the sim
                }
                Ok(false) => {}
                Err(error) => tracing::warn!(%error, "leader election: renewal failed"),
            }
            if last_renewal.elapsed() >= self.config.renew_deadline {
                tracing::error!(lease = %self.config.name, identity = %self.config.identity, "leader election lost");
                self.set_leading(false);
                return Ended::Lost;
            }
        }
    }

    fn set_leading(&self, leading: bool) {
        self.metrics.set(LEADER_ELECTION_MASTER_STATUS, &[("name", &self.config.name)], i64::from(leading));
    }

    /// One attempt: `Ok(true)` when this candidate holds the Lease afterwards.
    async fn try_acquire_or_renew(&self) -> kube::Result<bool> {
        let now = self.clock.now();
        let Some(current) = self.api.get_opt(&self.config.name).await? else {
            return self.create(now).await;
        };
        let spec = current.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        if holder != self.config.identity && !holder.is_empty() && !self.observed_expired(&spec, now).await {
            return Ok(false);
        }
        let mut next = spec.clone();
        if holder != self.config.identity {
            next.acquire_time = Some(MicroTime(now));
            next.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        next.holder_identity = Some(self.config.identity.clone());
        next.lease_duration_seconds = Some(seconds(self.config.lease_duration));
        next.renew_time = Some(MicroTime(now));
        let updated = Lease { metadata: current.metadata.clone(), spec: Some(next) };
        match self.api.replace(&self.config.name, &PostParams::default(), &updated).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Whether `spec`, as last observed, has stood unchanged for its lease duration at `now`.
    async fn observed_expired(&self, spec: &LeaseSpec, now: Timestamp) -> bool {
        let mut observed = self.observed.lock().await;
        if observed.spec.as_ref() != Some(spec) {
            *observed = Observed { spec: Some(spec.clone()), at: Some(now) };
        }
        let duration = spec
            .lease_duration_seconds
            .map_or(self.config.lease_duration, |s| Duration::from_secs(u64::try_from(s).unwrap_or(0)));
        let since = observed.at.map_or(Duration::ZERO, |at| now.duration_since(at).unsigned_abs());
        since >= duration
    }

    async fn create(&self, now: Timestamp) -> kube::Result<bool> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.config.name.clone()),
                namespace: Some(self.config.namespace.clone()),
                ..Default::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.config.identity.clone()),
                lease_duration_seconds: Some(seconds(self.config.lease_duration)),
                acquire_time: Some(MicroTime(now)),
                renew_time: Some(MicroTime(now)),
                lease_transitions: Some(0),
                ..Default::default()
            }),
        };
        match self.api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Gives the Lease up: empty holder and a 1 s duration, so a standby takes over at once.
    pub async fn release(&self) {
        self.set_leading(false);
        let Ok(Some(current)) = self.api.get_opt(&self.config.name).await else { return };
        let spec = current.spec.clone().unwrap_or_default();
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        let released = LeaseSpec {
            holder_identity: Some(String::new()),
            lease_duration_seconds: Some(1),
            renew_time: Some(MicroTime(self.clock.now())),
            ..spec
        };
        let lease = Lease { metadata: current.metadata.clone(), spec: Some(released) };
        match self.api.replace(&self.config.name, &PostParams::default(), &lease).await {
            Ok(_) => tracing::info!(lease = %self.config.name, "released the lease"),
            Err(error) => tracing::warn!(%error, "could not release the lease"),
        }
    }
}
