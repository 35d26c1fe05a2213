//! A capsule's plan as a list of steps the shrinker can remove one by one: each API, GitHub and
//! network fault rule, each perturbation, each disruption, each per-resource watch lag and watch-cache lag (removing a
//! lag leaves that resource at the default lag). And its workload as the list of the jobs it keeps.
//! Rebuilding a capsule from a subset keeps the steps' order, so the first fault rule that matches
//! still wins as it did.

use std::fmt;

use arc_sim::apiserver::LagRange;
use arc_sim::faults::{ApiFault, GitHubFault};
use arc_sim::net::NetFault;
use arc_sim::perturb::Perturbation;
use arc_sim::workload::Workload;
use arc_world::Disruption;

use crate::capsule::Capsule;

/// One removable piece of a capsule's plan.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A fault rule of the API server.
    Api(ApiFault),
    /// A fault rule of the fake GitHub.
    GitHub(GitHubFault),
    /// A network fault (turmoil only).
    Network(NetFault),
    /// A perturbation at a read or write point.
    Perturbation(Perturbation),
    /// A disruption.
    Disruption(Disruption),
    /// A watch lag of one resource.
    WatchLag(String, LagRange),
    /// A watch-cache lag of one resource.
    CacheLag(String, LagRange),
}

impl fmt::Display for Step {
    /// One line: `api error 500 p=0.03`, `disruption restart-controller at 41000ms`, `watch lag pods 1000..3000ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Api(rule) => write!(f, "api fault {}", json(rule)),
            Step::GitHub(rule) => write!(f, "github fault {}", json(rule)),
            Step::Network(fault) => write!(f, "network fault {}", json(fault)),
            Step::Perturbation(p) => write!(f, "perturbation {}", json(p)),
            Step::Disruption(d) => write!(f, "disruption {}", json(d)),
            Step::WatchLag(plural, lag) => write!(f, "watch lag {plural} {}..{}ms", lag.min_ms, lag.max_ms),
            Step::CacheLag(plural, lag) => {
                write!(f, "watch-cache lag {plural} {}..{}ms", lag.min_ms, lag.max_ms)
            }
        }
    }
}

/// One line of JSON.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The capsule's plan as steps, in order: API rules, GitHub rules, network faults, perturbations,
/// disruptions, watch lags, watch-cache lags.
pub fn steps_of(capsule: &Capsule) -> Vec<Step> {
    let plan = &capsule.plan;
    let faults = &plan.faults;
    let api = faults.api.iter().cloned().map(Step::Api);
    let github = faults.github.iter().cloned().map(Step::GitHub);
    let network = faults.network.iter().cloned().map(Step::Network);
    let perturbations = faults.perturbations.iter().cloned().map(Step::Perturbation);
    let disruptions = plan.disruptions.iter().cloned().map(Step::Disruption);
    let lags = plan.watch_lag.per_resource.iter().map(|(p, l)| Step::WatchLag(p.clone(), *l));
    let cache_lags = plan.watch_cache_lag.per_resource.iter().map(|(p, l)| Step::CacheLag(p.clone(), *l));
    api.chain(github)
        .chain(network)
        .chain(perturbations)
        .chain(disruptions)
        .chain(lags)
        .chain(cache_lags)
        .collect()
}

/// `capsule` with exactly `steps` for its plan.
pub fn with_steps(capsule: &Capsule, steps: &[Step]) -> Capsule {
    let mut out = capsule.clone();
    let plan = &mut out.plan;
    plan.faults.api.clear();
    plan.faults.github.clear();
    plan.faults.network.clear();
    plan.faults.perturbations.clear();
    plan.disruptions.clear();
    plan.watch_lag.per_resource.clear();
    plan.watch_cache_lag.per_resource.clear();
    for step in steps.iter().cloned() {
        match step {
            Step::Api(rule) => plan.faults.api.push(rule),
            Step::GitHub(rule) => plan.faults.github.push(rule),
            Step::Network(fault) => plan.faults.network.push(fault),
            Step::Perturbation(p) => plan.faults.perturbations.push(p),
            Step::Disruption(d) => plan.disruptions.push(d),
            Step::WatchLag(plural, lag) => _ = plan.watch_lag.per_resource.insert(plural, lag),
            Step::CacheLag(plural, lag) => _ = plan.watch_cache_lag.per_resource.insert(plural, lag),
        }
    }
    out
}

/// The numbers (`job-N`) of the jobs the capsule's workload keeps.
pub fn jobs_of(capsule: &Capsule) -> Vec<u32> {
    jobs_arriving(capsule).into_iter().map(|(number, _)| number).collect()
}

/// The jobs the capsule's workload keeps, each with its time in the schedule (the sim ms it arrives
/// at, at the earliest).
pub fn jobs_arriving(capsule: &Capsule) -> Vec<(u32, u64)> {
    let drawn = arc_sim::workload::WorkloadConfig { skip_jobs: Vec::new(), ..capsule.workload.clone() };
    let Ok(schedule) = Workload::generate(capsule.seed, &drawn) else { return Vec::new() };
    let numbered = schedule.jobs().iter().zip(1..).map(|(job, number)| (number, job.at_ms));
    numbered.filter(|(number, _)| !capsule.workload.skip_jobs.contains(number)).collect()
}

/// `capsule` keeping exactly the jobs numbered `kept` of those its workload draws.
pub fn with_jobs(capsule: &Capsule, kept: &[u32]) -> Capsule {
    let mut out = capsule.clone();
    out.workload.skip_jobs = Vec::new();
    let all = jobs_of(&out);
    out.workload.skip_jobs = all.into_iter().filter(|n| !kept.contains(n)).collect();
    out
}

#[cfg(test)]
mod tests {
    use arc_sim::Seed;
    use arc_sim::net::Network;

    use super::*;
    use arc_scenarios::scenarios;
    use arc_scenarios::variant::{Build, Variant};

    fn steady_state(seed: u64) -> Capsule {
        let scenario = scenarios::find("steady-state").unwrap();
        let build = Build::arcsim(Variant::Fixed);
        Capsule::of_run(scenario, build, Seed(seed), Network::InProcess, "bounded-pod-creates")
    }

    #[test]
    fn every_step_and_job_round_trips_and_subsets_keep_order() {
        let capsule = steady_state(4);
        let steps = steps_of(&capsule);
        assert!(steps.len() > 5, "{steps:?}");
        assert_eq!(with_steps(&capsule, &steps), capsule);
        let odd: Vec<Step> = steps.iter().step_by(2).cloned().collect();
        assert_eq!(steps_of(&with_steps(&capsule, &odd)), odd);
        let jobs = jobs_of(&capsule);
        assert!(jobs.len() > 20 && jobs[0] == 1, "{jobs:?}");
        let few = [2, 5, 9];
        let fewer = with_jobs(&capsule, &few);
        assert_eq!(jobs_of(&fewer), few);
        let arriving = jobs_arriving(&fewer);
        let numbers: Vec<u32> = arriving.iter().map(|(n, _)| *n).collect();
        assert_eq!(numbers, few);
        assert!(arriving.windows(2).all(|w| w[0].1 <= w[1].1), "in schedule order: {arriving:?}");
        let all = jobs_arriving(&capsule);
        assert!(arriving.iter().all(|job| all.contains(job)), "a skipped job moves no other job's time");
        assert_eq!(with_jobs(&fewer, &jobs), capsule);
    }
}
