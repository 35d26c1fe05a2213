//! What lazy copy saves (ARC-MODEL §5.3). (a) A micro-bench of one reconcile's handling of realistic
//! objects: an EphemeralRunner with a full pod template and status, read and left alone or with one
//! field changed (patch built), and an EphemeralRunnerSet with its 50 children (ARC's cached `List`
//! deep-copies each child; lazily they are shared). Eager vs lazy, with `iter_batched`. (b) Deep copies
//! per scenario run, exact, lazy copy on vs off.

use std::hint::black_box;
use std::sync::Arc;

use arc_benches::{Switches, deep_copies, plan, run};
use arc_controller::crd::{EphemeralRunner, EphemeralRunnerSet};
use arc_controller::runtime::lazy_copy::{CopyMode, LazyCopy};
use arc_controller::runtime::metrics::Metrics;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

fn runner(i: usize) -> EphemeralRunner {
    let env: Vec<_> =
        (0..12).map(|k| json!({"name": format!("VAR_{k}"), "value": format!("value-{k}")})).collect();
    serde_json::from_value(json!({
        "apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunner",
        "metadata": {"name": format!("arc-runner-set-runner-{i:05}"), "namespace": "arc-runners", "uid": format!("uid-{i}"),
            "resourceVersion": "1234", "labels": {"app.kubernetes.io/component": "runner", "actions.github.com/scale-set-name": "arc-runner-set"},
            "annotations": {"actions.github.com/patch-id": "7", "actions.github.com/runner-group-name": "default"},
            "finalizers": ["ephemeralrunner.actions.github.com/finalizer", "ephemeralrunner.actions.github.com/runner-registration-finalizer"]},
        "spec": {"githubConfigUrl": "https://github.com/arcsim/app", "githubConfigSecret": "github-config", "runnerScaleSetId": 6,
            "metadata": {"labels": {"app": "runner"}},
            "spec": {"restartPolicy": "Never", "serviceAccountName": "runner",
                "containers": [
                    {"name": "runner", "image": "ghcr.io/actions/actions-runner:2.330.0", "command": ["/home/runner/run.sh"], "env": env,
                     "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}},
                     "volumeMounts": [{"name": "work", "mountPath": "/home/runner/_work"}]},
                    {"name": "dind", "image": "docker:dind", "securityContext": {"privileged": true}}],
                "volumes": [{"name": "work", "emptyDir": {}}]}},
        "status": {"phase": "Pending", "ready": true, "runnerId": 1000 + i, "runnerName": format!("arc-runner-set-runner-{i:05}"),
            "failures": {"pod-a": "2026-01-01T00:00:00Z", "pod-b": "2026-01-01T00:05:00Z"}}
    }))
    .expect("a runner")
}

fn runner_set() -> EphemeralRunnerSet {
    serde_json::from_value(json!({
        "apiVersion": "actions.github.com/v1alpha1", "kind": "EphemeralRunnerSet",
        "metadata": {"name": "arc-runner-set", "namespace": "arc-runners", "uid": "ers", "resourceVersion": "99"},
        "spec": {"replicas": 50, "patchID": 7, "ephemeralRunnerSpec": serde_json::to_value(&runner(0).spec).expect("spec")},
        "status": {"currentReplicas": 50}
    }))
    .expect("a runner set")
}

fn reconcile_runner(
    er: Arc<EphemeralRunner>,
    mode: CopyMode,
    change: bool,
    metrics: &Metrics,
) -> Option<serde_json::Value> {
    let mut lazy = LazyCopy::new(er, mode, metrics);
    black_box(lazy.get().status.as_ref().map(|s| s.runner_id));
    if change {
        lazy.mutate().status.get_or_insert_with(Default::default).ready = false;
        return lazy.merge_patch().ok();
    }
    None
}

fn reconcile_set(
    ers: Arc<EphemeralRunnerSet>,
    children: &[Arc<EphemeralRunner>],
    mode: CopyMode,
    metrics: &Metrics,
) -> usize {
    let lazy = LazyCopy::new(ers, mode, metrics);
    let listed: Vec<Arc<EphemeralRunner>> = match mode {
        CopyMode::Lazy => children.to_vec(),
        CopyMode::Eager => children.iter().map(|c| Arc::new(EphemeralRunner::clone(c))).collect(),
    };
    black_box(lazy.get().spec.replicas as usize + listed.iter().filter(|r| r.has_job()).count())
}

fn micro(c: &mut Criterion) {
    let metrics = Metrics::new();
    let er = Arc::new(runner(1));
    let children: Vec<Arc<EphemeralRunner>> = (0..50).map(|i| Arc::new(runner(i))).collect();
    let ers = Arc::new(runner_set());
    let mut group = c.benchmark_group("lazy_copy");
    for (name, mode) in [("lazy", CopyMode::Lazy), ("eager", CopyMode::Eager)] {
        group.bench_function(format!("runner_unchanged_{name}"), |b| {
            b.iter_batched(
                || er.clone(),
                |er| reconcile_runner(er, mode, false, &metrics),
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("runner_one_field_{name}"), |b| {
            b.iter_batched(
                || er.clone(),
                |er| reconcile_runner(er, mode, true, &metrics),
                BatchSize::SmallInput,
            )
        });
        group.bench_function(format!("set_with_50_children_{name}"), |b| {
            b.iter_batched(
                || ers.clone(),
                |ers| reconcile_set(ers, &children, mode, &metrics),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn per_run(_: &mut Criterion) {
    for scenario in ["standard", "assign-during-delete"] {
        let lazy = run(plan(scenario, 1, Switches::ON, true));
        let eager = run(plan(scenario, 1, Switches { predicates: true, lazy_copy: false }, true));
        let (l, e) = (deep_copies(&lazy), deep_copies(&eager));
        println!(
            "{scenario} seed 1: deep copies lazy {l}, eager {e} ({:.1}% saved)",
            100.0 * (1.0 - l as f64 / e.max(1) as f64)
        );
    }
}

criterion_group!(benches, micro, per_run);
criterion_main!(benches);
