//! One standard end-to-end run per iteration (issue 4): seeds per second, and simulated seconds per
//! wall second.

use std::hint::black_box;

use arc_benches::{Switches, plan, run};
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let record = run(plan("standard", 1, Switches::ON, false));
    println!(
        "standard seed 1: {:.0} simulated seconds, {} jobs",
        record.end_ms as f64 / 1000.0,
        record.jobs.len()
    );
    let mut group = c.benchmark_group("e2e");
    group.sample_size(20);
    let mut seed = 0;
    group.bench_function("standard_run", |b| {
        b.iter(|| {
            seed += 1;
            black_box(run(plan("standard", seed, Switches::ON, false)))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
