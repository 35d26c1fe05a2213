//! [`StateIndex`]: the fake's indexes over runners and jobs by state, and the record of which runners
//! and jobs a change touched, so that the hot questions cost what is live, not what ever existed.
//!
//! Runners and jobs are never forgotten (the oracles read them all), so after a long run most of them
//! are removed or completed. Assignment (asked after every change), capacity and the runner
//! processes' waits read only the live part (statistics are counted apart, in the
//! `statistics_ledger`): the idle runners, the runners
//! holding a job, the registered ones and the unfinished jobs, kept here in id order so every answer
//! is the one a scan of the whole maps in id order would give. Every runner state change goes through
//! [`World::set_runner_state`] and every job state change through [`World::set_job_state`], which keep
//! the index and name what they touched ([`Topic`]); `Shared::mutate` wakes only the waiters of the
//! touched topics. In debug builds [`World::index_agrees`] recomputes the index by scanning.

use std::collections::{BTreeMap, BTreeSet};

use super::super::model::{JobState, Runner, RunnerState};
use super::World;

/// What a waiter waits on: one runner's state and connection, or one job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Topic {
    /// Runner `id`: its state or its connection number changed.
    Runner(i64),
    /// Job `request_id`: its state changed.
    Job(i64),
}

/// Runner and job ids by state, and the topics touched since the last wake-up.
#[derive(Debug, Default)]
pub(crate) struct StateIndex {
    /// Runners connected with no job.
    pub idle_runners: BTreeSet<i64>,
    /// Runners holding a job (busy, or lost with it).
    pub holding_runners: BTreeSet<i64>,
    /// The idle runners of each scale set (a runner's scale set never changes).
    pub idle_in_scale_set: BTreeMap<i64, BTreeSet<i64>>,
    /// The idle runners with a REST scope (legacy runners, the ones a queued job may go to).
    pub idle_scoped: BTreeSet<i64>,
    /// Runners not removed.
    pub live_runners: BTreeSet<i64>,
    /// The runners not removed, by name (a name may be reused once its runner is removed).
    pub live_named: BTreeMap<String, BTreeSet<i64>>,
    /// Jobs not completed.
    pub open_jobs: BTreeSet<i64>,
    /// Topics changed since `Shared::mutate` last woke their waiters.
    pub touched: BTreeSet<Topic>,
}

impl StateIndex {
    /// Files `runner` under its state, wherever it was before.
    fn file_runner(&mut self, runner: &Runner) {
        let id = runner.id;
        self.idle_runners.remove(&id);
        self.holding_runners.remove(&id);
        self.idle_scoped.remove(&id);
        if let Some(set) = runner.scale_set_id {
            remove_from(&mut self.idle_in_scale_set, &set, id);
        }
        match runner.state {
            RunnerState::Idle => {
                self.idle_runners.insert(id);
                if let Some(set) = runner.scale_set_id {
                    self.idle_in_scale_set.entry(set).or_default().insert(id);
                }
                if runner.scope.is_some() {
                    self.idle_scoped.insert(id);
                }
            }
            RunnerState::Busy { .. } | RunnerState::Lost { .. } => drop(self.holding_runners.insert(id)),
            RunnerState::Offline | RunnerState::Removed { .. } => {}
        }
        if runner.is_removed() {
            self.live_runners.remove(&id);
            remove_from(&mut self.live_named, runner.name.as_str(), id);
        } else if self.live_runners.insert(id) {
            self.live_named.entry(runner.name.clone()).or_default().insert(id);
        }
    }

    /// Files job `request_id` under `state`.
    fn file_job(&mut self, request_id: i64, state: JobState) {
        if matches!(state, JobState::Completed { .. }) {
            self.open_jobs.remove(&request_id);
        } else {
            self.open_jobs.insert(request_id);
        }
    }
}

/// Takes `id` out of `map[key]`, and the entry out of `map` once it is empty.
fn remove_from<K, Q>(map: &mut BTreeMap<K, BTreeSet<i64>>, key: &Q, id: i64)
where
    K: std::borrow::Borrow<Q> + Ord,
    Q: Ord + ?Sized,
{
    if let Some(ids) = map.get_mut(key)
        && ids.remove(&id)
        && ids.is_empty()
    {
        map.remove(key);
    }
}

impl World {
    /// Sets runner `id`'s state (a runner just inserted is filed here too).
    pub(crate) fn set_runner_state(&mut self, id: i64, state: RunnerState) {
        self.edit_runner(id, |runner| runner.state = state);
        self.index.file_runner(&self.runners[&id]);
        self.index.touched.insert(Topic::Runner(id));
    }

    /// Files a runner just inserted into `runners`.
    pub(crate) fn index_new_runner(&mut self, id: i64) {
        self.ledger_new_runner(id);
        self.index.file_runner(&self.runners[&id]);
        self.index.touched.insert(Topic::Runner(id));
    }

    /// Sets job `request_id`'s state (a job just inserted is filed by setting its first state).
    pub(crate) fn set_job_state(&mut self, request_id: i64, state: JobState) {
        self.edit_job(request_id, |job| job.state = state);
        self.index.file_job(request_id, state);
        self.index.touched.insert(Topic::Job(request_id));
    }

    /// The topics touched since the last call.
    pub(crate) fn take_touched(&mut self) -> BTreeSet<Topic> {
        std::mem::take(&mut self.index.touched)
    }

    /// Whether the index holds what a scan of the maps gives (for debug assertions and tests).
    pub(crate) fn index_agrees(&self) -> bool {
        let runners_where = |keep: fn(&RunnerState) -> bool| -> BTreeSet<i64> {
            self.runners.values().filter(|r| keep(&r.state)).map(|r| r.id).collect()
        };
        let idle = runners_where(|s| *s == RunnerState::Idle);
        let holding = runners_where(|s| matches!(s, RunnerState::Busy { .. } | RunnerState::Lost { .. }));
        let live = runners_where(|s| !matches!(s, RunnerState::Removed { .. }));
        let open: BTreeSet<i64> =
            self.jobs.values().filter(|j| !j.is_completed()).map(|j| j.request_id).collect();
        let mut idle_in_scale_set: BTreeMap<i64, BTreeSet<i64>> = BTreeMap::new();
        let mut live_named: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
        for runner in self.runners.values() {
            if let (Some(set), RunnerState::Idle) = (runner.scale_set_id, runner.state) {
                idle_in_scale_set.entry(set).or_default().insert(runner.id);
            }
            if !runner.is_removed() {
                live_named.entry(runner.name.clone()).or_default().insert(runner.id);
            }
        }
        let idle_scoped: BTreeSet<i64> =
            idle.iter().copied().filter(|id| self.runners[id].scope.is_some()).collect();
        idle == self.index.idle_runners
            && idle_in_scale_set == self.index.idle_in_scale_set
            && idle_scoped == self.index.idle_scoped
            && live_named == self.index.live_named
            && holding == self.index.holding_runners
            && live == self.index.live_runners
            && open == self.index.open_jobs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::model::{EndReason, JobResult, JobSpec, RemovalReason};

    fn world() -> World {
        World::for_tests()
    }

    fn legacy_runner(world: &mut World, name: &str) -> (i64, u64) {
        let scope = Some("/orgs/arcsim".to_string());
        let registered = world.register_runner(name, None, scope, vec!["self-hosted".into()], true);
        world.connect(&registered.config).expect("a fresh runner connects")
    }

    #[test]
    fn idle_runners_are_filed_by_scale_set_and_a_removed_runners_name_can_be_taken_again() {
        let mut world = world();
        let connect = |world: &mut World, name: &str, set: i64| {
            let registered = world.register_runner(name, Some(set), None, vec!["self-hosted".into()], true);
            world.connect(&registered.config).expect("a fresh runner connects").0
        };
        let a = connect(&mut world, "a", 1);
        let b = connect(&mut world, "b", 2);
        assert!(world.index_agrees());
        assert_eq!(world.index.idle_in_scale_set[&1], BTreeSet::from([a]));
        assert_eq!(world.index.idle_in_scale_set[&2], BTreeSet::from([b]));
        assert!(world.index.idle_scoped.is_empty(), "scale-set runners have no REST scope");
        assert_eq!(world.live_runner_named("a").map(|r| r.id), Some(a));

        world.remove(a, RemovalReason::Removed);
        assert!(world.index_agrees());
        assert!(!world.index.idle_in_scale_set.contains_key(&1), "an emptied scale set leaves the index");
        assert!(world.live_runner_named("a").is_none());
        let again = connect(&mut world, "a", 1);
        assert!(world.index_agrees());
        assert_eq!(world.live_runner_named("a").map(|r| r.id), Some(again));
    }

    #[test]
    fn every_state_change_keeps_the_index_equal_to_a_scan_and_names_what_it_touched() {
        let mut world = world();
        let (a, conn_a) = legacy_runner(&mut world, "a");
        let (b, conn_b) = legacy_runner(&mut world, "b");
        assert!(world.index_agrees());
        assert_eq!(world.index.idle_runners, BTreeSet::from([a, b]));
        assert_eq!(world.take_touched(), BTreeSet::from([Topic::Runner(a), Topic::Runner(b)]));

        let first = world.submit_job(JobSpec::simple(&["self-hosted"], 1_000));
        let second = world.submit_job(JobSpec::simple(&["self-hosted"], 1_000));
        let assigned = world.assign_next().expect("an idle runner takes the oldest job");
        assert_eq!(assigned.request_id, first);
        assert!(world.index_agrees());
        assert!(world.take_touched().is_superset(&BTreeSet::from([
            Topic::Runner(assigned.runner_id),
            Topic::Job(first),
            Topic::Job(second),
        ])));

        let (busy, busy_conn) = if assigned.runner_id == a { (a, conn_a) } else { (b, conn_b) };
        let idle = if busy == a { b } else { a };
        world.complete_from_runner(busy, busy_conn, JobResult::Succeeded).expect("its job completes");
        assert!(world.index_agrees());
        assert!(!world.index.open_jobs.contains(&first) && !world.index.live_runners.contains(&busy));

        world.assign_next().expect("the other runner takes the second job");
        let lost = world.process_exited(idle, if idle == a { conn_a } else { conn_b }, false);
        assert!(lost.is_some() && world.index.holding_runners.contains(&idle));
        world.expire_lost_runner(idle, second);
        let unmatched = world.submit_job(JobSpec::simple(&["gpu"], 1));
        world.finish_job(unmatched, JobResult::Failed, EndReason::Canceled);
        world.remove(idle, RemovalReason::Removed);
        assert!(world.index_agrees());
        assert!(world.index.open_jobs.is_empty() && world.index.live_runners.is_empty());
        assert_eq!(world.next_assignable(), None);
    }
}
