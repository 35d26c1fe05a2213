//! Leases (`coordination.k8s.io/v1`, a built-in kind) and the controller's leader election on them:
//! two candidates, one leader; the leader crashes (no release) and the standby takes over once it has
//! seen the Lease unrenewed for the lease duration; a leader that stops cleanly releases at once.

use std::sync::Arc;
use std::time::Duration;

use arc_controller::ops::{LeaderElection, LeaderElector};
use arc_controller::runtime::metrics::Metrics;
use arc_world::seam::controller_clock;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use tokio_util::sync::CancellationToken;

use crate::apiserver::support::world;

fn elector(w: &crate::apiserver::support::World, identity: &str) -> Arc<LeaderElector> {
    let config = LeaderElection::new("default", "arc-controller", identity);
    Arc::new(LeaderElector::new(w.client.clone(), controller_clock(w.record.clock()), Metrics::new(), config))
}

async fn holder(w: &crate::apiserver::support::World) -> Option<String> {
    let leases: Api<Lease> = Api::namespaced(w.client.clone(), "default");
    leases.get_opt("arc-controller").await.ok().flatten()?.spec?.holder_identity
}

#[tokio::test(start_paused = true)]
async fn one_of_two_candidates_leads_and_the_standby_takes_over_after_a_crash() {
    let w = world();
    let (a, b) = (elector(&w, "replica-a"), elector(&w, "replica-b"));
    let cancel = CancellationToken::new();
    assert!(a.acquire(&cancel).await, "the first candidate creates the Lease");
    let leading = {
        let a = a.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { a.hold(&cancel).await })
    };
    let standby = {
        let b = b.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { b.acquire(&cancel).await })
    };
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(!standby.is_finished(), "the standby waits while the leader renews");
    assert_eq!(holder(&w).await.as_deref(), Some("replica-a"));

    leading.abort(); // a crash: no release
    let crashed_at = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused
    assert!(standby.await.expect("the standby task"), "the standby leads after the crash");
    let waited = crashed_at.elapsed();
    assert!(
        waited >= Duration::from_secs(13) && waited <= Duration::from_secs(20),
        "took over after {waited:?}"
    );
    assert_eq!(holder(&w).await.as_deref(), Some("replica-b"));
    let leases: Api<Lease> = Api::namespaced(w.client.clone(), "default");
    let lease = leases.get("arc-controller").await.expect("the Lease");
    assert_eq!(lease.spec.and_then(|s| s.lease_transitions), Some(1));
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_stops_cleanly_releases_and_the_standby_takes_over_at_once() {
    let w = world();
    let (a, b) = (elector(&w, "replica-a"), elector(&w, "replica-b"));
    let (stop_a, never) = (CancellationToken::new(), CancellationToken::new());
    assert!(a.acquire(&stop_a).await);
    let standby = {
        let b = b.clone();
        tokio::spawn(async move { b.acquire(&never).await })
    };
    tokio::time::sleep(Duration::from_secs(30)).await;
    stop_a.cancel();
    a.release().await;
    let released_at = tokio::time::Instant::now(); // allow-nondeterminism: tokio clock, paused
    assert!(standby.await.expect("the standby task"));
    assert!(released_at.elapsed() <= Duration::from_secs(4), "took {:?}", released_at.elapsed());
}
