//! [`run_process`]: one controller process from start to stop, as `arc-controller run` runs it and as
//! anything running several replicas runs each of them.
//!
//! 1. With leader election, stand by (ready, serving health) until this process holds the Lease
//!    (with `fixes.controllers_wait_for_lease` off, a plausible bug, the controllers start first).
//! 2. Start the selected families ([`crate::start`]); ready once every informer has synced.
//! 3. Run until cancelled (SIGTERM), or, with leader election, until the Lease is lost.
//! 4. Stop every controller, then release the Lease, so the next leader starts only after this one
//!    has stopped acting.
//!
//! Losing the Lease is an error: the process must exit (and its pod restart as a standby), because
//! another replica may already be acting.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::sync::CancellationToken;

use super::leader::{Ended, LeaderElection, LeaderElector};
use super::lease_guard::guarded_client;
use crate::inputs::Inputs;
use crate::start::Families;

/// What the process's health endpoints report. Cheap to clone; clones share the flags.
#[derive(Debug, Clone, Default)]
pub struct ProcessStatus {
    ready: Arc<AtomicBool>,
    leading: Arc<AtomicBool>,
}

impl ProcessStatus {
    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }

    /// Sets readiness.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }

    /// Whether the process runs the controllers now (always, without leader election).
    pub fn is_leading(&self) -> bool {
        self.leading.load(Ordering::SeqCst)
    }

    fn set_leading(&self, leading: bool) {
        self.leading.store(leading, Ordering::SeqCst);
    }
}

/// Why a process stopped other than by being cancelled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessError {
    /// Renewal of the Lease failed for the renew deadline.
    #[error(
        "leader election lost (lease {lease}): another replica may be leading; exiting so that this one restarts as a standby"
    )]
    LeadershipLost {
        /// The Lease's name.
        lease: String,
    },
}

/// Runs the controllers of `families` on `inputs` until `cancel`, electing a leader first when
/// `election` is given. Must be called inside the tokio runtime that drives the controllers.
pub async fn run_process(
    inputs: &Inputs,
    families: &Families,
    election: Option<LeaderElection>,
    status: &ProcessStatus,
    cancel: CancellationToken,
) -> Result<(), ProcessError> {
    let elector = election.map(|config| {
        LeaderElector::new(inputs.client.clone(), inputs.clock.clone(), inputs.metrics.clone(), config)
    });
    // `fixes.controllers_wait_for_lease` off (a plausible bug): the controllers start before the
    // election, so a standby acts too.
    let started_early = match &elector {
        Some(_) if !inputs.switches.fixes.controllers_wait_for_lease => Some(crate::start(inputs, families)),
        _ => None,
    };
    if let Some(elector) = &elector {
        status.set_ready(true);
        tracing::info!(lease = %elector.config().name, identity = %elector.config().identity, "standing by for leadership");
        if !elector.acquire(&cancel).await {
            if let Some(mut manager) = started_early {
                manager.shutdown().await;
            }
            return Ok(());
        }
        status.set_ready(false);
    }
    status.set_leading(true);
    let leader_inputs = match &elector {
        Some(elector) if inputs.switches.fixes.writes_stop_at_lease_deadline => {
            let (client, github) = (inputs.client.clone(), inputs.github.clone());
            let deadline = elector.deadline();
            Inputs {
                client: guarded_client(client, deadline.clone()),
                github: github.guarded(deadline),
                ..inputs.clone()
            }
        }
        _ => inputs.clone(),
    };
    let mut manager = started_early.unwrap_or_else(|| crate::start(&leader_inputs, families));
    tracing::info!(families = families.name(), "controllers started; waiting for caches");
    if manager.cache_sync().await {
        tracing::info!("caches synced");
        status.set_ready(true);
    }
    let ended = match &elector {
        Some(elector) => elector.hold(&cancel).await,
        None => {
            cancel.cancelled().await;
            Ended::Released
        }
    };
    tracing::info!("stopping the controllers");
    manager.shutdown().await;
    status.set_leading(false);
    match (ended, &elector) {
        (Ended::Lost, Some(elector)) => {
            Err(ProcessError::LeadershipLost { lease: elector.config().name.clone() })
        }
        (_, Some(elector)) => {
            elector.release().await;
            Ok(())
        }
        (_, None) => Ok(()),
    }
}
