//! Delta debugging (Zeller and Hildebrandt's ddmin): the smallest subset of a list that still makes a
//! test fail, found by trying chunks and their complements at ever finer granularity. A list it
//! returns after running to the end is 1-minimal: removing any one item makes the test pass.

/// What one test of a candidate subset said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The failure is still there: keep the candidate.
    Fails,
    /// The failure is gone.
    Passes,
    /// No rerun is left in the budget: stop where we are.
    OutOfBudget,
}

/// The list ddmin ended with, and whether it ran to the end (so the list is 1-minimal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduced<T> {
    /// The smallest failing subset found, in the input's order.
    pub items: Vec<T>,
    /// ddmin ran to the end rather than out of budget.
    pub complete: bool,
}

/// Reduces `items` (which fail `test`) to a smaller failing subset, in order.
pub fn ddmin<T: Clone>(items: Vec<T>, test: &mut dyn FnMut(&[T]) -> Outcome) -> Reduced<T> {
    let mut items = items;
    let mut granularity = 2usize;
    while items.len() >= 2 {
        let chunks = split(&items, granularity);
        match first_failing(&chunks, test) {
            Ok(Some((kept, was_chunk))) => {
                items = kept;
                granularity = if was_chunk { 2 } else { (granularity - 1).max(2) };
            }
            Ok(None) if granularity >= items.len() => return Reduced { items, complete: true },
            Ok(None) => granularity = (granularity * 2).min(items.len()),
            Err(()) => return Reduced { items, complete: false },
        }
    }
    Reduced { items, complete: true }
}

/// The first chunk that fails on its own, else the first complement that fails (with whether it was
/// a chunk); `Err` when the budget ran out.
#[allow(clippy::type_complexity)]
fn first_failing<T: Clone>(
    chunks: &[Vec<T>],
    test: &mut dyn FnMut(&[T]) -> Outcome,
) -> Result<Option<(Vec<T>, bool)>, ()> {
    let complements = (0..chunks.len()).map(|i| complement(chunks, i));
    let chunk_tries = chunks.iter().cloned().map(|c| (c, true));
    // With two chunks each complement is the other chunk: already tried.
    let complement_tries = complements.filter(|_| chunks.len() > 2).map(|c| (c, false));
    for (candidate, was_chunk) in chunk_tries.chain(complement_tries) {
        match test(&candidate) {
            Outcome::Fails => return Ok(Some((candidate, was_chunk))),
            Outcome::Passes => {}
            Outcome::OutOfBudget => return Err(()),
        }
    }
    Ok(None)
}

/// `items` in `n` contiguous chunks of near-equal size.
fn split<T: Clone>(items: &[T], n: usize) -> Vec<Vec<T>> {
    let n = n.min(items.len()).max(1);
    let (size, extra) = (items.len() / n, items.len() % n);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = size + usize::from(i < extra);
        out.push(items[start..start + len].to_vec());
        start += len;
    }
    out
}

/// Every chunk but chunk `skip`, joined in order.
fn complement<T: Clone>(chunks: &[Vec<T>], skip: usize) -> Vec<T> {
    chunks.iter().enumerate().filter(|(i, _)| *i != skip).flat_map(|(_, c)| c.iter().cloned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(wanted: &'static [u32]) -> impl FnMut(&[u32]) -> Outcome {
        move |candidate| match wanted.iter().all(|w| candidate.contains(w)) {
            true => Outcome::Fails,
            false => Outcome::Passes,
        }
    }

    #[test]
    fn ddmin_finds_the_items_the_failure_needs() {
        let items: Vec<u32> = (0..20).collect();
        for wanted in [&[7u32][..], &[0, 19], &[3, 4, 11, 17]] {
            let reduced = ddmin(items.clone(), &mut needs(wanted));
            assert_eq!((reduced.items.as_slice(), reduced.complete), (wanted, true));
        }
    }

    #[test]
    fn ddmin_stops_when_the_budget_runs_out() {
        let mut runs = 0;
        let mut test = |c: &[u32]| {
            runs += 1;
            if runs > 3 { Outcome::OutOfBudget } else { needs(&[5])(c) }
        };
        let reduced = ddmin((0..20).collect(), &mut test);
        assert!(!reduced.complete && reduced.items.contains(&5));
    }

    #[test]
    fn a_list_of_one_is_already_minimal() {
        let reduced = ddmin(vec![1u32], &mut needs(&[1]));
        assert_eq!((reduced.items, reduced.complete), (vec![1], true));
    }
}
