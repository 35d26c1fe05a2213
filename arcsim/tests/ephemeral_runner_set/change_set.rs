//! Beyond ARC's tests: the patch-ID gate, the \[V\] finished-runner marker and actionable revision
//! (ARC-MODEL §5.4, §9 items 5–6), RemoveRunner before delete and its bug variant (§8.3), the patch-0
//! overshoot under watch lag, and the proxy secret.

use super::*;

#[tokio::test(start_paused = true)]
async fn no_scale_up_while_the_patch_id_equals_the_newest_child_patch_id() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;

    f.scale(3, 1).await;
    f.consistently_count(2, seconds(5)).await;

    f.scale(3, 2).await;
    f.eventually_count(3).await;
}

#[tokio::test(start_paused = true)]
async fn patch_zero_is_never_suppressed_after_a_finished_runner_clean_up() {
    let f = Fixture::start().await;
    f.create_set(1, 0).await;
    f.eventually_count(1).await;
    let first = f.runners().remove(0);
    f.set_runner_status(&first, json!({"phase": "Succeeded"})).await;

    f.h.eventually("the finished runner is replaced", TIMEOUT, || {
        let now = f.runners();
        now.len() == 1 && name_of(&now[0]) != name_of(&first)
    })
    .await;
    assert_eq!(f.suppressed_scale_ups(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_finished_runner_marker_suppresses_the_clean_up_gap_until_the_next_patch() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(3, 4).await;
    f.eventually_count(3).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Succeeded"})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Running", "runnerId": 1, "jobId": "j1"})).await;

    // The listener has not yet lowered replicas for the completed job; its next patch (5) would.
    f.scale(3, 5).await;
    f.h.eventually("marker recorded", TIMEOUT, || f.status().finished_runner_cleanup_patch_id == 5).await;
    f.eventually_count(2).await;
    f.consistently_count(2, seconds(5)).await;
    assert!(f.suppressed_scale_ups() > 0);

    f.scale(2, 6).await;
    f.consistently_count(2, seconds(3)).await;
}

#[tokio::test(start_paused = true)]
async fn a_revision_bump_deletes_idle_runners_keeps_busy_ones_and_clears_an_outdated_phase() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
    let runners = f.runners();
    f.set_runner_status(&runners[0], json!({"phase": "Pending", "runnerId": 11})).await;
    f.set_runner_status(&runners[1], json!({"phase": "Running", "runnerId": 12, "jobId": "j"})).await;
    f.h.eventually("both runners seen", TIMEOUT, || f.status().running_ephemeral_runners == 1).await;
    f.patch_set_status(json!({"status": {"phase": "Outdated"}})).await;

    f.patch_set(json!({"spec": {"actionableRevision": 1}})).await;
    f.h.eventually("revision 1 applied and the set Running again", TIMEOUT, || {
        let status = f.status();
        status.applied_actionable_revision == 1 && status.phase == Some(EphemeralRunnerSetPhase::Running)
    })
    .await;
    f.eventually_count(1).await;
    assert_eq!(name_of(&f.runners()[0]), name_of(&runners[1]), "the busy runner stays");
}

#[tokio::test(start_paused = true)]
async fn an_outdated_runner_from_an_older_revision_is_replaced_without_making_the_set_outdated() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(1, 1).await;
    f.eventually_count(1).await;
    let old = f.runners().remove(0);
    f.set_runner_status(&old, json!({"phase": "Running", "runnerId": 21, "jobId": "j"})).await;
    f.h.eventually("the busy runner seen", TIMEOUT, || f.status().running_ephemeral_runners == 1).await;
    f.patch_set(json!({"spec": {"actionableRevision": 1}})).await;
    f.h.eventually("revision applied", TIMEOUT, || f.status().applied_actionable_revision == 1).await;

    // The busy runner of revision 0 exits 7 (deprecated version) after the new spec came in.
    f.set_runner_status(&old, json!({"phase": "Outdated"})).await;
    f.scale(1, 2).await;
    f.h.eventually("replaced by a runner of revision 1", TIMEOUT, || {
        let now = f.runners();
        now.len() == 1 && name_of(&now[0]) != name_of(&old)
    })
    .await;
    let revision = f.runners()[0].metadata.annotations.clone().unwrap_or_default();
    assert_eq!(revision.get("actions.github.com/actionable-revision").map(String::as_str), Some("1"));
    f.h.consistently("the set stays Running", seconds(2), || {
        f.status().phase == Some(EphemeralRunnerSetPhase::Running)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_outdated_runner_at_the_current_revision_makes_the_set_outdated_and_idle_runners_go() {
    let f = Fixture::start().await;
    f.create_set(0, 0).await;
    f.scale(2, 1).await;
    f.eventually_count(2).await;
    let runners = f.runners();
    f.set_runner_status(&runners[1], json!({"phase": "Pending", "runnerId": 31})).await;
    f.set_runner_status(&runners[0], json!({"phase": "Outdated", "runnerId": 30})).await;

    f.h.eventually("the set is Outdated", TIMEOUT, || {
        f.status().phase == Some(EphemeralRunnerSetPhase::Outdated)
    })
    .await;
    f.eventually_count(0).await;
    f.scale(2, 2).await;
    f.consistently_count(0, seconds(3)).await;
}

#[tokio::test(start_paused = true)]
async fn scale_down_removes_the_runner_at_the_service_before_deleting_it() {
    let f = Fixture::start().await;
    f.create_set(1, 0).await;
    f.eventually_count(1).await;
    let runner = f.runners().remove(0);
    let id = f.register(&runner).await;
    f.h.eventually("registration seen", TIMEOUT, || f.status().pending_ephemeral_runners == 1).await;

    f.scale(0, 0).await;
    f.eventually_count(0).await;
    assert!(f.h.github.runner(id).is_some_and(|r| r.is_removed()), "removed at the service");
    let removed = f.trace_position(&format!("github remove-runner runner={id} outcome=Removed"));
    let deleted =
        f.trace_position(&format!("apiserver delete ephemeralrunners {RUNNER_NS}/{}", name_of(&runner)));
    assert!(removed.is_some() && deleted.is_some(), "both happened: {removed:?} {deleted:?}");
    assert!(removed < deleted, "RemoveRunner comes before the delete");
}

/// The bug #1125 fixed, in scale-set form: without the fix, scale-down deletes the runner on the
/// cached "no job" reading and the service still holds the registration (it is the runner's own
/// finalizer that would call RemoveRunner later).
#[tokio::test(start_paused = true)]
async fn without_the_fix_scale_down_deletes_the_runner_without_removing_it_first() {
    let f = Fixture::start_with(|b| b.switches.fixes.remove_runner_before_scale_down = false).await;
    f.create_set(1, 0).await;
    f.eventually_count(1).await;
    let runner = f.runners().remove(0);
    let id = f.register(&runner).await;
    f.h.eventually("registration seen", TIMEOUT, || f.status().pending_ephemeral_runners == 1).await;

    f.scale(0, 0).await;
    f.eventually_count(0).await;
    assert!(f.h.github.runner(id).is_some_and(|r| !r.is_removed()), "still registered at the service");
    assert_eq!(f.h.github.request_count(Operation::RemoveRunner, 204), 0);
}

#[tokio::test(start_paused = true)]
async fn a_runner_whose_job_is_still_running_is_kept_on_scale_down() {
    let f = Fixture::start().await;
    f.create_set(1, 0).await;
    f.eventually_count(1).await;
    let runner = f.runners().remove(0);
    let id = f.register(&runner).await;
    f.h.eventually("registration seen", TIMEOUT, || f.status().pending_ephemeral_runners == 1).await;
    let busy = r#"{"typeName": "GitHub.DistributedTask.WebApi.JobStillRunningException, GitHub.DistributedTask.WebApi", "typeKey": "JobStillRunningException", "message": "Job is still running"}"#;
    // Busy for as long as the job runs (the script's answers).
    for _ in 0..5 {
        f.h.script.answer(Operation::RemoveRunner, 400, busy);
    }

    f.scale(0, 0).await;
    f.h.eventually("RemoveRunner answered", TIMEOUT, || f.h.script.used().contains(&"remove-runner")).await;
    f.consistently_count(1, seconds(3)).await;
    assert!(f.h.github.runner(id).is_some_and(|r| !r.is_removed()));
    assert_eq!(f.h.metric("controller_runtime_reconcile_errors_total", &[]), 0, "busy is not an error");
    // The removal mark's write (`fixes.delete_removed_runner_first`) and the status it changes wake the
    // set again, and those passes ask again; then nothing wakes it: no loop.
    let asked = f.h.script.used().iter().filter(|op| **op == "remove-runner").count();
    assert!((1..=3).contains(&asked), "RemoveRunner asked {asked} times while the job ran");

    // The next pass (any event: here a listener patch) asks again; the job has ended by then.
    f.h.script.clear();
    f.patch_set(json!({"metadata": {"annotations": {"nudge": "1"}}})).await;
    f.eventually_count(0).await;
    assert!(f.h.github.runner(id).is_some_and(|r| r.is_removed()));
}

#[tokio::test(start_paused = true)]
async fn a_patch_zero_scale_up_under_watch_lag_overshoots_then_scales_the_extra_runners_down() {
    // Upstream behaviour, kept: with patch 0 the gate never closes, so a reconcile that starts
    // before the cache holds every runner just created creates more.
    let f = Fixture::start_with(|b| {
        b.apiserver.watch_lag.per_resource.insert("ephemeralrunners".into(), LagRange::between(100, 1000));
    })
    .await;
    f.create_set(0, 0).await;
    f.scale(5, 0).await;
    f.h.eventually("more than 5 runners", TIMEOUT, || f.count() > 5).await;
    tokio::time::sleep(seconds(2)).await;
    for (i, runner) in f.runners().iter().enumerate() {
        f.set_runner_status(runner, json!({"phase": "Pending", "runnerId": 500 + i})).await;
    }
    f.eventually_count(5).await;
    f.consistently_count(5, seconds(3)).await;
}

#[tokio::test(start_paused = true)]
async fn a_proxied_set_gets_a_proxy_secret_that_goes_when_the_set_is_deleted() {
    let f = Fixture::start().await;
    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "proxy-credentials", "namespace": RUNNER_NS},
        "stringData": {"username": "username", "password": "password"},
    }))
    .expect("a secret");
    let secrets: Api<Secret> = f.h.api(RUNNER_NS);
    secrets.create(&PostParams::default(), &credentials).await.expect("created");
    let mut spec = EphemeralRunnerSpec {
        github_config_url: CONFIG_URL.into(),
        github_config_secret: CONFIG_SECRET.into(),
        runner_scale_set_id: f.scale_set_id,
        pod_template: runner_template(),
        ..Default::default()
    };
    spec.proxy = Some(
        serde_json::from_value(json!({
            "http": {"url": "http://proxy.example.com", "credentialSecretRef": "proxy-credentials"},
            "https": {"url": "https://proxy.example.com", "credentialSecretRef": "proxy-credentials"},
            "noProxy": ["example.com", "example.org"],
        }))
        .expect("a proxy config"),
    );
    f.create(EphemeralRunnerSetSpec { replicas: 1, ephemeral_runner_spec: spec, ..Default::default() }).await;

    let proxy_secret = |f: &Fixture| {
        let secrets = f.h.apiserver.objects("secrets");
        secrets
            .into_iter()
            .find(|s| s["metadata"]["name"].as_str().is_some_and(|n| n.ends_with("-runner-proxy")))
    };
    f.eventually_count(1).await;
    let secret: Secret =
        serde_json::from_value(proxy_secret(&f).expect("the proxy secret")).expect("a secret");
    let text = |key: &str| {
        secret.data.as_ref().and_then(|d| d.get(key)).map(|v| String::from_utf8_lossy(&v.0).into_owned())
    };
    assert_eq!(text("http_proxy").as_deref(), Some("http://username:password@proxy.example.com"));
    assert_eq!(text("https_proxy").as_deref(), Some("https://username:password@proxy.example.com"));
    assert_eq!(text("no_proxy").as_deref(), Some("example.com,example.org"));
    let secret_name = secret.metadata.name.clone().expect("named");
    assert!(f.runners().iter().all(|r| r.spec.proxy_secret_ref == secret_name));

    let api: Api<EphemeralRunnerSet> = f.h.api(RUNNER_NS);
    api.delete(SET, &DeleteParams::default()).await.expect("delete accepted");
    f.h.eventually("the set is gone", TIMEOUT, || f.set().is_none()).await;
    assert!(proxy_secret(&f).is_none(), "the proxy secret went first");
    assert!(f.all_runners().is_empty());
}

/// What one irrelevant runner update (readiness, outside the §5.1 projection) costs the set.
#[derive(Debug, PartialEq, Eq)]
struct QuietUpdateCost {
    reconciles: i64,
    copies: i64,
    writes: i64,
    dropped: i64,
}

/// Settles a set at one registered runner, then flips the runner's readiness and reports what the
/// set controller did about it.
async fn cost_of_a_readiness_update(f: &Fixture) -> QuietUpdateCost {
    f.create_set(1, 1).await;
    f.eventually_count(1).await;
    let runner = f.runners().remove(0);
    f.set_runner_status(&runner, json!({"phase": "Pending", "runnerId": 41})).await;
    f.h.eventually("status settled", TIMEOUT, || f.status().pending_ephemeral_runners == 1).await;
    tokio::time::sleep(seconds(2)).await;
    let measure = || {
        let set_calls = |verb| f.h.metric(API_CALLS_TOTAL, &[("kind", "EphemeralRunnerSet"), ("verb", verb)]);
        QuietUpdateCost {
            reconciles: f.h.metric(RECONCILE_TOTAL, &[("controller", CONTROLLER_NAME)]),
            copies: f.h.metric(DEEP_COPIES_TOTAL, &[("kind", "EphemeralRunnerSet")]),
            writes: set_calls("patch") + set_calls("patch_status"),
            dropped: f.h.metric(PREDICATE_DROPPED_TOTAL, &[("predicate", ERS_FROM_EPHEMERAL_RUNNER)]),
        }
    };
    let before = measure();
    f.set_runner_status(&runner, json!({"ready": true})).await;
    tokio::time::sleep(seconds(2)).await;
    let after = measure();
    QuietUpdateCost {
        reconciles: after.reconciles - before.reconciles,
        copies: after.copies - before.copies,
        writes: after.writes - before.writes,
        dropped: after.dropped - before.dropped,
    }
}

#[tokio::test(start_paused = true)]
async fn the_predicate_drops_a_runner_update_outside_the_projection() {
    let f = Fixture::start().await;
    let cost = cost_of_a_readiness_update(&f).await;
    assert_eq!(cost, QuietUpdateCost { reconciles: 0, copies: 0, writes: 0, dropped: 1 });
}

#[tokio::test(start_paused = true)]
async fn without_predicates_a_reconcile_that_changes_nothing_copies_and_writes_nothing() {
    let f = Fixture::start_with(|b| b.switches.optimisations.predicates = false).await;
    let cost = cost_of_a_readiness_update(&f).await;
    assert_eq!(cost, QuietUpdateCost { reconciles: 1, copies: 0, writes: 0, dropped: 0 });
}

#[tokio::test(start_paused = true)]
async fn with_every_optimisation_off_each_reconcile_copies_the_set_but_still_writes_nothing_new() {
    let f = Fixture::start_with(|b| b.switches.optimisations = Optimisations::all_off()).await;
    let cost = cost_of_a_readiness_update(&f).await;
    assert_eq!(cost, QuietUpdateCost { reconciles: 1, copies: 1, writes: 0, dropped: 0 });
}
