//! Building blocks of hand-written run records for the oracles' unit tests: objects as the fake API
//! server stores them, API requests, GitHub state, each with only the fields the oracles read.

use std::collections::BTreeSet;

use arc_sim::apiserver::AuditEntry;
use arc_sim::faults::ApiVerb;
use arc_sim::github::{
    EndReason, EventKind, GitHubEvent, Job, JobResult, JobSpec, JobState, RemovalReason, Runner, RunnerState,
    Session,
};
use serde_json::{Value, json};

/// The namespace of every fixture.
pub(crate) const NS: &str = "runners";

/// An EphemeralRunner `name` with `uid`, phase, runner id and job id (`None`: unset).
pub(crate) fn er(name: &str, uid: &str, phase: Option<&str>, runner_id: i64, job_id: Option<&str>) -> Value {
    let mut status = json!({});
    if let Some(phase) = phase {
        status["phase"] = json!(phase);
    }
    if runner_id != 0 {
        status["runnerId"] = json!(runner_id);
        status["runnerName"] = json!(name);
    }
    if let Some(job) = job_id {
        status["jobId"] = json!(job);
    }
    json!({"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner",
        "metadata": {"name": name, "namespace": NS, "uid": uid}, "spec": {}, "status": status})
}

/// A runner pod `name` controlled by the EphemeralRunner with `owner_uid`.
pub(crate) fn pod(name: &str, owner_uid: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "uid": format!("pod-{name}"),
            "labels": {"actions-ephemeral-runner": "True"},
            "ownerReferences": [{"apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner",
                "name": name, "uid": owner_uid, "controller": true}]},
        "spec": {"containers": [{"name": "runner", "image": "runner"}]}})
}

/// An answered request of `actor`.
pub(crate) fn request(
    ms: u64,
    actor: &str,
    verb: ApiVerb,
    resource: &str,
    name: &str,
    code: u16,
) -> AuditEntry {
    AuditEntry {
        ms,
        served_ms: ms,
        actor: actor.into(),
        attributed: true,
        verb,
        resource: resource.into(),
        namespace: NS.into(),
        name: name.into(),
        target: format!("{NS}/{name}"),
        status_subresource: false,
        code,
        reason: String::new(),
        body_hash: None,
        resource_version: String::new(),
        warnings: 0,
        committed_then_failed: false,
    }
}

/// A GitHub state change at `at_ms`.
pub(crate) fn github(at_ms: u64, kind: EventKind) -> GitHubEvent {
    GitHubEvent { at_ms, kind, by: None }
}

/// A job `request_id` (job id `job-{request_id}`) in `state`, on `runner`.
pub(crate) fn job(request_id: i64, state: JobState, runner: Option<i64>) -> Job {
    Job {
        request_id,
        job_id: format!("job-{request_id}"),
        workflow_run_id: 1,
        spec: JobSpec::simple(&["self-hosted"], 60_000),
        state,
        offered_to: BTreeSet::new(),
        acquired_by: Some(1),
        runner_id: runner,
        queued_ms: 0,
        acquired_ms: Some(0),
        started_ms: runner.map(|_| 1),
        finished_ms: None,
    }
}

/// A job that ended for `reason`.
pub(crate) fn ended_job(request_id: i64, reason: EndReason, runner: Option<i64>) -> Job {
    let mut j = job(request_id, JobState::Completed { result: JobResult::Succeeded, reason }, runner);
    j.finished_ms = Some(100);
    j
}

/// A scale-set runner `id` named `name` in `state`.
pub(crate) fn runner(id: i64, name: &str, state: RunnerState) -> Runner {
    Runner {
        id,
        name: name.into(),
        scale_set_id: Some(1),
        scope: None,
        labels: vec!["self-hosted".into()],
        ephemeral: true,
        state,
        registered_ms: 0,
        connections: 1,
    }
}

/// A removed runner.
pub(crate) fn removed_runner(id: i64, name: &str) -> Runner {
    runner(id, name, RunnerState::Removed { reason: RemovalReason::Removed, at_ms: 0 })
}

/// An open message session of scale set `scale_set_id`.
pub(crate) fn session(scale_set_id: i64) -> Session {
    Session {
        id: format!("session-{scale_set_id}"),
        scale_set_id,
        owner: "listener".into(),
        queue_token: "t".into(),
        token_expires_ms: u64::MAX,
        created_ms: 0,
        last_seen_ms: 0,
        polls_in_flight: 0,
    }
}

/// An AutoscalingRunnerSet registered as scale set `scale_set_id`.
pub(crate) fn ars(name: &str, scale_set_id: i64) -> Value {
    json!({"apiVersion": "actions.github.com/v1alpha1", "kind": "AutoscalingRunnerSet",
        "metadata": {"name": name, "namespace": NS, "uid": format!("ars-{name}"),
            "annotations": {"runner-scale-set-id": scale_set_id.to_string()}},
        "spec": {}})
}
