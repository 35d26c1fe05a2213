//! A leader's writes stop at its renew deadline ([`LeaseDeadline`], [`guarded_client`] for Kubernetes,
//! [`GitHubTransport::guarded`](crate::GitHubTransport::guarded) for GitHub; the fix
//! `fixes.writes_stop_at_lease_deadline`, arcsim's, not in ARC).
//!
//! client-go's leader election is not fencing: its package doc (`tools/leaderelection/leaderelection.go`,
//! v0.33.4) says it "does not guarantee that only one client is acting as a leader (a.k.a. fencing)".
//! A leader whose process stops (a VM paused, a long garbage collection) for longer than the lease
//! goes on, once resumed, with every reconcile it had in flight and every timer that came due, and
//! writes before its own renewal loop finds that another process took the Lease over. With this
//! guard, every write of the leader's controllers first checks, on the process's monotonic clock, that
//! the Lease was renewed within `renew_deadline` (shorter than the `lease_duration` a standby waits
//! out); past it the write is refused unsent, the reconcile fails and is retried, and the renewal loop
//! decides. Reads are not guarded. It narrows the window, not closes it: a process stopped between
//! the check and the write's bytes leaving still writes late, as only a server-side fence could
//! prevent.

use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Request, Response};
use kube::client::Body;

pub use crate::runtime::lease_deadline::{LeaseDeadline, LeaseDeadlinePassed};

/// `client`, whose writes (every method but GET, HEAD and OPTIONS) are refused once `deadline` has
/// passed.
pub fn guarded_client(client: kube::Client, deadline: LeaseDeadline) -> kube::Client {
    let namespace = client.default_namespace().to_string();
    kube::Client::new(Guarded { client, deadline }, namespace)
}

#[derive(Clone)]
struct Guarded {
    client: kube::Client,
    deadline: LeaseDeadline,
}

impl tower::Service<Request<Body>> for Guarded {
    type Response = Response<Body>;
    type Error = tower::BoxError;
    type Future = BoxFuture<'static, Result<Response<Body>, tower::BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let refused = self.deadline.refuses(request.method());
        let client = self.client.clone();
        Box::pin(async move {
            if let Some(overdue) = refused {
                return Err(LeaseDeadlinePassed { overdue }.into());
            }
            Ok(client.send(request).await?)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Api;
    use kube::api::PostParams;
    use tokio::time::Instant;

    use super::*;
    use crate::runtime::testing::{Reply, ScriptedApi, config_map, config_map_list};

    #[tokio::test(start_paused = true)]
    async fn writes_pass_until_the_deadline_and_are_refused_unsent_after_it_reads_always_pass() {
        let api = ScriptedApi::new();
        let deadline = LeaseDeadline::default();
        deadline.renewed(Instant::now(), Duration::from_secs(10)); // allow-nondeterminism: tokio clock, paused in this test
        let client = guarded_client(api.client(), deadline.clone());
        let config_maps: Api<ConfigMap> = Api::namespaced(client, "default");
        let object = |name| serde_json::from_value::<ConfigMap>(config_map(name, "")).expect("a config map");
        api.push(Reply::Json(201, config_map("a", "1")));
        config_maps.create(&PostParams::default(), &object("a")).await.expect("before the deadline");
        tokio::time::sleep(Duration::from_secs(11)).await;
        assert_eq!(deadline.overdue(), Some(Duration::from_secs(1)));
        let refused = config_maps.create(&PostParams::default(), &object("b")).await;
        assert!(refused.is_err_and(|e| e.to_string().contains("renew deadline")));
        api.push(config_map_list("2", vec![]));
        config_maps.list(&Default::default()).await.expect("a read passes");
        assert_eq!(api.seen().len(), 2, "the refused write was never sent");
        deadline.renewed(Instant::now(), Duration::from_secs(10)); // allow-nondeterminism: tokio clock, paused in this test
        assert_eq!(deadline.overdue(), None, "a renewal allows writes again");
    }
}
