//! ARC's `ephemeralrunnerset_controller_test.go`, one test per row of ARC-MODEL §10's ERS table,
//! named after ARC's test. Where the \[V\] change set changes what ARC expects, the test says how.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_new_set_gets_its_finalizer_and_no_runners_until_it_is_scaled_up() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    let finalized = || {
        f.set().and_then(|s| s.metadata.finalizers).is_some_and(|fs| {
            fs.first().map(String::as_str) == Some("ephemeralrunnerset.actions.github.com/finalizer")
        })
    };
    f.h.eventually("the set has its finalizer", TIMEOUT, finalized).await;
    f.h.consistently("no runners and no replicas", seconds(5), || {
        f.count() == 0 && f.status().current_replicas == 0
    })
    .await;

    f.scale_up_on_patch_zero_and_register(5).await;
    for runner in &f.runners() {
        f.set_runner_status(runner, json!({"phase": "Running"})).await;
    }
    f.h.eventually("status shows 5 replicas", TIMEOUT, || f.status().current_replicas == 5).await;
    f.consistently_count(5, seconds(2)).await;
}

#[tokio::test(start_paused = true)]
async fn a_deleting_set_removes_all_its_runners_before_it_goes_away() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale_up_on_patch_zero_and_register(5).await;
    for runner in &f.runners() {
        f.set_runner_status(runner, json!({"phase": "Running"})).await;
    }
    f.h.eventually("runners registered in the cache", TIMEOUT, || f.status().running_ephemeral_runners == 5)
        .await;

    let api: Api<EphemeralRunnerSet> = f.h.api(RUNNER_NS);
    api.delete(SET, &DeleteParams::default()).await.expect("delete accepted");
    f.h.eventually("the set is gone", TIMEOUT, || {
        let set_gone = f.set().is_none();
        assert!(!set_gone || f.all_runners().is_empty(), "the set went away while runners remained");
        set_gone
    })
    .await;
    assert!(f.all_runners().is_empty());
}

#[tokio::test(start_paused = true)]
async fn scales_up_with_patch_id_zero() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale_up_on_patch_zero_and_register(5).await;
}

#[tokio::test(start_paused = true)]
async fn propagates_updated_set_annotations_to_newly_created_runners() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(1, 0).await;
    f.eventually_count(1).await;
    let annotation =
        |r: &EphemeralRunner, key: &str| r.metadata.annotations.as_ref().and_then(|a| a.get(key)).cloned();
    assert_eq!(annotation(&f.runners()[0], SET_ANNOTATION).as_deref(), Some("initial"));

    f.patch_set(json!({
        "metadata": {"annotations": {SET_ANNOTATION: "updated", "arc.test/new-runner-set-annotation": "added"}},
        "spec": {"replicas": 2, "patchID": 1},
    }))
    .await;
    f.eventually_count(2).await;
    let values: Vec<_> = f.runners().iter().map(|r| annotation(r, SET_ANNOTATION)).collect();
    assert_eq!(values.iter().filter(|v| v.as_deref() == Some("initial")).count(), 1);
    assert_eq!(values.iter().filter(|v| v.as_deref() == Some("updated")).count(), 1);
    let updated =
        f.runners().into_iter().find(|r| annotation(r, SET_ANNOTATION).as_deref() == Some("updated"));
    let added = updated.and_then(|r| annotation(&r, "arc.test/new-runner-set-annotation"));
    assert_eq!(added.as_deref(), Some("added"));
}

#[tokio::test(start_paused = true)]
async fn scales_up_when_the_patch_id_changes() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(1, 0).await;
    f.eventually_count(1).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
}

#[tokio::test(start_paused = true)]
async fn cleans_up_a_finished_runner_when_the_next_patch_scales_down() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Succeeded"})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Running"})).await;
    // The finished runner stays until the next patch.
    f.consistently_count(2, seconds(2)).await;

    f.scale(1, 2).await;
    f.eventually_count(1).await;
    assert_eq!(phase_of(&f.runners()[0]), "Running");
}

#[tokio::test(start_paused = true)]
async fn keeps_finished_runners_until_the_patch_id_changes() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Succeeded"})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Pending"})).await;
    f.consistently_count(2, seconds(5)).await;
    assert_eq!(f.runners().iter().map(phase_of).collect::<Vec<_>>(), ["Succeeded", "Pending"]);
}

/// \[V\] changes ARC's expectation: upstream reaches 3 runners on patch 2 itself. Here patch 2's pass
/// deletes the finished runner and records the marker, and the gap it leaves is not treated as
/// demand under patch 2; the listener's next patch (3) brings the set to 3.
#[tokio::test(start_paused = true)]
async fn handles_a_double_scale_up() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Succeeded"})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Running"})).await;

    f.scale(3, 2).await;
    f.h.eventually("patch 2 recorded as the clean-up patch", TIMEOUT, || {
        f.status().finished_runner_cleanup_patch_id == 2
    })
    .await;
    f.eventually_count(1).await;
    f.consistently_count(1, seconds(3)).await;

    f.scale(3, 3).await;
    f.eventually_count(3).await;
    assert!(f.runners().iter().all(|r| phase_of(r) != "Succeeded"));
}

#[tokio::test(start_paused = true)]
async fn a_scale_down_on_a_nonzero_patch_keeps_the_pending_runner_until_it_finishes() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Succeeded"})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Pending", "runnerId": 7})).await;

    f.scale(0, 2).await;
    f.eventually_count(1).await;
    f.consistently_count(1, seconds(3)).await;
    let pending = f.runners().remove(0);
    assert_eq!(phase_of(&pending), "Pending");

    f.set_runner_status(&pending, json!({"phase": "Succeeded"})).await;
    f.eventually_count(0).await;
}

#[tokio::test(start_paused = true)]
async fn patch_zero_kills_idle_pending_and_running_runners_once_they_are_registered() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Pending"})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Running"})).await;

    f.scale(0, 0).await;
    // Not registered yet (runnerId 0): nothing to remove at the service, so nothing is deleted.
    f.consistently_count(2, seconds(3)).await;

    f.set_runner_status(&runners[0], json!({"runnerId": 1})).await;
    f.set_runner_status(&runners[1], json!({"runnerId": 2})).await;
    f.eventually_count(0).await;
}

/// \[V\] changes ARC's expectation as in `handles_a_double_scale_up`: the replacement of the
/// finished runner waits for the listener's next patch.
#[tokio::test(start_paused = true)]
async fn replaces_finished_runners_with_new_ones() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Succeeded"})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Running"})).await;

    f.scale(2, 2).await;
    f.eventually_count(1).await;
    f.consistently_count(1, seconds(3)).await;
    assert!(f.suppressed_scale_ups() > 0, "the clean-up gap was seen and suppressed");

    f.scale(2, 3).await;
    f.eventually_count(2).await;
    assert!(f.runners().iter().all(|r| phase_of(r) != "Succeeded"));
}

/// ARC's test changes the runner spec and expects the integrity-hash path; in \[V\] the ARS bumps
/// `actionableRevision` along with the spec, and the set applies the revision instead.
#[tokio::test(start_paused = true)]
async fn deletes_idle_runners_keeps_busy_ones_and_creates_new_ones_when_the_spec_changes() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale_up_on_patch_zero_and_register(3).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Running", "runnerId": 101})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Running", "runnerId": 102})).await;
    let busy = json!({"phase": "Running", "runnerId": 103, "jobId": "job-1", "workflowRunId": 9001});
    f.set_runner_status(&runners[2], busy).await;
    f.patch_set_status(json!({"status": {"finishedRunnerCleanupPatchID": 7}})).await;
    let (idle, busy_name) = ([name_of(&runners[0]), name_of(&runners[1])], name_of(&runners[2]));

    let mut template = runner_template();
    template.spec.as_mut().expect("a pod spec").containers[0].image =
        Some("ghcr.io/actions/runner:new".into());
    f.patch_set(json!({"spec": {"actionableRevision": 1, "ephemeralRunnerSpec": {"spec": template.spec}}}))
        .await;

    f.h.eventually("the idle runners are gone", TIMEOUT, || {
        f.status().applied_actionable_revision == 1 && f.runners().iter().all(|r| !idle.contains(&name_of(r)))
    })
    .await;
    f.register_until_settled(3).await;
    f.h.eventually("idle runners replaced with the new spec, the busy one kept", TIMEOUT, || {
        let now = f.runners();
        let kept = now.iter().find(|r| name_of(r) == busy_name);
        let fresh: Vec<_> = now.iter().filter(|r| name_of(r) != busy_name).collect();
        now.len() == 3
            && now.iter().all(|r| !idle.contains(&name_of(r)))
            && kept.is_some_and(|r| r.has_job() && image_of(r) == Some(IMAGE))
            && fresh.iter().all(|r| image_of(r) == Some("ghcr.io/actions/runner:new"))
    })
    .await;
    let status = f.status();
    assert_eq!(status.applied_actionable_revision, 1);
    assert_eq!(status.finished_runner_cleanup_patch_id, 0, "applying a revision clears the marker");
    assert_eq!(status.phase, Some(EphemeralRunnerSetPhase::Running));
}

#[tokio::test(start_paused = true)]
async fn status_follows_runner_state_changes() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale_up_on_patch_zero_and_register(3).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Pending", "runnerId": 101})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Running", "runnerId": 102})).await;
    f.set_runner_status(&runners[2], json!({"phase": "Failed", "runnerId": 103})).await;
    let counts = |current, pending, running, failed| EphemeralRunnerSetStatus {
        current_replicas: current,
        pending_ephemeral_runners: pending,
        running_ephemeral_runners: running,
        failed_ephemeral_runners: failed,
        phase: Some(EphemeralRunnerSetPhase::Running),
        ..Default::default()
    };
    f.h.eventually("one pending, one running, one failed", TIMEOUT, || f.status() == counts(3, 1, 1, 1))
        .await;

    f.scale(0, 0).await;
    f.eventually_count(1).await;
    f.h.eventually("only the failed runner counts", TIMEOUT, || f.status() == counts(1, 0, 0, 1)).await;

    let api: Api<EphemeralRunner> = f.h.api(RUNNER_NS);
    api.delete(&name_of(&runners[2]), &DeleteParams::default()).await.expect("delete accepted");
    f.h.eventually("no runners counted", TIMEOUT, || f.status() == counts(0, 0, 0, 0)).await;
}
