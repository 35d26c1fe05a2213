//! A sweep's progress, reported only (it changes no result): on a terminal a bar with the seeds done,
//! seeds per second and the time left; when stderr is a log (a pod's, a CI job's) a line at every
//! tenth of the sweep with the same figures. The rate and time left are indicatif's, from wall time.

use std::sync::atomic::{AtomicUsize, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

/// The progress of one sweep.
pub struct Progress {
    bar: ProgressBar,
    logged_tenths: AtomicUsize,
}

impl Progress {
    /// A bar (or log lines) for a sweep about to start.
    pub fn start() -> Progress {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} seeds, {per_sec}, {elapsed} elapsed, {eta} left",
            )
            .expect("a valid template"),
        );
        Progress { bar, logged_tenths: AtomicUsize::new(0) }
    }

    /// `done` of `total` seeds are done (run, or skipped past a bug cell's cut-off).
    pub fn update(&self, done: usize, total: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
        if !self.bar.is_hidden() || total == 0 {
            return;
        }
        let tenths = done * 10 / total;
        if tenths > self.logged_tenths.fetch_max(tenths, Ordering::SeqCst) {
            eprintln!(
                "sweep: {done}/{total} seeds, {:.1} seeds/s, {} s elapsed, {} s left",
                self.bar.per_sec(),
                self.bar.elapsed().as_secs(),
                self.bar.eta().as_secs()
            );
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
