//! [`StatisticsLedger`]: each scale set's statistics kept as running counts, so the statistics every
//! message, session and scale-set answer carries cost O(1) instead of a pass over the open jobs and
//! live runners (at 1,000 runners that pass was 14% of a seed's CPU).
//!
//! A job or runner adds its *share* to the scale sets it counts for: a queued job one available job
//! to each scale set it was offered to; an acquired job one assigned (and one acquired or running) to
//! the scale set that acquired it; a completed job nothing; a live runner one registered (and one busy
//! or idle) to its scale set; a removed runner nothing. Every change to a field a share reads goes
//! through [`World::edit_job`] or [`World::edit_runner`], which take the old share out and put the new
//! one in; new jobs and runners are filed by [`World::ledger_new_job`] and [`World::ledger_new_runner`].
//! In debug builds [`World::statistics`] checks the ledger against [`World::statistics_by_scan`].

use std::collections::BTreeMap;

use super::super::model::{Job, JobState, Runner, RunnerState};
use super::super::wire::Statistics;
use super::World;

/// Every scale set's statistics, as running counts.
#[derive(Debug, Default)]
pub(crate) struct StatisticsLedger {
    by_scale_set: BTreeMap<i64, Statistics>,
}

impl StatisticsLedger {
    /// Scale set `id`'s statistics (zeros for a scale set nothing counts for).
    pub(crate) fn of(&self, id: i64) -> Statistics {
        self.by_scale_set.get(&id).copied().unwrap_or_default()
    }

    /// Adds (`sign` 1) or takes out (`sign` −1) the shares in `shares`.
    fn apply(&mut self, shares: impl IntoIterator<Item = (i64, Statistics)>, sign: i64) {
        for (id, share) in shares {
            let total = self.by_scale_set.entry(id).or_default();
            total.total_available_jobs += sign * share.total_available_jobs;
            total.total_acquired_jobs += sign * share.total_acquired_jobs;
            total.total_assigned_jobs += sign * share.total_assigned_jobs;
            total.total_running_jobs += sign * share.total_running_jobs;
            total.total_registered_runners += sign * share.total_registered_runners;
            total.total_busy_runners += sign * share.total_busy_runners;
            total.total_idle_runners += sign * share.total_idle_runners;
        }
    }
}

/// What job `job` adds to each scale set's statistics.
fn job_shares(job: &Job) -> Vec<(i64, Statistics)> {
    if job.is_completed() {
        return Vec::new();
    }
    let mut shares = Vec::new();
    if job.state == JobState::Queued {
        let available = Statistics { total_available_jobs: 1, ..Statistics::default() };
        shares.extend(job.offered_to.iter().map(|&id| (id, available)));
    }
    if let Some(id) = job.acquired_by {
        shares.push((
            id,
            Statistics {
                total_assigned_jobs: 1,
                total_acquired_jobs: i64::from(job.state == JobState::Acquired),
                total_running_jobs: i64::from(job.state == JobState::Running),
                ..Statistics::default()
            },
        ));
    }
    shares
}

/// What runner `runner` adds to its scale set's statistics.
fn runner_share(runner: &Runner) -> Option<(i64, Statistics)> {
    let id = runner.scale_set_id.filter(|_| !runner.is_removed())?;
    Some((
        id,
        Statistics {
            total_registered_runners: 1,
            total_busy_runners: i64::from(runner.job().is_some()),
            total_idle_runners: i64::from(runner.state == RunnerState::Idle),
            ..Statistics::default()
        },
    ))
}

/// Changes `entries[id]` through `edit`, taking its old `shares` out of `ledger` and putting the new in.
fn edit_keeping<T, S: IntoIterator<Item = (i64, Statistics)>, R>(
    entries: &mut BTreeMap<i64, T>,
    ledger: &mut StatisticsLedger,
    id: i64,
    shares: fn(&T) -> S,
    edit: impl FnOnce(&mut T) -> R,
) -> R {
    let entry = entries.get_mut(&id).expect("only known jobs and runners change");
    ledger.apply(shares(entry), -1);
    let answer = edit(entry);
    ledger.apply(shares(entry), 1);
    answer
}

impl World {
    /// Changes job `request_id` through `edit`, keeping the ledger.
    pub(crate) fn edit_job<R>(&mut self, request_id: i64, edit: impl FnOnce(&mut Job) -> R) -> R {
        edit_keeping(&mut self.jobs, &mut self.ledger, request_id, job_shares, edit)
    }

    /// Changes runner `id` through `edit`, keeping the ledger.
    pub(crate) fn edit_runner<R>(&mut self, id: i64, edit: impl FnOnce(&mut Runner) -> R) -> R {
        edit_keeping(&mut self.runners, &mut self.ledger, id, runner_share, edit)
    }

    /// Files the share of job `request_id`, just inserted into `jobs`.
    pub(crate) fn ledger_new_job(&mut self, request_id: i64) {
        self.ledger.apply(job_shares(&self.jobs[&request_id]), 1);
    }

    /// Files the share of runner `id`, just inserted into `runners`.
    pub(crate) fn ledger_new_runner(&mut self, id: i64) {
        self.ledger.apply(runner_share(&self.runners[&id]), 1);
    }

    /// The statistics of scale set `id` now (§4.1 field names; zeros for an unknown id).
    pub(crate) fn statistics(&self, id: i64) -> Statistics {
        let kept = self.ledger.of(id);
        debug_assert_eq!(kept, self.statistics_by_scan(id), "the ledger matches a scan");
        kept
    }

    /// The statistics of scale set `id` counted over every open job and live runner, written out
    /// field by field apart from the shares (the ledger's reference, for debug assertions and tests).
    pub(crate) fn statistics_by_scan(&self, id: i64) -> Statistics {
        debug_assert!(self.index_agrees(), "the state index matches a scan");
        let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        let jobs = || self.index.open_jobs.iter().map(|request_id| &self.jobs[request_id]);
        let acquired = || jobs().filter(|j| j.acquired_by == Some(id));
        let live = || self.index.live_runners.iter().map(|runner_id| &self.runners[runner_id]);
        let runners = || live().filter(|r| r.scale_set_id == Some(id));
        Statistics {
            total_available_jobs: count(
                jobs().filter(|j| j.state == JobState::Queued && j.offered_to.contains(&id)).count(),
            ),
            total_acquired_jobs: count(acquired().filter(|j| j.state == JobState::Acquired).count()),
            total_assigned_jobs: count(acquired().count()),
            total_running_jobs: count(acquired().filter(|j| j.state == JobState::Running).count()),
            total_registered_runners: count(runners().count()),
            total_busy_runners: count(runners().filter(|r| r.job().is_some()).count()),
            total_idle_runners: count(runners().filter(|r| r.state == RunnerState::Idle).count()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::model::{EndReason, JobResult, JobSpec};
    use crate::github::wire::{Label, RunnerSetting};

    fn scale_set(world: &mut World, name: &str) -> i64 {
        world.create_scale_set(name, 1, vec![Label::system("self-hosted")], RunnerSetting::default())
    }

    fn agrees(world: &World, ids: &[i64]) -> bool {
        ids.iter().all(|&id| world.statistics(id) == world.statistics_by_scan(id))
    }

    #[test]
    fn offers_acquisitions_assignments_completions_and_a_deleted_scale_set_keep_the_ledger_equal_to_a_scan() {
        let mut world = World::for_tests();
        let (a, b) = (scale_set(&mut world, "a"), scale_set(&mut world, "b"));
        let first = world.submit_job(JobSpec::simple(&["self-hosted"], 1_000));
        let second = world.submit_job(JobSpec::simple(&["self-hosted"], 1_000));
        assert_eq!(world.statistics(b).total_available_jobs, 2, "both jobs are offered to both sets");
        assert!(agrees(&world, &[a, b]));

        assert_eq!(world.acquire_jobs(a, &[first, second]), vec![first, second]);
        let acquired = world.statistics(a);
        assert_eq!((acquired.total_available_jobs, acquired.total_acquired_jobs), (0, 2));
        assert_eq!(world.statistics(b).total_available_jobs, 0, "an acquired job is nobody's to take");

        let registered = world.register_runner("a-1", Some(a), None, vec!["self-hosted".into()], true);
        let (runner, connection) = world.connect(&registered.config).expect("a fresh runner connects");
        assert_eq!(world.statistics(a).total_idle_runners, 1);
        world.assign_next().expect("the idle runner takes the oldest job");
        let busy = world.statistics(a);
        assert_eq!((busy.total_running_jobs, busy.total_busy_runners, busy.total_idle_runners), (1, 1, 0));
        assert!(agrees(&world, &[a, b]));

        world.complete_from_runner(runner, connection, JobResult::Succeeded).expect("its job completes");
        let done = world.statistics(a);
        assert_eq!((done.total_assigned_jobs, done.total_registered_runners), (1, 0));
        world.delete_scale_set(a);
        assert_eq!(world.statistics(a), Statistics::default());
        assert_eq!(world.statistics(b).total_available_jobs, 1, "the stranded job is offered again");
        world.finish_job(second, JobResult::Canceled, EndReason::Canceled);
        assert_eq!(world.statistics(b), Statistics::default());
        assert!(agrees(&world, &[a, b]));
    }
}
