//! The same seed gives the same trace, byte for byte; another seed moves it.

use std::time::Duration;

use arc_sim::github::JobSpec;
use kube::api::{DeleteParams, PostParams};

use crate::kubelet::support::{Setup, jit_pod, node_with};

/// A runner pod that takes a job and is deleted mid-job, on seed `seed`; returns the trace's text.
fn trace_of(seed: u64) -> String {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
    runtime.block_on(async {
        let n = node_with(Setup { seed, ..Setup::default() });
        let set = n.github.create_scale_set("set", 1, &["set"]);
        n.jit_secret(set, "r1").await;
        n.pods.create(&PostParams::default(), &jit_pod("r1")).await.unwrap();
        n.github.submit_job(JobSpec::simple(&["set"], 120_000));
        n.acquire_all(set).await;
        tokio::time::sleep(Duration::from_secs(20)).await;
        n.pods.delete("r1", &DeleteParams::default()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(40)).await;
        n.record.trace().text()
    })
}

#[test]
fn the_same_seed_gives_the_same_kubelet_trace() {
    let first = trace_of(7);
    assert!(first.contains("sigterm"), "the run reached SIGTERM");
    assert_eq!(first, trace_of(7));
    assert_ne!(first, trace_of(8));
}
