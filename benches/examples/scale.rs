//! One run of the standard workload scaled by a factor (default 30: 300 runners), for profiling:
//! `cargo build --release -p arc-benches --example scale && perf record -g target/release/examples/scale 30`.

fn main() {
    let factor: u32 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 30,
        Some(Ok(factor)) if factor > 0 => factor,
        Some(_) => {
            eprintln!("usage: scale [FACTOR]   (a positive integer; 1 = 10 runners)");
            std::process::exit(2);
        }
    };
    let record = arc_benches::run(arc_benches::scaled_standard(1, factor));
    println!("{} runners: {} jobs, {} simulated ms", 10 * factor, record.jobs.len(), record.end_ms);
}
