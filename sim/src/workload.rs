//! The workload: a seeded schedule of job arrivals (and some cancellations) to drive a
//! [`FakeGitHub`] with.
//!
//! Arrivals form a Poisson process (`arrivals_per_minute`); an arrival is a burst of several jobs at
//! once with `burst_probability`. Each job draws a duration, a planned result (failed with
//! `failure_probability`) and, with `cancel_probability`, a cancellation some delay after it is
//! queued. Arrivals stop at `horizon_ms` or after `max_jobs`. Every draw comes from
//! `Seed::rng(Component::Workload)`, so a seed and a config give one schedule, whatever else the run
//! does.

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::github::{CancelError, FakeGitHub, JobResult, JobSpec};
use crate::perturb::Perturbation;
use crate::seed::{Component, Seed};

/// Every parameter of a workload. Missing fields take the [`WorkloadConfig::standard`] values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Mean arrivals per simulated minute. Default 4.2.
    pub arrivals_per_minute: f64,
    /// Chance, in `[0, 1]`, that an arrival is a burst. Default 0.1.
    pub burst_probability: f64,
    /// Fewest jobs in a burst. Default 2.
    pub burst_size_min: u32,
    /// Most jobs in a burst. Default 4.
    pub burst_size_max: u32,
    /// Shortest job. Default 30 000 ms.
    pub duration_ms_min: u64,
    /// Longest job. Default 180 000 ms.
    pub duration_ms_max: u64,
    /// `runs-on` labels of every job. Default `["arc"]`.
    pub labels: Vec<String>,
    /// Chance a job's planned result is `failed`. Default 0.1.
    pub failure_probability: f64,
    /// Chance a job is canceled. Default 0.05.
    pub cancel_probability: f64,
    /// Shortest delay from queueing to cancellation. Default 5 000 ms.
    pub cancel_delay_ms_min: u64,
    /// Longest delay from queueing to cancellation. Default 120 000 ms.
    pub cancel_delay_ms_max: u64,
    /// Earliest arrival, sim ms after the workload starts. Default 0.
    pub start_ms: u64,
    /// No arrivals at or after this sim ms. Default 600 000 (10 min).
    pub horizon_ms: u64,
    /// Stop after this many jobs, if set. Default none.
    pub max_jobs: Option<u32>,
    /// Repository owner of every job. Default `arcsim`.
    pub owner: String,
    /// Repository of every job. Default `app`.
    pub repository: String,
    /// Jobs (by number, as `job-N` names them) left out of the drawn schedule, as a shrunk failure
    /// capsule drops them; every other job keeps its draws. Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skip_jobs: Vec<u32>,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            arrivals_per_minute: 4.2,
            burst_probability: 0.1,
            burst_size_min: 2,
            burst_size_max: 4,
            duration_ms_min: 30_000,
            duration_ms_max: 180_000,
            labels: vec!["arc".into()],
            failure_probability: 0.1,
            cancel_probability: 0.05,
            cancel_delay_ms_min: 5_000,
            cancel_delay_ms_max: 120_000,
            start_ms: 0,
            horizon_ms: 600_000,
            max_jobs: None,
            owner: "arcsim".into(),
            repository: "app".into(),
            skip_jobs: Vec::new(),
        }
    }
}

/// Why a workload config was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// A probability outside `[0, 1]`.
    #[error("workload: {field} = {value} is outside [0, 1]")]
    Probability {
        /// The field.
        field: &'static str,
        /// The value.
        value: f64,
    },
    /// A negative or non-finite rate.
    #[error("workload: arrivals_per_minute = {0} must be a finite number >= 0")]
    Rate(f64),
    /// A range whose minimum exceeds its maximum (or a burst of fewer than one job).
    #[error("workload: {0}")]
    Range(String),
    /// No labels: the job could never be matched.
    #[error("workload: labels must not be empty")]
    NoLabels,
}

impl WorkloadConfig {
    /// The standard workload: about 50 jobs over 10 simulated minutes (the defaults).
    pub fn standard() -> Self {
        Self::default()
    }

    /// Checks the parameters; the first problem found is returned.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        for (field, value) in [
            ("burst_probability", self.burst_probability),
            ("failure_probability", self.failure_probability),
            ("cancel_probability", self.cancel_probability),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(WorkloadError::Probability { field, value });
            }
        }
        if !self.arrivals_per_minute.is_finite() || self.arrivals_per_minute < 0.0 {
            return Err(WorkloadError::Rate(self.arrivals_per_minute));
        }
        let ranges = [
            ("burst_size", u64::from(self.burst_size_min), u64::from(self.burst_size_max)),
            ("duration_ms", self.duration_ms_min, self.duration_ms_max),
            ("cancel_delay_ms", self.cancel_delay_ms_min, self.cancel_delay_ms_max),
            ("start_ms/horizon_ms", self.start_ms, self.horizon_ms),
        ];
        if let Some((name, min, max)) = ranges.iter().find(|(_, min, max)| min > max) {
            return Err(WorkloadError::Range(format!("{name}: minimum {min} exceeds maximum {max}")));
        }
        if self.burst_size_min == 0 {
            return Err(WorkloadError::Range("burst_size_min must be at least 1".into()));
        }
        if self.labels.is_empty() {
            return Err(WorkloadError::NoLabels);
        }
        Ok(())
    }
}

/// One job of the schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledJob {
    /// When it is queued, in sim ms after the workload starts.
    pub at_ms: u64,
    /// What is submitted.
    pub spec: JobSpec,
    /// If set, it is canceled this long after it is queued.
    pub cancel_after_ms: Option<u64>,
}

/// A generated schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    jobs: Vec<ScheduledJob>,
}

impl Workload {
    /// Draws the schedule for `seed` and `config`.
    pub fn generate(seed: Seed, config: &WorkloadConfig) -> Result<Workload, WorkloadError> {
        config.validate()?;
        let mut rng = seed.rng(Component::Workload);
        let mut jobs = Vec::new();
        if config.arrivals_per_minute == 0.0 {
            return Ok(Workload { jobs });
        }
        let mean_gap_ms = 60_000.0 / config.arrivals_per_minute;
        let limit = config.max_jobs.map_or(usize::MAX, |n| n as usize);
        let mut clock_ms = config.start_ms as f64;
        while jobs.len() < limit {
            let u: f64 = rng.random();
            clock_ms += -(1.0 - u).ln() * mean_gap_ms;
            if clock_ms >= config.horizon_ms as f64 {
                break;
            }
            let burst = rng.random::<f64>() < config.burst_probability;
            let size =
                if burst { rng.random_range(config.burst_size_min..=config.burst_size_max) } else { 1 };
            for _ in 0..size.min(u32::try_from(limit - jobs.len()).unwrap_or(u32::MAX)) {
                let number = jobs.len() + 1;
                jobs.push(draw_job(&mut rng, config, clock_ms as u64, number));
            }
        }
        let mut number = 0u32;
        jobs.retain(|_| {
            number += 1;
            !config.skip_jobs.contains(&number)
        });
        Ok(Workload { jobs })
    }

    /// This schedule with the plan's extra jobs ([`Perturbation::ExtraJob`]) added in arrival order:
    /// each of `config`'s kind, named `extra-N`, succeeding and never canceled.
    pub fn with_extra_jobs(mut self, config: &WorkloadConfig, plan: &[Perturbation]) -> Workload {
        let extra = plan.iter().filter_map(|p| match p {
            Perturbation::ExtraJob { at_ms, duration_ms } => Some((*at_ms, *duration_ms)),
            _ => None,
        });
        for (number, (at_ms, duration_ms)) in extra.enumerate() {
            let spec = JobSpec {
                display_name: format!("extra-{}", number + 1),
                duration_ms,
                result: JobResult::Succeeded,
                ..job_spec(config, 0)
            };
            let at = self.jobs.partition_point(|j| j.at_ms <= at_ms);
            self.jobs.insert(at, ScheduledJob { at_ms, spec, cancel_after_ms: None });
        }
        self
    }

    /// The schedule, in arrival order.
    pub fn jobs(&self) -> &[ScheduledJob] {
        &self.jobs
    }

    /// Submits each job to `fake` at its time (relative to now) and cancels the ones marked for it.
    /// Returns the request ids, in schedule order. Must run inside the run's runtime.
    pub async fn run(&self, fake: &FakeGitHub) -> Vec<i64> {
        let start = tokio::time::Instant::now();
        let mut timeline: Vec<(u64, bool, usize)> = Vec::with_capacity(self.jobs.len() * 2);
        for (index, job) in self.jobs.iter().enumerate() {
            timeline.push((job.at_ms, false, index));
            if let Some(delay) = job.cancel_after_ms {
                timeline.push((job.at_ms + delay, true, index));
            }
        }
        timeline.sort_unstable();
        let mut ids = vec![0; self.jobs.len()];
        for (at_ms, cancel, index) in timeline {
            tokio::time::sleep_until(start + std::time::Duration::from_millis(at_ms)).await;
            if cancel {
                match fake.cancel_job(ids[index]) {
                    Ok(()) | Err(CancelError::AlreadyCompleted(_)) => {}
                    Err(CancelError::Unknown(id)) => {
                        unreachable!("job {id} was submitted earlier on this timeline")
                    }
                }
            } else {
                ids[index] = fake.submit_job(self.jobs[index].spec.clone());
            }
        }
        ids
    }
}

fn draw_job(
    rng: &mut rand_chacha::ChaCha8Rng,
    config: &WorkloadConfig,
    at_ms: u64,
    number: usize,
) -> ScheduledJob {
    let duration_ms = rng.random_range(config.duration_ms_min..=config.duration_ms_max);
    let failed = rng.random::<f64>() < config.failure_probability;
    let canceled = rng.random::<f64>() < config.cancel_probability;
    let cancel_after_ms =
        canceled.then(|| rng.random_range(config.cancel_delay_ms_min..=config.cancel_delay_ms_max));
    let spec = JobSpec {
        duration_ms,
        result: if failed { JobResult::Failed } else { JobResult::Succeeded },
        ..job_spec(config, number)
    };
    ScheduledJob { at_ms, spec, cancel_after_ms }
}

/// A succeeding job of `config`'s kind named `job-{number}` that takes no time.
fn job_spec(config: &WorkloadConfig, number: usize) -> JobSpec {
    JobSpec {
        labels: config.labels.clone(),
        owner: config.owner.clone(),
        repository: config.repository.clone(),
        workflow_ref: format!(
            "{}/{}/.github/workflows/ci.yml@refs/heads/main",
            config.owner, config.repository
        ),
        display_name: format!("job-{number}"),
        event_name: "push".into(),
        duration_ms: 0,
        result: JobResult::Succeeded,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::clock::SimClock;
    use crate::faults::FaultPlan;
    use crate::github::{EndReason, GitHubConfig};
    use crate::record::Recorder;
    use crate::trace::TraceMode;

    fn generate(seed: u64, config: &WorkloadConfig) -> Vec<ScheduledJob> {
        Workload::generate(Seed(seed), config).unwrap().jobs().to_vec()
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule_and_another_seed_another() {
        let config = WorkloadConfig::standard();
        assert_eq!(generate(7, &config), generate(7, &config));
        assert_ne!(generate(7, &config), generate(8, &config));
    }

    #[test]
    fn the_standard_workload_is_about_fifty_jobs_over_ten_minutes() {
        let counts: Vec<usize> =
            (0..40).map(|seed| generate(seed, &WorkloadConfig::standard()).len()).collect();
        let mean = counts.iter().sum::<usize>() as f64 / counts.len() as f64;
        assert!((42.0..=58.0).contains(&mean), "mean {mean} over {counts:?}");
        for seed in 0..40 {
            let jobs = generate(seed, &WorkloadConfig::standard());
            assert!(jobs.windows(2).all(|w| w[0].at_ms <= w[1].at_ms), "arrival order");
            assert!(jobs.iter().all(|j| j.at_ms < 600_000));
        }
    }

    #[test]
    fn every_drawn_value_stays_within_its_parameters() {
        let config = WorkloadConfig {
            duration_ms_min: 1_000,
            duration_ms_max: 2_000,
            cancel_probability: 0.5,
            cancel_delay_ms_min: 100,
            cancel_delay_ms_max: 200,
            start_ms: 60_000,
            horizon_ms: 120_000,
            labels: vec!["gpu".into(), "linux".into()],
            arrivals_per_minute: 60.0,
            ..WorkloadConfig::standard()
        };
        let jobs = generate(3, &config);
        assert!(jobs.len() > 20);
        for job in &jobs {
            assert!((60_000..120_000).contains(&job.at_ms), "{}", job.at_ms);
            assert!((1_000..=2_000).contains(&job.spec.duration_ms));
            assert_eq!(job.spec.labels, ["gpu", "linux"]);
            assert!(job.cancel_after_ms.is_none_or(|d| (100..=200).contains(&d)));
        }
        assert!(
            jobs.iter().any(|j| j.cancel_after_ms.is_some())
                && jobs.iter().any(|j| j.cancel_after_ms.is_none())
        );
    }

    #[test]
    fn probabilities_of_zero_and_one_are_exact_and_max_jobs_caps_the_count() {
        let always = WorkloadConfig {
            failure_probability: 1.0,
            cancel_probability: 0.0,
            max_jobs: Some(7),
            ..WorkloadConfig::standard()
        };
        let jobs = generate(1, &always);
        assert_eq!(jobs.len(), 7);
        assert!(jobs.iter().all(|j| j.spec.result == JobResult::Failed && j.cancel_after_ms.is_none()));
        let none = WorkloadConfig { arrivals_per_minute: 0.0, ..WorkloadConfig::standard() };
        assert!(generate(1, &none).is_empty());
    }

    #[test]
    fn bursts_queue_several_jobs_at_one_instant() {
        let config = WorkloadConfig {
            burst_probability: 1.0,
            burst_size_min: 3,
            burst_size_max: 3,
            ..WorkloadConfig::standard()
        };
        let jobs = generate(5, &config);
        assert_eq!(jobs.len() % 3, 0);
        assert!(jobs.chunks(3).all(|c| c.iter().all(|j| j.at_ms == c[0].at_ms)));
    }

    #[test]
    fn bad_parameters_are_rejected_with_the_field_named() {
        let bad = [
            (WorkloadConfig { cancel_probability: 1.5, ..WorkloadConfig::standard() }, "cancel_probability"),
            (
                WorkloadConfig { arrivals_per_minute: f64::NAN, ..WorkloadConfig::standard() },
                "arrivals_per_minute",
            ),
            (
                WorkloadConfig { duration_ms_min: 9, duration_ms_max: 1, ..WorkloadConfig::standard() },
                "duration_ms",
            ),
            (
                WorkloadConfig { burst_size_min: 0, burst_size_max: 0, ..WorkloadConfig::standard() },
                "burst_size_min",
            ),
            (WorkloadConfig { labels: vec![], ..WorkloadConfig::standard() }, "labels"),
        ];
        for (config, field) in bad {
            let err = Workload::generate(Seed(1), &config).unwrap_err().to_string();
            assert!(err.contains(field), "{field}: {err}");
        }
        let parsed: WorkloadConfig = serde_json::from_str(r#"{"max_jobs": 3}"#).unwrap();
        assert_eq!((parsed.max_jobs, parsed.horizon_ms), (Some(3), 600_000));
    }

    #[test]
    fn skipped_jobs_leave_the_others_as_drawn() {
        let all = generate(5, &WorkloadConfig::standard());
        let skipping = WorkloadConfig { skip_jobs: vec![1, 3], ..WorkloadConfig::standard() };
        let kept = generate(5, &skipping);
        let expected: Vec<ScheduledJob> =
            all.iter().enumerate().filter(|(i, _)| *i != 0 && *i != 2).map(|(_, j)| j.clone()).collect();
        assert_eq!(kept, expected);
        assert!(!serde_json::to_string(&WorkloadConfig::standard()).unwrap().contains("skip_jobs"));
    }

    #[test]
    fn extra_jobs_join_the_schedule_in_arrival_order_and_leave_the_drawn_ones_alone() {
        let config = WorkloadConfig::standard();
        let drawn = generate(5, &config);
        let plan = [
            Perturbation::ExtraJob { at_ms: 700_000, duration_ms: 60_000 },
            Perturbation::HeldRequest { operation: "get-message".into(), nth: 1, hold_ms: 1 },
            Perturbation::ExtraJob { at_ms: drawn[1].at_ms, duration_ms: 1_000 },
        ];
        let jobs =
            Workload::generate(Seed(5), &config).unwrap().with_extra_jobs(&config, &plan).jobs().to_vec();
        assert_eq!(jobs.len(), drawn.len() + 2);
        assert_eq!(jobs[2].spec.display_name, "extra-2", "after the drawn job of the same time");
        assert_eq!(
            (jobs[2].at_ms, jobs[2].spec.duration_ms, jobs[2].cancel_after_ms),
            (drawn[1].at_ms, 1_000, None)
        );
        let last = jobs.last().unwrap();
        assert_eq!((last.spec.display_name.as_str(), last.at_ms), ("extra-1", 700_000));
        assert_eq!(
            (last.spec.labels.clone(), last.spec.result),
            (config.labels.clone(), JobResult::Succeeded)
        );
        let kept: Vec<ScheduledJob> =
            jobs.into_iter().filter(|j| j.spec.display_name.starts_with("job-")).collect();
        assert_eq!(kept, drawn);
    }

    #[tokio::test(start_paused = true)]
    async fn running_a_workload_submits_each_job_at_its_time_and_cancels_the_marked_ones() {
        let clock = SimClock::start();
        let trace = Recorder::new(clock, TraceMode::HashOnly);
        let fake =
            FakeGitHub::new(Seed(1), clock, trace, GitHubConfig::default(), &FaultPlan::none()).unwrap();
        let config =
            WorkloadConfig { cancel_probability: 0.3, max_jobs: Some(20), ..WorkloadConfig::standard() };
        let workload = Workload::generate(Seed(11), &config).unwrap();
        let ids = workload.run(&fake).await;
        tokio::time::sleep(Duration::from_secs(200)).await;
        assert_eq!(ids.len(), 20);
        for (scheduled, id) in workload.jobs().iter().zip(&ids) {
            let job = fake.job(*id).unwrap();
            assert_eq!(job.queued_ms, scheduled.at_ms);
            match scheduled.cancel_after_ms {
                Some(delay) => {
                    assert_eq!(job.end_reason(), Some(EndReason::Canceled));
                    assert_eq!(job.finished_ms, Some(scheduled.at_ms + delay));
                }
                None => assert_eq!(job.end_reason(), None, "no runner exists, so it waits"),
            }
        }
        assert!(workload.jobs().iter().any(|j| j.cancel_after_ms.is_some()));
    }
}
