//! The first end-to-end world (issue 4): one runner set (min 0, max 10), the standard workload, the
//! real controller, listener, kubelet and fakes. For 2 seeds (50 in the slow tier) every job ends and none is lost, runners
//! scale up with demand and back to the minimum, no registration is left behind; a seed run twice
//! gives the same trace.

use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;
use arc_sim::github::EndReason;
use arc_sim::{Seed, TraceMode};
use arc_world::RunRecord;
use arcsim::runner::run_one;

fn run(seed: u64) -> (arc_scenarios::verdict::Verdict, RunRecord) {
    let standard = scenarios::find("standard").expect("the standard scenario");
    run_one(standard, Variant::Fixed, Seed(seed), TraceMode::HashOnly).expect("the run completes")
}

/// The most EphemeralRunners alive at once during the run.
fn peak_runners(record: &RunRecord) -> usize {
    let mut live = std::collections::BTreeSet::new();
    let mut peak = 0;
    for (_, change) in record.changes_of("ephemeralrunners") {
        let uid = change.object.pointer("/metadata/uid").and_then(|u| u.as_str()).unwrap_or("").to_string();
        match change.kind {
            arc_sim::apiserver::EventType::Deleted => {
                live.remove(&uid);
            }
            _ => {
                live.insert(uid);
            }
        }
        peak = peak.max(live.len());
    }
    peak
}

/// Every job of `seeds` ends and none is lost, runners scale up and back, nothing is left registered.
fn the_standard_workload_completes_every_job(seeds: std::ops::RangeInclusive<u64>) {
    for seed in seeds {
        let (verdict, record) = run(seed);
        assert!(
            verdict.passed(),
            "seed {seed}: {:#?}\nreplay: {}",
            verdict.violations,
            verdict.replay_line()
        );
        assert!(!record.jobs.is_empty(), "seed {seed}: the workload submitted jobs");
        assert!(record.jobs.iter().all(|j| j.is_completed()), "seed {seed}: every job ended");
        assert!(
            record.jobs.iter().all(|j| j.end_reason() != Some(EndReason::RunnerLost)),
            "seed {seed}: none lost"
        );
        assert!(peak_runners(&record) >= 2, "seed {seed}: runners scaled up with demand");
        assert!(record.objects_of("ephemeralrunners").is_empty(), "seed {seed}: back to minRunners (0)");
        assert!(record.runners.iter().all(|r| r.is_removed()), "seed {seed}: no registration left behind");
        assert!(
            record.settled_at_ms.is_some_and(|ms| ms < 3_600_000),
            "seed {seed}: settled within the hour"
        );
    }
}

#[test]
fn the_standard_workload_completes_every_job_for_two_seeds() {
    the_standard_workload_completes_every_job(1..=2);
}

#[test]
fn the_same_seed_twice_gives_the_same_trace() {
    let (first, _) = run(3);
    let (second, _) = run(3);
    assert_eq!((first.trace_hash, first.trace_lines), (second.trace_hash, second.trace_lines));
}

/// A listener pod in the world runs the controller's own listener entry point
/// (`arc_controller::scaleset::listener::run`) with the pod's name as its hostname, exactly as
/// `arc-controller listener` runs it in a pod: the message session at GitHub is owned by the pod. (A
/// listener built any other way owns its session under the scale set's name.)
#[test]
fn a_listener_pod_runs_the_binarys_entry_point_with_its_hostname() {
    use arc_scenarios::scenarios::objects::{CONTROLLER_NAMESPACE, RUNNER_SET};
    use arc_scenarios::scenarios::standard::scale_set_world;
    use arc_world::World;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap();
    runtime.block_on(async {
        let plan = scale_set_world(Seed(1), Variant::Fixed, 0, 10);
        let mut world =
            World::build(plan.config, plan.families, TraceMode::HashOnly, arc_sim::record::Interest::none())
                .expect("a world");
        world.create_objects().await.expect("the objects are created");
        world.start_controller().await;
        let mut waited = 0;
        while world.github().sessions().is_empty() && waited < 120 {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            waited += 1;
        }
        let sessions = world.github().sessions();
        assert_eq!(sessions.len(), 1, "one listener holds the scale set's session");
        let listener_pods: Vec<String> = world
            .apiserver()
            .objects("pods")
            .into_iter()
            .filter(|p| {
                p.pointer("/metadata/namespace").and_then(|n| n.as_str()) == Some(CONTROLLER_NAMESPACE)
            })
            .filter_map(|p| p.pointer("/metadata/name").and_then(|n| n.as_str()).map(str::to_string))
            .collect();
        assert_eq!(listener_pods.len(), 1, "{listener_pods:?}");
        assert_eq!(sessions[0].owner, listener_pods[0]);
        assert_ne!(sessions[0].owner, RUNNER_SET, "not the scale set's name, the default of other paths");
    });
}

/// The slow tier (`cargo test --workspace -- --ignored slow::`).
mod slow {
    #[test]
    #[ignore = "slow tier: 48 standard runs"]
    fn the_standard_workload_completes_every_job_for_fifty_seeds() {
        super::the_standard_workload_completes_every_job(3..=50);
    }
}
