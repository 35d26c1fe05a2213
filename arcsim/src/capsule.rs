//! A failure capsule: everything one failing run depends on, as JSON data — the scenario, profile,
//! variant, seed, network, schedule, assumptions and size, the world's fault plan, disruptions and watch lags, its workload, its
//! length — and the oracle it is expected to fail. `arcsim run --capsule FILE` replays it: the
//! scenario's world for the seed with the capsule's data put in place of the scenario's own, so a
//! capsule taken from a seed's run (and not shrunk since) replays that run's exact trace. The
//! scenario still supplies what is code rather than data: the controller's families and the settle
//! condition.

use std::path::Path;

use arc_controller::Profile;
use arc_sim::apiserver::WatchLag;
use arc_sim::faults::FaultPlan;
use arc_sim::github::Assumed;
use arc_sim::kubelet::KubeletConfig;
use arc_sim::net::Network;
use arc_sim::record::Interest;
use arc_sim::schedule::Schedule;
use arc_sim::workload::WorkloadConfig;
use arc_sim::{Seed, TraceMode};
use arc_world::{Disruption, RunRecord, WorldConfig};
use serde::{Deserialize, Serialize};

use crate::runner::{RunError, run_build_keeping};
use arc_judging::oracles::Oracle;
use arc_judging::probes::ProbeGoal;
use arc_scenarios::on_network::OnNetwork;
use arc_scenarios::scaled::{ScaleError, Scaled};
use arc_scenarios::scenario::{Scenario, Twin, WorldPlan};
use arc_scenarios::scenarios;
use arc_scenarios::variant::{Build, Variant};
use arc_scenarios::verdict::Verdict;

/// One failing run, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capsule {
    /// The scenario whose controller, oracles and settle condition the run uses.
    pub scenario: String,
    /// The profile the variant is a variant of.
    pub profile: Profile,
    /// The controller variant, by its command-line name (`bug-4201`).
    #[serde(with = "variant_name")]
    pub variant: Variant,
    /// The seed: every die of the run not fixed by the data below.
    pub seed: Seed,
    /// The network the clients reach the fakes over.
    #[serde(default)]
    pub network: Network,
    /// The order the sim's tasks take same-instant work in; absent: `fifo`.
    #[serde(default, skip_serializing_if = "Schedule::is_fifo")]
    pub schedule: Schedule,
    /// The alternatives assumed about GitHub (`--assume`); absent: the defaults.
    #[serde(default, skip_serializing_if = "Assumed::is_default")]
    pub assumed: Assumed,
    /// The size the run had (`--runners N`), if not the scenario's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runners: Option<u32>,
    /// The faults, disruptions and watch lags.
    pub plan: CapsulePlan,
    /// The job arrivals (drawn from the seed, less `skip_jobs`).
    pub workload: WorkloadConfig,
    /// The run stops at this simulated millisecond whatever happens (the world's horizon).
    pub duration_ms: u64,
    /// The oracle the run fails.
    pub expected_oracle: String,
}

/// What a capsule's world injects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapsulePlan {
    /// The fault rules of the API server, GitHub and the network.
    pub faults: FaultPlan,
    /// The disruptions, at their simulated times.
    #[serde(default)]
    pub disruptions: Vec<Disruption>,
    /// Watch delivery lag, per resource.
    pub watch_lag: WatchLag,
    /// Watch-cache lag, per resource.
    pub watch_cache_lag: WatchLag,
    /// The node the capsule was cut from (slow starts, room, node loss, init containers, runners'
    /// sessions over HTTP), so that a window the swarm draws later does not change its world. Absent in
    /// capsules written before 2026-12-06: the scenario's own node for the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet: Option<KubeletConfig>,
    /// The objects the world starts with (the runner template among them), so that a template the
    /// swarm changes later (a sidecar) does not change its world. Absent in capsules written before
    /// 2026-12-06's sidecars: the scenario's own objects for the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<Vec<serde_json::Value>>,
    /// Whether the controller's clients were limited as ARC's binaries limit them. Absent (`false`) in
    /// capsules written before 2026-12-07, when no world limited them: they replay unlimited, as cut.
    #[serde(default, skip_serializing_if = "is_off")]
    pub client_rate_limits: bool,
}

fn is_off(b: &bool) -> bool {
    !*b
}

/// Why a capsule cannot be read or run.
#[derive(Debug, thiserror::Error)]
pub enum CapsuleError {
    /// The file cannot be read or written.
    #[error("cannot {action} capsule {path}: {source}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not JSON for a capsule.
    #[error("capsule is not valid JSON for a capsule: {0}")]
    Syntax(String),
    /// A field with a value no run can have (an unknown scenario or oracle, a bad fault rule).
    #[error("capsule: {0}")]
    Invalid(String),
    /// The run could not be carried out.
    #[error(transparent)]
    Run(#[from] RunError),
}

impl Capsule {
    /// The capsule of `build`'s run of `scenario` at `seed` on `network` (under `fifo`: set
    /// [`Capsule::schedule`] for another order), expecting `oracle` to fail.
    pub fn of_run(
        scenario: &'static dyn Scenario,
        build: Build,
        seed: Seed,
        network: Network,
        oracle: &str,
    ) -> Capsule {
        let world = OnNetwork::new(scenario, network).world_for(seed, build).config;
        Capsule::of_world(scenario.name(), world, build, seed, network, oracle)
    }

    /// The capsule of `build`'s run of `scenario` at `seed` and size `runners` (`--runners`), or why
    /// that size cannot be had.
    pub fn of_sized_run(
        scenario: &'static dyn Scenario,
        runners: u32,
        build: Build,
        seed: Seed,
        network: Network,
        oracle: &str,
    ) -> Result<Capsule, ScaleError> {
        let scaled = Scaled::new(scenario, runners)?;
        let world = OnNetwork::new(&scaled, network).world_for(seed, build).config;
        let capsule = Capsule::of_world(scenario.name(), world, build, seed, network, oracle);
        Ok(Capsule { runners: Some(runners), ..capsule })
    }

    fn of_world(
        scenario: &str,
        world: WorldConfig,
        build: Build,
        seed: Seed,
        network: Network,
        oracle: &str,
    ) -> Capsule {
        Capsule {
            scenario: scenario.to_string(),
            profile: build.profile,
            variant: build.variant,
            seed,
            network,
            schedule: Schedule::Fifo,
            assumed: Assumed::defaults(),
            runners: None,
            plan: CapsulePlan {
                faults: world.faults,
                disruptions: world.disruptions,
                watch_lag: world.apiserver.watch_lag,
                watch_cache_lag: world.apiserver.watch_cache_lag,
                kubelet: Some(world.kubelet),
                objects: Some(world.objects),
                client_rate_limits: world.client_rate_limits,
            },
            workload: world.workload,
            duration_ms: world.horizon_ms,
            expected_oracle: oracle.to_string(),
        }
    }

    /// Reads and checks a capsule from JSON.
    pub fn parse(json: &str) -> Result<Capsule, CapsuleError> {
        let capsule: Capsule = serde_json::from_str(json).map_err(|e| CapsuleError::Syntax(e.to_string()))?;
        capsule.check()?;
        Ok(capsule)
    }

    /// Reads and checks the capsule in `path`.
    pub fn load(path: &Path) -> Result<Capsule, CapsuleError> {
        let io = |source| CapsuleError::Io { action: "read", path: path.display().to_string(), source };
        Capsule::parse(&std::fs::read_to_string(path).map_err(io)?)
    }

    /// Writes the capsule to `path` as pretty JSON.
    pub fn save(&self, path: &Path) -> Result<(), CapsuleError> {
        let io = |source| CapsuleError::Io { action: "write", path: path.display().to_string(), source };
        std::fs::write(path, self.to_json() + "\n").map_err(io)
    }

    /// The capsule as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Every field a run could not use, named.
    pub fn check(&self) -> Result<(), CapsuleError> {
        let scenario = scenarios::find(&self.scenario).map_err(CapsuleError::Invalid)?;
        let twins = scenario.twins_for(self.seed, Build::new(self.profile, self.variant));
        let twin_oracles = twins.iter().flat_map(|t| t.oracles.iter().map(|o| o.name()));
        let mut names: Vec<&str> = scenario.oracles().iter().map(|o| o.name()).chain(twin_oracles).collect();
        names.dedup();
        if !names.contains(&self.expected_oracle.as_str()) {
            return Err(CapsuleError::Invalid(format!(
                "scenario {} runs no oracle {:?}; it runs {}",
                self.scenario,
                self.expected_oracle,
                names.join(", ")
            )));
        }
        if let Some(runners) = self.runners {
            Scaled::new(scenario, runners).map_err(|e| CapsuleError::Invalid(e.to_string()))?;
        }
        self.plan.faults.validate().map_err(|e| CapsuleError::Invalid(e.to_string()))?;
        self.workload.validate().map_err(|e| CapsuleError::Invalid(e.to_string()))?;
        if self.duration_ms == 0 {
            return Err(CapsuleError::Invalid("duration_ms must be above 0".into()));
        }
        Ok(())
    }

    /// Runs the capsule and judges it, keeping `keep` of the record (`None`: what the judges need).
    pub fn run(&self, mode: TraceMode, keep: Option<Interest>) -> Result<(Verdict, RunRecord), CapsuleError> {
        let found = scenarios::find(&self.scenario).map_err(CapsuleError::Invalid)?;
        let scaled = self.runners.map(|n| Scaled::new(found, n)).transpose();
        let scaled = scaled.map_err(|e| CapsuleError::Invalid(e.to_string()))?;
        let sized: &dyn Scenario = match &scaled {
            Some(scaled) => scaled,
            None => found,
        };
        let on_network = OnNetwork::new(sized, self.network);
        let replayed = Replayed { inner: &on_network, capsule: self };
        let build = Build::new(self.profile, self.variant);
        Ok(run_build_keeping(&replayed, build, self.seed, mode, keep)?)
    }

    /// Whether `verdict` holds a violation of the expected oracle.
    pub fn fails(&self, verdict: &Verdict) -> bool {
        verdict.violations.iter().any(|v| v.oracle == self.expected_oracle)
    }

    /// `plan` with this capsule's data in place of the scenario's.
    fn apply(&self, mut plan: WorldPlan) -> WorldPlan {
        let config = &mut plan.config;
        config.faults = self.plan.faults.clone();
        config.disruptions = self.plan.disruptions.clone();
        config.apiserver.watch_lag = self.plan.watch_lag.clone();
        config.apiserver.watch_cache_lag = self.plan.watch_cache_lag.clone();
        if let Some(kubelet) = &self.plan.kubelet {
            config.kubelet = kubelet.clone();
        }
        if let Some(objects) = &self.plan.objects {
            config.objects = objects.clone();
        }
        config.client_rate_limits = self.plan.client_rate_limits;
        config.workload = self.workload.clone();
        config.horizon_ms = self.duration_ms;
        config.schedule = self.schedule;
        self.assumed.apply(&mut config.github);
        plan
    }

    /// The command that replays the capsule in `path`.
    pub fn replay_line(path: &Path) -> String {
        format!("{} run --capsule {}", arc_scenarios::verdict::replay_program(), path.display())
    }
}

/// A variant written as the command line names it.
mod variant_name {
    use serde::{Deserialize, Deserializer, Serializer};

    use arc_scenarios::variant::Variant;

    pub(super) fn serialize<S: Serializer>(variant: &Variant, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(variant)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
        let name = String::deserialize(d)?;
        name.parse()
            .map_err(|e: arc_scenarios::variant::UnknownVariant| serde::de::Error::custom(e.to_string()))
    }
}

/// A scenario whose worlds (and twins' worlds) carry a capsule's data.
struct Replayed<'a> {
    inner: &'a dyn Scenario,
    capsule: &'a Capsule,
}

impl Scenario for Replayed<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn describe(&self) -> &'static str {
        self.inner.describe()
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        self.capsule.apply(self.inner.world(seed, variant))
    }

    fn world_for(&self, seed: Seed, build: Build) -> WorldPlan {
        self.capsule.apply(self.inner.world_for(seed, build))
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        self.inner.oracles()
    }

    fn twins_for(&self, seed: Seed, build: Build) -> Vec<Twin> {
        let twins = self.inner.twins_for(seed, build).into_iter();
        twins.map(|t| Twin { plan: self.capsule.apply(t.plan), ..t }).collect()
    }

    fn probe_goals(&self) -> &'static [ProbeGoal] {
        self.inner.probe_goals()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standard() -> Capsule {
        let scenario = scenarios::find("standard").unwrap();
        Capsule::of_run(
            scenario,
            Build::arcsim(Variant::Fixed),
            Seed(3),
            Network::InProcess,
            "bounded-pod-creates",
        )
    }

    #[test]
    fn a_capsule_reads_back_as_written() {
        let capsule = standard();
        assert_eq!(Capsule::parse(&capsule.to_json()).unwrap(), capsule);
    }

    #[test]
    fn a_capsule_keeps_its_schedule_and_a_fifo_one_does_not_name_it() {
        let capsule = standard();
        assert!(!capsule.to_json().contains("schedule"));
        let pct = Capsule { schedule: Schedule::Pct { depth: 3 }, ..capsule };
        assert!(pct.to_json().contains(r#""schedule": "pct:3""#), "{}", pct.to_json());
        assert_eq!(Capsule::parse(&pct.to_json()).unwrap(), pct);
        let bad = pct.to_json().replace("pct:3", "pct:0");
        assert!(Capsule::parse(&bad).unwrap_err().to_string().contains("pct:D"));
    }

    #[test]
    fn a_capsule_keeps_its_assumptions_and_its_world_has_them() {
        let capsule = standard();
        assert!(!capsule.to_json().contains("assumed"));
        let assumed = Assumed::parse(["capacity-header=advisory"]).unwrap();
        let advisory = Capsule { assumed, ..capsule };
        assert!(advisory.to_json().contains(r#""capacity-header": "advisory""#), "{}", advisory.to_json());
        assert_eq!(Capsule::parse(&advisory.to_json()).unwrap(), advisory);
        let scenario = arc_scenarios::scenarios::find(&advisory.scenario).unwrap();
        let plan = advisory.apply(scenario.world(advisory.seed, advisory.variant));
        assert!(!plan.config.github.honour_max_capacity);
    }

    #[test]
    fn a_sized_capsule_keeps_its_size_and_replays_at_it() {
        assert!(!standard().to_json().contains(r#""runners""#));
        let scenario = scenarios::find("standard").unwrap();
        let build = Build::arcsim(Variant::Fixed);
        let sized =
            Capsule::of_sized_run(scenario, 30, build, Seed(3), Network::InProcess, "bounded-pod-creates")
                .unwrap();
        assert!(sized.to_json().contains(r#""runners": 30"#), "{}", sized.to_json());
        assert_eq!(Capsule::parse(&sized.to_json()).unwrap(), sized);
        let own = standard().workload.arrivals_per_minute;
        assert!(
            (sized.workload.arrivals_per_minute / own - 3.0).abs() < 1e-9,
            "the workload is the sized one"
        );
        let zero = sized.to_json().replace(r#""runners": 30"#, r#""runners": 0"#);
        assert!(Capsule::parse(&zero).unwrap_err().to_string().contains("--runners must be at least 1"));
    }

    #[test]
    fn bad_capsules_get_clear_errors() {
        let err = |json: &str| Capsule::parse(json).unwrap_err().to_string();
        assert!(err("{").contains("not valid JSON"), "{}", err("{"));
        let mut capsule = standard();
        capsule.scenario = "nowhere".into();
        assert!(err(&capsule.to_json()).contains("unknown scenario \"nowhere\""));
        let mut capsule = standard();
        capsule.expected_oracle = "no-such-oracle".into();
        assert!(err(&capsule.to_json()).contains("runs no oracle \"no-such-oracle\""));
        let mut capsule = standard();
        capsule.workload.burst_size_min = 0;
        assert!(err(&capsule.to_json()).contains("burst_size_min"));
        let missing = Capsule::load(Path::new("/nonexistent/capsule.json")).unwrap_err().to_string();
        assert!(missing.contains("cannot read capsule"), "{missing}");
    }

    #[test]
    fn a_capsule_may_expect_an_oracle_its_twins_run() {
        let scenario = scenarios::find("optimisation-equivalence").unwrap();
        let build = Build::arcsim(Variant::BugArsPredicateCounts);
        let oracle = "same-mutating-calls-and-final-state";
        let capsule = Capsule::of_run(scenario, build, Seed(1), Network::InProcess, oracle);
        capsule.check().unwrap();
        let listed = Capsule { expected_oracle: "no-such-oracle".into(), ..capsule }.check().unwrap_err();
        assert!(listed.to_string().contains(oracle), "{listed}");
    }
}
