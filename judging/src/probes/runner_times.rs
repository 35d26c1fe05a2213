//! [`RunnerTimes`]: when something happened to each runner (an assignment, a removal), by runner id and
//! in time order, so a judge asks "did it happen to this runner in this window?" by bisection instead
//! of a scan of every event.

use std::collections::BTreeMap;

/// Sim ms by runner id, each runner's in order.
pub struct RunnerTimes(BTreeMap<i64, Vec<u64>>);

impl RunnerTimes {
    /// The times of `(sim ms, runner id)` pairs, in any order.
    pub fn of(events: impl Iterator<Item = (u64, i64)>) -> Self {
        let mut times: BTreeMap<i64, Vec<u64>> = BTreeMap::new();
        for (ms, runner) in events {
            times.entry(runner).or_default().push(ms);
        }
        times.values_mut().for_each(|t| t.sort_unstable());
        RunnerTimes(times)
    }

    /// Whether `runner` has a time within `from..=to`.
    pub fn within(&self, runner: i64, from: u64, to: u64) -> bool {
        let Some(times) = self.0.get(&runner) else { return false };
        times.get(times.partition_point(|ms| *ms < from)).is_some_and(|ms| *ms <= to)
    }

    /// The latest time of `runner` at or before `ms`.
    pub fn last_at_or_before(&self, runner: i64, ms: u64) -> Option<u64> {
        let times = self.0.get(&runner)?;
        times[..times.partition_point(|at| *at <= ms)].last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runners_times_are_found_within_a_window_bounds_included() {
        let times = RunnerTimes::of([(300, 7), (100, 7), (200, 8)].into_iter());
        assert_eq!(times.0[&7], vec![100, 300], "each runner's times in order");
        assert!(times.within(7, 100, 100) && times.within(7, 250, 300));
        assert!(!times.within(7, 101, 299), "nothing strictly between");
        assert!(!times.within(9, 0, u64::MAX), "a runner with no times");
        assert!(!times.within(7, 300, 100), "an empty window");
    }

    #[test]
    fn the_latest_time_at_or_before_a_moment_is_found() {
        let times = RunnerTimes::of([(100, 7), (300, 7)].into_iter());
        assert_eq!(times.last_at_or_before(7, 99), None);
        assert_eq!(times.last_at_or_before(7, 100), Some(100));
        assert_eq!(times.last_at_or_before(7, 299), Some(100));
        assert_eq!(times.last_at_or_before(7, 300), Some(300));
        assert_eq!(times.last_at_or_before(8, 300), None);
    }
}
