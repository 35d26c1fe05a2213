//! What the update predicates save (ARC-MODEL §5.1): reconciles per controller and updates dropped per
//! predicate, exact, for the standard workload and the steady-state swarm over fixed seeds, predicates
//! on vs off, plus criterion's time per run. On the standard workload (run quiet, so that no event
//! moves in time) the equivalence oracle confirms both make the same mutating calls.

use std::hint::black_box;

use arc_benches::{Switches, differences, dropped, plan, reconciles, run};
use criterion::{Criterion, criterion_group, criterion_main};

const SEEDS: [u64; 3] = [1, 2, 3];
const OFF: Switches = Switches { predicates: false, lazy_copy: true };

fn report(scenario: &str, quiet: bool) {
    let (mut on_total, mut off_total) =
        (std::collections::BTreeMap::new(), std::collections::BTreeMap::new());
    for seed in SEEDS {
        let on = run(plan(scenario, seed, Switches::ON, quiet));
        let off = run(plan(scenario, seed, OFF, quiet));
        if quiet {
            let diffs = differences(&on, &off);
            assert!(diffs.is_empty(), "{scenario} seed {seed}: predicates changed behaviour: {diffs:?}");
        }
        for (c, n) in reconciles(&on) {
            *on_total.entry(c).or_insert(0) += n;
        }
        for (c, n) in reconciles(&off) {
            *off_total.entry(c).or_insert(0) += n;
        }
        println!("{scenario} seed {seed}: dropped {:?}", dropped(&on));
    }
    for (c, on) in &on_total {
        let off = off_total[c];
        println!(
            "{scenario}: reconciles {c:<22} on {on:>6} off {off:>6} ({:.0}% of off)",
            100.0 * *on as f64 / off.max(1) as f64
        );
    }
}

fn bench(c: &mut Criterion) {
    report("standard", true);
    report("steady-state", false);
    let mut group = c.benchmark_group("predicates");
    group.sample_size(10);
    group.bench_function("standard_on", |b| {
        b.iter(|| black_box(run(plan("standard", 1, Switches::ON, true))))
    });
    group.bench_function("standard_off", |b| b.iter(|| black_box(run(plan("standard", 1, OFF, true)))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
