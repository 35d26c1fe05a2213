//! `legacy-standard`: the standard workload on the legacy Runner controller. Ten persistent legacy
//! runners (as many as the standard world's runner set may run), the standard workload's job mix and
//! rate, kept up for one registration-token lifetime and a quarter (GitHub's tokens last an hour, so
//! every runner's token expires while jobs still arrive), no faults, no crashes. Nothing in it is
//! aimed at a race: it is the world where `arcsim explore` looks for the legacy bugs without race
//! settings, and the natural world their kill rows are measured in.

use arc_controller::Families;
use arc_controller::legacy::LegacySettings;
use arc_sim::Seed;
use arc_world::{default_config, legacy_settled};

use super::objects::{
    CONFIG_SECRET, LEGACY_LABEL, LEGACY_SECRET_NAMESPACE, RUNNER_NAMESPACE, github_secret, legacy_runner,
};
use crate::scenario::{Scenario, WorldPlan};
use crate::variant::Variant;
use arc_judging::oracles::{self, Oracle};
use arc_judging::probes::{self, ProbeGoal};
use arc_judging::rates::Rate;

/// The standard workload on legacy runners.
pub struct LegacyStandard;

/// Persistent legacy runners in the world.
pub const RUNNERS: usize = 10;
/// When the last job arrives: 75 minutes, a quarter of an hour past the first token expiry.
pub const WORKLOAD_MS: u64 = 4_500_000;
/// How long the world runs after the last arrival for its jobs to end and its runners to settle.
pub const HEAL_MS: u64 = 1_800_000;

/// The legacy world every legacy scenario starts from: the GitHub secret and `runners` persistent
/// Runners named `legacy-runner-N`, the workload's jobs labelled for them, the controller built as
/// `variant` with the legacy family only.
pub fn legacy_world(seed: Seed, variant: Variant, runners: usize) -> WorldPlan {
    let mut config = default_config(seed);
    config.apiserver.namespaces.extend([RUNNER_NAMESPACE.to_string(), LEGACY_SECRET_NAMESPACE.to_string()]);
    config.switches = variant.switches(arc_controller::Profile::Arcsim);
    config.objects = vec![github_secret(LEGACY_SECRET_NAMESPACE)];
    config.objects.extend((0..runners).map(|i| legacy_runner(&format!("legacy-runner-{i}"))));
    config.workload.labels = vec![LEGACY_LABEL.to_string()];
    let settings = LegacySettings {
        github_secret_namespace: LEGACY_SECRET_NAMESPACE.into(),
        github_secret_name: CONFIG_SECRET.into(),
        ..LegacySettings::default()
    };
    WorldPlan { config, families: Families::legacy(settings), settled: legacy_settled(RUNNER_NAMESPACE) }
}

/// The oracles every legacy world must satisfy.
pub fn legacy_oracles() -> Vec<&'static dyn Oracle> {
    vec![
        &oracles::tokens::NoExpiredTokenRegistration,
        &oracles::jobs::NoJobLostToControllerKill,
        &oracles::pods::PodOwnedByItsRunner,
        &oracles::convergence::ConvergesAfterHeal,
    ]
}

impl Scenario for LegacyStandard {
    fn name(&self) -> &'static str {
        "legacy-standard"
    }

    fn describe(&self) -> &'static str {
        "ten legacy runners, the standard workload for 75 sim-minutes (past the hourly token expiry), no faults"
    }

    fn world(&self, seed: Seed, variant: Variant) -> WorldPlan {
        let mut plan = legacy_world(seed, variant, RUNNERS);
        plan.config.workload.horizon_ms = WORKLOAD_MS;
        plan.config.horizon_ms = WORKLOAD_MS + HEAL_MS;
        plan
    }

    fn oracles(&self) -> Vec<&'static dyn Oracle> {
        legacy_oracles()
    }

    /// Tokens expire and are replaced here, on true clocks: the clock-skew probe's control world.
    fn probe_goals(&self) -> &'static [ProbeGoal] {
        const DIRECT_CONFIG: Rate = Rate::measured(0, 200, 28_600_000);
        const GOALS: &[ProbeGoal] = &[
            ProbeGoal::ceiling(&probes::TOKEN_REFRESHED_BEFORE_EXPIRY, Rate::measured(0, 400, 18_400_000)),
            ProbeGoal::ceiling(&probes::CONFIG_SH_REQUEST_RETRIED, DIRECT_CONFIG),
            ProbeGoal::ceiling(&probes::CONFIG_SH_REGISTRATION_ANSWER_LOST, DIRECT_CONFIG),
        ];
        GOALS
    }
}
