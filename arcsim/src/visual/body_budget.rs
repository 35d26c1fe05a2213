//! How much of a run's event bodies a page carries: a long run's bodies (every committed object, every
//! request) make a page of tens of MiB that a browser opens slowly, so past [`BODY_BUDGET_BYTES`] a
//! page keeps the bodies its violations cite, then those nearest a violation's window (nearest the run's
//! start when it has none), and empties the rest ([`LEFT_OUT`]; the page says why). Labels, lanes and times stay for
//! every event; the run's trace (`arcsim run … --trace FILE`) has every body.

use std::collections::BTreeSet;

use super::page_data::{Events, ViolationView};

/// The bodies' share of a page, in bytes.
pub const BODY_BUDGET_BYTES: usize = 3 << 20;

/// A left-out body: empty (a kept body is JSON text, never empty); the page says why when it shows one.
pub const LEFT_OUT: &str = "";

/// Fits `events`' bodies into `budget` bytes as the module says; returns how many it left out.
pub fn fit_bodies(events: &mut Events, violations: &[ViolationView], budget: usize) -> usize {
    let total: usize = events.body.iter().map(String::len).sum();
    if total <= budget {
        return 0;
    }
    let cited: BTreeSet<usize> = violations.iter().flat_map(|v| v.cited.iter().copied()).collect();
    let distance = |t: u64| {
        let from_window = |v: &ViolationView| t.saturating_sub(v.to_ms).max(v.from_ms.saturating_sub(t));
        violations.iter().map(from_window).min().unwrap_or(t)
    };
    let mut order: Vec<usize> = (0..events.body.len()).collect();
    order.sort_by_key(|&i| (!cited.contains(&i), distance(events.t[i]), i));
    let (mut spent, mut left_out) = (0, 0);
    for i in order {
        let len = events.body[i].len();
        if cited.contains(&i) || spent + len <= budget {
            spent += len;
        } else {
            events.body[i] = LEFT_OUT.to_string();
            left_out += 1;
        }
    }
    left_out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(times: &[u64]) -> Events {
        Events {
            t: times.to_vec(),
            body: times.iter().map(|_| "x".repeat(10)).collect(),
            ..Events::default()
        }
    }

    fn violation(from_ms: u64, to_ms: u64, cited: Vec<usize>) -> ViolationView {
        ViolationView {
            oracle: "o",
            at_ms: to_ms,
            message: String::new(),
            objects: Vec::new(),
            from_ms,
            to_ms,
            lanes: Vec::new(),
            subjects: Vec::new(),
            cited,
        }
    }

    #[test]
    fn within_the_budget_every_body_stays() {
        let mut e = events(&[0, 1, 2]);
        assert_eq!(fit_bodies(&mut e, &[], 30), 0);
        assert!(e.body.iter().all(|b| b.len() == 10));
    }

    #[test]
    fn past_it_the_cited_and_the_nearest_to_the_violation_stay() {
        let mut e = events(&[0, 100, 500, 900, 1_000]);
        let v = violation(450, 550, vec![0]);
        assert_eq!(fit_bodies(&mut e, &[v], 30), 2);
        let kept: Vec<bool> = e.body.iter().map(|b| b != LEFT_OUT).collect();
        // Cited (0), inside the window (500), then the nearest (100: 350 away; 900: 350 away, later).
        assert_eq!(kept, [true, true, true, false, false]);
    }

    #[test]
    fn without_a_violation_the_earliest_stay() {
        let mut e = events(&[0, 100, 500]);
        assert_eq!(fit_bodies(&mut e, &[], 20), 1);
        assert_eq!(e.body[2], LEFT_OUT);
    }
}
