//! Criterion bench of the fake API server through the real `kube::Client`: create, get, merge patch,
//! and watch fan-out to 10 watchers. Requests take no simulated time here (the serving latency and
//! watch lag are zero), so the figures are the fake's own CPU cost per operation.

use std::hint::black_box;

use arc_sim::apiserver::{ApiServerConfig, FakeApiServer, LagRange, WatchLag};
use arc_sim::{Seed, TraceMode};
use arc_world::ClusterBuilder;
use arc_world::arc_crds;
use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchParams};
use serde_json::json;
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("a runtime")
}

fn pods(rt: &Runtime) -> (FakeApiServer, Api<Pod>) {
    rt.block_on(async {
        let config = ApiServerConfig {
            request_latency: LagRange::fixed(0),
            watch_lag: WatchLag::default(),
            watch_cache_lag: WatchLag::default(),
            ..Default::default()
        };
        let cluster = ClusterBuilder::new(Seed(1))
            .trace(TraceMode::HashOnly)
            .apiserver(config)
            .crds(arc_crds())
            .build();
        let server = cluster.apiserver().clone();
        let api = Api::namespaced(server.client(), "default");
        (server, api)
    })
}

fn pod(generate: bool, name: &str) -> Pod {
    let meta = if generate { json!({"generateName": name}) } else { json!({"name": name}) };
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": {"containers": [{"name": "runner", "image": "ghcr.io/actions/actions-runner:2.330.0"}]}
    }))
    .expect("a pod")
}

fn bench_requests(c: &mut Criterion) {
    let rt = runtime();
    let (_server, api) = pods(&rt);
    rt.block_on(api.create(&PostParams::default(), &pod(false, "fixed"))).expect("create");
    let mut group = c.benchmark_group("apiserver");
    group.bench_function("create", |b| {
        let template = pod(true, "bench-");
        b.iter(|| rt.block_on(api.create(&PostParams::default(), black_box(&template))).expect("create"))
    });
    group.bench_function("get", |b| b.iter(|| rt.block_on(api.get(black_box("fixed"))).expect("get")));
    let mut flip = 0u64;
    group.bench_function("merge_patch", |b| {
        b.iter(|| {
            flip += 1;
            let patch = Patch::Merge(json!({"metadata": {"labels": {"n": flip.to_string()}}}));
            rt.block_on(api.patch("fixed", &PatchParams::default(), &patch)).expect("patch")
        })
    });
    group.finish();
}

fn bench_watch_fan_out(c: &mut Criterion) {
    let rt = runtime();
    let (_server, api) = pods(&rt);
    let mut watchers: Vec<_> = rt.block_on(async {
        let mut out = Vec::new();
        for _ in 0..10 {
            out.push(
                api.watch(&WatchParams::default().disable_bookmarks(), "0").await.expect("watch").boxed(),
            );
        }
        out
    });
    let template = pod(true, "fan-");
    c.bench_function("apiserver/watch_fan_out_10", |b| {
        b.iter(|| {
            rt.block_on(async {
                api.create(&PostParams::default(), &template).await.expect("create");
                for w in &mut watchers {
                    black_box(w.next().await.expect("an event").expect("decodes"));
                }
            })
        })
    });
}

criterion_group!(benches, bench_requests, bench_watch_fan_out);
criterion_main!(benches);
