//! The [`Scheduler`]: one per run, shared by the fakes, carrying out the run's [`Schedule`] at the
//! sim's scheduling points. A point names its owner (a stand-in for a thread: one client's requests
//! to one resource, one watch stream, one GitHub operation, the assigner, one runner process) and
//! defers its task a drawn number of times with `tokio::task::yield_now()`: each yield puts the task
//! behind the tasks ready in the same simulated instant (a yield never lets simulated time pass), so
//! more yields mean running later within the instant. Every draw comes from the run's own `schedule`
//! stream, so the other components draw exactly as under `fifo`, and the same seed and schedule give
//! the same trace.
//!
//! `pct:D` approximates PCT (Burckhardt et al., ASPLOS'10): each owner draws a priority at first sight
//! (one of [`LEVELS`] levels above D − 1), and D − 1 change points, at step indices drawn over
//! [`STEP_ESTIMATE`] points, demote the owner of the point reached at that step to priority i (the
//! i-th change point), below every initial priority; a point yields once per level its owner's priority
//! is below the top. PCT picks the highest-priority runnable thread at every step; tokio's
//! current-thread scheduler is not ours to replace, so here lower priority only means deferring more
//! often, priorities may tie, and the controller's own tasks are reordered only through the sim tasks
//! they wait on.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Schedule;
use crate::seed::{Component, Seed};

/// Initial priority levels of `pct:D` (owners drawing the same level tie).
pub const LEVELS: u32 = 8;
/// The run length, in scheduling points, `pct:D` draws its change points over: about a standard
/// world's run (8,000–9,000 points; steady-state's has about 17,000, assign-during-delete's 23,000,
/// whose change points all fall in their first 10,000).
pub const STEP_ESTIMATE: u64 = 10_000;
/// Most yields at a point under `random`.
pub const RANDOM_MAX_YIELDS: u32 = 3;

/// The run's scheduler. Clones share it; the default (`fifo`) does nothing at a point.
#[derive(Debug, Clone, Default)]
pub struct Scheduler {
    explorer: Option<Arc<Mutex<Explorer>>>,
}

impl Scheduler {
    /// The `fifo` scheduler: every point passes at once.
    pub const FIFO: Scheduler = Scheduler { explorer: None };

    /// The scheduler of `schedule` for a run of `seed`.
    pub fn new(seed: Seed, schedule: Schedule) -> Scheduler {
        let order = match schedule {
            Schedule::Fifo => return Scheduler::FIFO,
            Schedule::Random => Order::Random,
            Schedule::Pct { depth } => Order::Pct { depth },
        };
        let explorer = Explorer::new(seed.rng(Component::Schedule), order);
        Scheduler { explorer: Some(Arc::new(Mutex::new(explorer))) }
    }

    /// A scheduling point of `owner` (called only when the schedule needs it): the task defers itself
    /// behind the other ready tasks as many times as the schedule draws.
    pub async fn point(&self, owner: impl FnOnce() -> String) {
        let Some(explorer) = &self.explorer else { return };
        let yields = explorer.lock().unwrap_or_else(|p| p.into_inner()).yields_at(owner);
        for _ in 0..yields {
            tokio::task::yield_now().await;
        }
    }

    /// Scheduling points reached so far (0 under `fifo`).
    pub fn steps(&self) -> u64 {
        self.explorer.as_ref().map_or(0, |e| e.lock().unwrap_or_else(|p| p.into_inner()).step)
    }
}

/// Where a fake keeps the run's scheduler: set once by the world; `fifo` until then.
#[derive(Debug, Default)]
pub struct SchedulerSlot(OnceLock<Scheduler>);

impl SchedulerSlot {
    /// Installs the run's scheduler; a second call is ignored (one run, one scheduler).
    pub fn set(&self, scheduler: Scheduler) {
        let _ = self.0.set(scheduler);
    }

    /// The run's scheduler.
    pub fn get(&self) -> &Scheduler {
        self.0.get().unwrap_or(&Scheduler::FIFO)
    }
}

/// The order a non-fifo schedule draws.
#[derive(Debug, Clone, Copy)]
enum Order {
    Random,
    Pct { depth: u32 },
}

/// A non-fifo schedule's state: its stream, the step count, and under `pct` the owners' priorities
/// and the change points.
#[derive(Debug)]
struct Explorer {
    rng: ChaCha8Rng,
    order: Order,
    step: u64,
    priorities: BTreeMap<String, u32>,
    /// Step → the priority its owner drops to.
    change_points: BTreeMap<u64, u32>,
}

impl Explorer {
    fn new(mut rng: ChaCha8Rng, order: Order) -> Explorer {
        let mut change_points = BTreeMap::new();
        if let Order::Pct { depth } = order {
            for i in 1..depth {
                let step = rng.random_range(0..STEP_ESTIMATE);
                change_points.entry(step).or_insert(i);
            }
        }
        Explorer { rng, order, step: 0, priorities: BTreeMap::new(), change_points }
    }

    /// How often the point reached now defers its task.
    fn yields_at(&mut self, owner: impl FnOnce() -> String) -> u32 {
        let step = self.step;
        self.step += 1;
        let depth = match self.order {
            Order::Random => return self.rng.random_range(0..=RANDOM_MAX_YIELDS),
            Order::Pct { depth } => depth,
        };
        let owner = owner();
        let priority = match self.priorities.get(&owner) {
            Some(p) => *p,
            None => {
                let drawn = depth + self.rng.random_range(0..LEVELS);
                self.priorities.insert(owner.clone(), drawn);
                drawn
            }
        };
        let priority = match self.change_points.get(&step) {
            Some(demoted) => {
                self.priorities.insert(owner, *demoted);
                *demoted
            }
            None => priority,
        };
        (depth + LEVELS - 1) - priority
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yields(schedule: Schedule, owners: &[&str]) -> Vec<u32> {
        let Scheduler { explorer: Some(explorer) } = Scheduler::new(Seed(9), schedule) else {
            return vec![0; owners.len()];
        };
        let mut explorer = explorer.lock().unwrap();
        owners.iter().map(|o| explorer.yields_at(|| (*o).to_string())).collect()
    }

    #[test]
    fn fifo_draws_nothing_and_the_same_seed_draws_the_same_yields() {
        assert!(Scheduler::new(Seed(9), Schedule::Fifo).explorer.is_none());
        let owners = ["a", "b", "a", "c", "b", "a"];
        for schedule in [Schedule::Random, Schedule::Pct { depth: 3 }] {
            assert_eq!(yields(schedule, &owners), yields(schedule, &owners));
        }
        assert!(yields(Schedule::Random, &owners).iter().all(|y| *y <= RANDOM_MAX_YIELDS));
    }

    #[test]
    fn pct_keeps_an_owners_priority_until_a_change_point_demotes_it_below_all() {
        let owners = ["a", "b", "a", "b"];
        let got = yields(Schedule::Pct { depth: 1 }, &owners);
        assert_eq!((got[0], got[1]), (got[2], got[3]));
        assert!(got.iter().all(|y| *y < LEVELS));
        let mut explorer = Explorer::new(Seed(9).rng(Component::Schedule), Order::Pct { depth: 3 });
        explorer.change_points = BTreeMap::from([(1, 1), (2, 2)]);
        assert!(explorer.yields_at(|| "a".into()) < LEVELS);
        assert_eq!(explorer.yields_at(|| "a".into()), LEVELS + 1, "the first change point: priority 1");
        assert_eq!(explorer.yields_at(|| "b".into()), LEVELS, "the second: priority 2");
        assert_eq!(explorer.yields_at(|| "a".into()), LEVELS + 1, "a demoted owner stays demoted");
    }
}
