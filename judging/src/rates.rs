//! Measured rates and the bounds derived from them. A kill row's bound, a probe's floor in its race
//! world and its ceiling in its control world are never chosen: each comes from a [`Rate`] measured on
//! seeds that no test uses (`arcsim measure`), through the binomial tail at [`RISK`].
//!
//! A measured share is an estimate, so bounds use its Wilson score interval at the same risk: the
//! lower end for kill bounds and floors, the upper end for ceilings. A sweep then fails wrongly with
//! probability about [`RISK`] per bound, however the seeds fall.

use serde::Serialize;

/// The risk each bound accepts: a correct world falls outside it with at most this probability.
pub const RISK: f64 = 1e-3;

/// One-sided standard normal quantile for [`RISK`].
const Z: f64 = 3.090_232;

/// `hits` of `seeds` consecutive seeds from `from`, as `arcsim measure` counted them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rate {
    /// Seeds in which the event happened.
    pub hits: u32,
    /// Seeds run.
    pub seeds: u32,
    /// The first seed.
    pub from: u64,
}

impl Rate {
    /// A measured rate.
    pub const fn measured(hits: u32, seeds: u32, from: u64) -> Self {
        Rate { hits, seeds, from }
    }

    /// The measured share.
    pub fn share(self) -> f64 {
        if self.seeds == 0 { 0.0 } else { f64::from(self.hits) / f64::from(self.seeds) }
    }

    /// The Wilson score interval of the share at [`RISK`] on each side.
    pub fn interval(self) -> (f64, f64) {
        if self.seeds == 0 {
            return (0.0, 1.0);
        }
        let n = f64::from(self.seeds);
        let p = self.share();
        let centre = p + Z * Z / (2.0 * n);
        let spread = Z * (p * (1.0 - p) / n + Z * Z / (4.0 * n * n)).sqrt();
        let denominator = 1.0 + Z * Z / n;
        (((centre - spread) / denominator).max(0.0), ((centre + spread) / denominator).min(1.0))
    }

    /// Seeds within which a bug killed at this rate is killed with probability at least 1 − [`RISK`]:
    /// the smallest n with (1 − p)^n ≤ RISK, p the interval's lower end. `None` when the lower end is
    /// zero (the measurement cannot promise a kill).
    pub fn kill_bound(self) -> Option<u32> {
        let p = self.interval().0;
        if p <= 0.0 {
            return None;
        }
        if p >= 1.0 {
            return Some(1);
        }
        let n = (RISK.ln() / (1.0 - p).ln()).ceil();
        Some(n.clamp(1.0, f64::from(u32::MAX)) as u32)
    }

    /// The median number of seeds a sweep runs before the first kill, at the measured share.
    pub fn median_seeds_to_kill(self) -> Option<u32> {
        let p = self.share();
        if p <= 0.0 {
            return None;
        }
        if p >= 1.0 {
            return Some(1);
        }
        Some(((0.5f64).ln() / (1.0 - p).ln()).ceil().max(1.0) as u32)
    }

    /// The fewest of `n` seeds that a world hitting at this rate hits, except with probability
    /// [`RISK`] (at the interval's lower end).
    pub fn floor(self, n: u32) -> u32 {
        let p = self.interval().0;
        (0..=n).rev().find(|&k| k == 0 || binomial_below(k, n, p) <= RISK).unwrap_or(0)
    }

    /// The most of `n` seeds that a world hitting at this rate hits, except with probability
    /// [`RISK`] (at the interval's upper end).
    pub fn ceiling(self, n: u32) -> u32 {
        let p = self.interval().1;
        (0..=n).find(|&k| 1.0 - binomial_below(k + 1, n, p) <= RISK).unwrap_or(n)
    }
}

/// P(X < k) for X ~ Binomial(n, p).
fn binomial_below(k: u32, n: u32, p: f64) -> f64 {
    if p <= 0.0 {
        return if k > 0 { 1.0 } else { 0.0 };
    }
    if p >= 1.0 {
        return if k > n { 1.0 } else { 0.0 };
    }
    let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
    let mut ln_choose = 0.0;
    let mut total = 0.0;
    for i in 0..k.min(n + 1) {
        if i > 0 {
            ln_choose += f64::from(n - i + 1).ln() - f64::from(i).ln();
        }
        total += (ln_choose + f64::from(i) * ln_p + f64::from(n - i) * ln_q).exp();
    }
    total.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kill_bound_is_the_smallest_n_with_the_survival_under_the_risk() {
        let rate = Rate::measured(270, 1000, 2_000_000);
        let (low, high) = rate.interval();
        assert!(low < 0.27 && 0.27 < high && low > 0.22, "{low} {high}");
        let n = rate.kill_bound().unwrap();
        assert!((1.0 - low).powf(f64::from(n)) <= RISK);
        assert!((1.0 - low).powf(f64::from(n - 1)) > RISK);
        assert_eq!(Rate::measured(0, 1000, 1).kill_bound(), None);
        assert_eq!(Rate::measured(1000, 1000, 1).median_seeds_to_kill(), Some(1));
    }

    #[test]
    fn floors_and_ceilings_hold_the_binomial_tail() {
        let rate = Rate::measured(500, 1000, 1);
        let floor = rate.floor(20);
        assert!(floor > 0 && floor < 10, "{floor}");
        assert!(binomial_below(floor, 20, rate.interval().0) <= RISK);
        assert!(binomial_below(floor + 1, 20, rate.interval().0) > RISK);
        let quiet = Rate::measured(0, 1000, 1);
        assert_eq!(quiet.floor(20), 0);
        let ceiling = quiet.ceiling(20);
        let high = quiet.interval().1;
        assert!(ceiling > 0 && ceiling < 5, "{ceiling}");
        assert!(1.0 - binomial_below(ceiling + 1, 20, high) <= RISK);
        assert!(1.0 - binomial_below(ceiling, 20, high) > RISK);
        assert_eq!(Rate::measured(1000, 1000, 1).ceiling(5), 5);
        assert!((binomial_below(21, 20, 0.3) - 1.0).abs() < 1e-9);
    }
}
