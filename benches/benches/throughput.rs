//! How fast the world runs as it grows: the standard workload at 10, 100 and 1,000 runners (maxRunners
//! and the job rate scaled together). One line per size with seeds per second, simulated seconds per
//! wall second, and wall time per job, so cost growth with size is visible.

use std::hint::black_box;

use arc_benches::{run, scaled_standard};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("throughput");
    group.sample_size(10);
    for factor in [1u32, 10, 100] {
        #[allow(clippy::disallowed_methods)] // wall clock ok: a benchmark's own report line
        let started = std::time::Instant::now(); // wall clock ok
        let record = run(scaled_standard(1, factor));
        let wall = started.elapsed().as_secs_f64();
        let jobs = record.jobs.len().max(1);
        println!(
            "runners {:>5}: {:>5} jobs, {:.2} seeds/s, {:.0} sim-s per wall-s, {:.2} ms wall per job",
            10 * factor,
            jobs,
            1.0 / wall,
            record.end_ms as f64 / 1000.0 / wall,
            wall * 1000.0 / jobs as f64
        );
        if factor <= 10 {
            group.bench_with_input(BenchmarkId::new("standard", 10 * factor), &factor, |b, f| {
                b.iter(|| black_box(run(scaled_standard(1, *f))))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
