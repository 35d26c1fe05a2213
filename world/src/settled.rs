//! When a world counts as settled, for each controller family: read from the fake API server's
//! objects (what a user would see with kubectl), never from the controller.

use arc_sim::json_at::At;
use std::sync::Arc;

use serde_json::Value;

use super::Settled;
use arc_sim::apiserver::FakeApiServer;
use arc_sim::github::FakeGitHub;

/// Settled, for the scale-set family: in `namespace`, no EphemeralRunner is deleting and exactly
/// `min_runners` are live; every pod left there belongs to one of them.
pub fn scale_set_settled(namespace: &str, min_runners: usize) -> Settled {
    let namespace = namespace.to_string();
    Arc::new(move |apiserver: &FakeApiServer, _github: &FakeGitHub| {
        let in_ns =
            |v: &Value| v.at("/metadata/namespace").and_then(Value::as_str) == Some(namespace.as_str());
        let runners: Vec<Arc<Value>> =
            apiserver.stored("ephemeralrunners").into_iter().filter(|v| in_ns(v)).collect();
        let deleting = runners.iter().any(|r| r.at("/metadata/deletionTimestamp").is_some());
        let pods = apiserver.stored("pods").into_iter().filter(|v| in_ns(v)).count();
        !deleting && runners.len() == min_runners && pods <= runners.len()
    })
}

/// Settled, for the legacy controller: every Runner in `namespace` has exactly one pod, running with
/// every container running (a container in CrashLoopBackOff is not settled), and none is deleting.
pub fn legacy_settled(namespace: &str) -> Settled {
    let namespace = namespace.to_string();
    Arc::new(move |apiserver: &FakeApiServer, _github: &FakeGitHub| {
        let in_ns =
            |v: &Value| v.at("/metadata/namespace").and_then(Value::as_str) == Some(namespace.as_str());
        let runners = apiserver.stored("runners").into_iter().filter(|v| in_ns(v)).count();
        let pods: Vec<Arc<Value>> = apiserver.stored("pods").into_iter().filter(|v| in_ns(v)).collect();
        let running = pods
            .iter()
            .filter(|p| p.at("/status/phase").and_then(Value::as_str) == Some("Running"))
            .filter(|p| containers_running(p))
            .count();
        let deleting = pods.iter().any(|p| p.at("/metadata/deletionTimestamp").is_some());
        !deleting && running == runners && pods.len() == runners
    })
}

/// Whether every container status of `pod` is in state `running` (and there is at least one).
fn containers_running(pod: &Value) -> bool {
    let statuses = pod.at("/status/containerStatuses").and_then(Value::as_array);
    statuses.is_some_and(|all| {
        !all.is_empty() && all.iter().all(|c| c.at("/state/running").is_some_and(Value::is_object))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::containers_running;

    #[test]
    fn a_pod_whose_container_runs_is_running() {
        let pod = json!({"status": {"containerStatuses": [{"state": {"running": {"startedAt": "t"}}}]}});
        assert!(containers_running(&pod));
    }

    #[test]
    fn a_container_in_crash_loop_back_off_or_not_yet_reported_is_not_running() {
        let backoff = json!({"status": {"containerStatuses": [
            {"state": {"waiting": {"reason": "CrashLoopBackOff"}}, "lastState": {"terminated": {"exitCode": 137}}}
        ]}});
        assert!(!containers_running(&backoff));
        assert!(!containers_running(&json!({"status": {"phase": "Running"}})));
        assert!(!containers_running(&json!({"status": {"containerStatuses": []}})));
    }
}
