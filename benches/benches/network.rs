//! The cost of the turmoil network backend (issue 17): the same standard run (seed 1, the fixed
//! controller) on the in-process backend and on turmoil, one run per iteration. docs/fakes/network.md quotes the
//! ratio of the two.

use std::hint::black_box;

use arc_benches::{Switches, plan, run};
use arc_sim::net::Network;
use criterion::{Criterion, criterion_group, criterion_main};

fn on(network: Network) -> arc_scenarios::scenario::WorldPlan {
    let mut plan = plan("standard", 1, Switches::ON, false);
    plan.config.network = network;
    plan
}

fn bench(c: &mut Criterion) {
    for network in Network::ALL {
        let record = run(on(network));
        println!(
            "standard seed 1 on {network}: {:.0} simulated seconds, {} jobs, trace hash {:016x}",
            record.end_ms as f64 / 1000.0,
            record.jobs.len(),
            record.trace.hash()
        );
    }
    let mut group = c.benchmark_group("network");
    group.sample_size(10);
    for network in Network::ALL {
        group.bench_function(format!("standard_seed_1_{}", network.name().replace('-', "_")), |b| {
            b.iter(|| black_box(run(on(network))))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
