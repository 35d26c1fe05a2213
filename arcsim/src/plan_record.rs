//! What a sweep's JSON records of its plan: the profile, the scenarios, variants and seeds, the switches that change
//! what runs, the network backend, the schedule, and the shard. `arcsim merge` rebuilds the plan from it, checks that its files are the
//! shards of one sweep, and knows from it which seeds each cell must hold. Worker threads are left out:
//! they change no result.

use arc_controller::Profile;
use arc_scenarios::kill_table::JudgedUnder;
use arc_sim::Seed;
use arc_sim::github::Assumed;
use arc_sim::net::Network;
use arc_sim::schedule::Schedule;
use serde::{Deserialize, Serialize};

use crate::shard::Shard;
use crate::sweep_plan::SweepPlan;
use arc_scenarios::scenarios;
use arc_scenarios::variant::Variant;

/// A sweep's plan, as its JSON records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRecord {
    /// The profile every variant is a variant of.
    pub profile: Profile,
    /// Scenario names, in plan order.
    pub scenarios: Vec<String>,
    /// Variants, in plan order.
    pub variants: Vec<Variant>,
    /// The seeds, as runs of consecutive ones.
    pub seeds: Vec<SeedSpan>,
    /// The fixed controller ran only the first this many seeds (a preset: bug variants ran up to
    /// their bounds); absent: every seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_seeds: Option<u64>,
    /// Each seed ran twice.
    pub check_determinism: bool,
    /// Bug variants ran every seed.
    pub exhaustive: bool,
    /// Every variant ran in every scenario.
    pub matrix: bool,
    /// The share of the seeds this file holds.
    pub shard: Shard,
    /// Every scenario ran at this many runners (`--runners`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runners: Option<u32>,
    /// The network every run used (`--network`); files written before it was recorded ran in process.
    #[serde(default, skip_serializing_if = "Network::is_in_process")]
    pub network: Network,
    /// The schedule every run used (`--schedule`); files written before it was recorded ran `fifo`.
    #[serde(default, skip_serializing_if = "Schedule::is_fifo")]
    pub schedule: Schedule,
    /// The alternatives every run assumed about GitHub (`--assume`); files written before they were
    /// recorded assumed the defaults.
    #[serde(default, skip_serializing_if = "Assumed::is_default")]
    pub assumed: Assumed,
    /// Each run drew its alternatives from its seed instead (`--assumptions drawn`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub draws_assumptions: bool,
}

/// `count` consecutive seeds from `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedSpan {
    /// The first seed.
    pub from: Seed,
    /// How many.
    pub count: u64,
}

impl PlanRecord {
    /// The alternatives kill rows are judged under: the plan's, or none when each seed drew its own.
    pub fn row_assumptions(&self) -> Option<&Assumed> {
        (!self.draws_assumptions).then_some(&self.assumed)
    }

    /// Where kill rows are judged: under [`Self::row_assumptions`], on the network every run used.
    pub fn judged_under(&self) -> JudgedUnder<'_> {
        JudgedUnder { assumed: self.row_assumptions(), network: self.network }
    }

    /// The alternatives the run of `seed` assumed.
    pub fn assumed_for(&self, seed: Seed) -> Assumed {
        if self.draws_assumptions { Assumed::drawn(seed) } else { self.assumed.clone() }
    }

    /// The record of `plan`.
    pub fn of(plan: &SweepPlan<'_>) -> PlanRecord {
        PlanRecord {
            profile: plan.profile,
            scenarios: plan.scenarios.iter().map(|s| s.name().to_string()).collect(),
            variants: plan.variants.clone(),
            seeds: spans(&plan.seeds),
            fixed_seeds: plan.fixed_seeds,
            check_determinism: plan.check_determinism,
            exhaustive: plan.exhaustive,
            matrix: plan.matrix,
            shard: plan.shard,
            runners: plan.runners,
            network: plan.network,
            schedule: plan.schedule,
            assumed: plan.assumed.clone(),
            draws_assumptions: plan.draws_assumptions,
        }
    }

    /// The plan this records, run on `jobs` threads, or the unknown scenario's name.
    pub fn plan(&self, jobs: usize) -> Result<SweepPlan<'static>, String> {
        let scenarios = self.scenarios.iter().map(|name| scenarios::find(name)).collect::<Result<_, _>>()?;
        let seeds = self
            .seeds
            .iter()
            .flat_map(|span| (0..span.count).map(move |i| Seed(span.from.0.wrapping_add(i))))
            .collect();
        Ok(SweepPlan {
            profile: self.profile,
            scenarios,
            variants: self.variants.clone(),
            seeds,
            fixed_seeds: self.fixed_seeds,
            jobs,
            check_determinism: self.check_determinism,
            exhaustive: self.exhaustive,
            matrix: self.matrix,
            shard: self.shard,
            runners: self.runners,
            network: self.network,
            schedule: self.schedule,
            assumed: self.assumed.clone(),
            draws_assumptions: self.draws_assumptions,
            until_probes: None,
        })
    }
}

/// `seeds` as runs of consecutive seeds.
fn spans(seeds: &[Seed]) -> Vec<SeedSpan> {
    let mut out: Vec<SeedSpan> = Vec::new();
    for seed in seeds {
        match out.last_mut() {
            Some(span) if span.from.0.wrapping_add(span.count) == seed.0 => span.count += 1,
            _ => out.push(SeedSpan { from: *seed, count: 1 }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed controller of the default profile in `scenario`, on `seeds`, over `network`.
    fn fixed_plan(scenario: &str, seeds: Vec<Seed>, network: Network) -> SweepPlan<'static> {
        SweepPlan {
            profile: Profile::Arcsim,
            scenarios: vec![scenarios::find(scenario).unwrap()],
            variants: vec![Variant::Fixed],
            seeds,
            fixed_seeds: None,
            jobs: 1,
            check_determinism: false,
            exhaustive: false,
            matrix: false,
            shard: Shard::WHOLE,
            runners: None,
            network,
            schedule: Schedule::Fifo,
            assumed: arc_sim::github::Assumed::defaults(),
            draws_assumptions: false,
            until_probes: None,
        }
    }

    #[test]
    fn seeds_are_recorded_as_runs_and_read_back_in_order() {
        let seeds: Vec<Seed> = [5, 6, 7, 3, u64::MAX, 0, 1].into_iter().map(Seed).collect();
        let span = |from, count| SeedSpan { from: Seed(from), count };
        assert_eq!(spans(&seeds), vec![span(5, 3), span(3, 1), span(u64::MAX, 3)]);
        let plan = fixed_plan("standard", seeds.clone(), Network::InProcess);
        let back = PlanRecord::of(&plan).plan(1).unwrap();
        assert_eq!(back.seeds, seeds);
        assert_eq!(PlanRecord::of(&back), PlanRecord::of(&plan));
        let mut unknown = PlanRecord::of(&plan);
        unknown.scenarios = vec!["nowhere".into()];
        assert!(unknown.plan(1).err().unwrap().contains("unknown scenario"));
    }

    #[test]
    fn the_network_is_recorded_and_read_back_and_old_files_ran_in_process() {
        let plan = fixed_plan("network-partition", vec![Seed(1)], Network::Turmoil);
        let record = PlanRecord::of(&plan);
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["network"], "turmoil");
        let back: PlanRecord = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back.plan(1).unwrap().network, Network::Turmoil);
        let mut old = json;
        old.as_object_mut().unwrap().remove("network");
        let old: PlanRecord = serde_json::from_value(old).unwrap();
        assert_eq!(old.network, Network::InProcess);
        let in_process = PlanRecord { network: Network::InProcess, ..record };
        assert!(serde_json::to_value(&in_process).unwrap().get("network").is_none());
    }

    #[test]
    fn the_schedule_is_recorded_and_read_back_and_old_files_ran_fifo() {
        let plan = SweepPlan {
            schedule: Schedule::Pct { depth: 3 },
            assumed: arc_sim::github::Assumed::defaults(),
            draws_assumptions: false,
            ..fixed_plan("standard", vec![Seed(1)], Network::InProcess)
        };
        let record = PlanRecord::of(&plan);
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["schedule"], "pct:3");
        let back: PlanRecord = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back.plan(1).unwrap().schedule, Schedule::Pct { depth: 3 });
        let mut old = json;
        old.as_object_mut().unwrap().remove("schedule");
        let old: PlanRecord = serde_json::from_value(old).unwrap();
        assert_eq!(old.schedule, Schedule::Fifo);
        let fifo = PlanRecord { schedule: Schedule::Fifo, ..record };
        assert!(serde_json::to_value(&fifo).unwrap().get("schedule").is_none());
    }
}
