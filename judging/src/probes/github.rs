//! The fake GitHub's partial failures and timing (issue 13): calls that committed and then failed for
//! their client, the retries that met the committed state (AgentExists, its own session, nothing left
//! to remove), acquisitions held back by the capacity header, and weak removal, all from the
//! service's call log and events.

use arc_sim::github::{EventKind, GitHubCall, RemoveOutcome};
use arc_world::RunRecord;

/// The answered calls the run kept.
fn calls(run: &RunRecord) -> impl Iterator<Item = &GitHubCall> + '_ {
    run.events_of::<GitHubCall>()
}

/// Mutating calls that committed and then failed for their client (a 5xx or a dropped connection).
pub fn github_committed_then_failed(run: &RunRecord) -> u32 {
    calls(run).filter(|c| c.committed_then_failed()).count() as u32
}

/// How long after a committed failure a call to the same path still counts as its retry.
const RETRY_WINDOW_MS: u64 = 120_000;

/// Calls of `operation` that committed and failed, followed within [`RETRY_WINDOW_MS`] by a call to
/// the same path (the client's retry: same operation, same ids) answered `status`. Each answer pairs
/// with one failure at most.
fn retried_into(run: &RunRecord, operation: &str, status: u16) -> u32 {
    let of_op: Vec<&GitHubCall> = calls(run).filter(|c| c.operation == operation).collect();
    let mut used = vec![false; of_op.len()];
    let mut hits = 0;
    for (i, failed) in of_op.iter().enumerate().filter(|(_, c)| c.committed_then_failed()) {
        let retry = (i + 1..of_op.len()).find(|&j| {
            let call = of_op[j];
            !used[j]
                && call.path == failed.path
                && call.status == Some(status)
                && call.received_ms <= failed.received_ms + RETRY_WINDOW_MS
        });
        if let Some(j) = retry {
            used[j] = true;
            hits += 1;
        }
    }
    hits
}

/// GenerateJitConfig retries, after a committed failure, answered 409 AgentExists.
pub fn jit_retry_agent_exists(run: &RunRecord) -> u32 {
    retried_into(run, "generate-jit-config", 409)
}

/// CreateMessageSession retries, after a committed failure, answered 409 (the session it made).
pub fn session_retry_conflict(run: &RunRecord) -> u32 {
    retried_into(run, "create-session", 409)
}

/// RemoveRunner retries, after a committed failure, answered 204 (nothing left to remove).
pub fn remove_runner_retried_after_commit(run: &RunRecord) -> u32 {
    retried_into(run, "remove-runner", 204)
}

/// AcquireJobs that left a job queued because the scale set was at its listener's capacity.
pub fn acquisition_capped(run: &RunRecord) -> u32 {
    run.github_events().filter(|e| matches!(e.kind, EventKind::AcquireDeferred { .. })).count() as u32
}

/// Weak removal: RemoveRunner calls that removed a runner holding a job whose JobStarted had not gone out.
pub fn runner_removed_before_job_started(run: &RunRecord) -> u32 {
    run.github_events()
        .filter(|e| matches!(e.kind, EventKind::RemoveRunner { outcome: RemoveOutcome::RemovedAssigned, .. }))
        .count() as u32
}

/// REST calls refused for their credential's rate limit (assumption `rest-rate-limits`; the fake
/// answers 403 for nothing else).
pub fn rest_rate_limited(run: &RunRecord) -> u32 {
    calls(run).filter(|c| c.status == Some(403)).count() as u32
}
