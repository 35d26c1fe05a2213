//! Steps 3–5 of ARC-MODEL §3.1: the two finalizers, the JIT registration and its secret, and the
//! runner id recorded in the status.
//!
//! The JIT secret is read before anything is registered, so a runner is registered once per secret
//! (§8.1 oracle c). When the service already knows the runner's name (`AgentExists`, typically a
//! registration whose secret never got written), a registration of the same scale set is removed and the
//! reconcile retried; one of another scale set means the name is taken for good and the runner is
//! deleted, for the EphemeralRunnerSet to replace.

use std::ops::ControlFlow;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;

use super::draft::RunnerDraft;
use super::{EphemeralRunnerReconciler, Step, namespace_and_name};
use crate::ActionsClient;
use crate::crd::EphemeralRunner;
use crate::crd::constants::{
    EPHEMERAL_RUNNER_FINALIZER, EPHEMERAL_RUNNER_REGISTRATION_FINALIZER, JIT_SECRET_KEY_RUNNER_ID,
    JIT_SECRET_KEY_RUNNER_NAME, RUNNER_CONTAINER_NAME,
};
use crate::github::wire::{JitRunnerConfig, JitRunnerSetting};
use crate::kit::error::Result;
use crate::runtime::outcome::Outcome;
use crate::scaleset::resource_builder::JitConfig;
use crate::switches::Fixes;

/// Both finalizers, in the order ARC adds them.
const FINALIZERS: [&str; 2] = [EPHEMERAL_RUNNER_FINALIZER, EPHEMERAL_RUNNER_REGISTRATION_FINALIZER];

/// What asking the service for a JIT config came to.
enum JitOutcome {
    /// The runner is registered; here is its config.
    Registered(JitRunnerConfig),
    /// The name was taken by a registration that is now gone or was just removed: try again.
    Retry,
    /// The name is taken by a runner of another scale set: this runner can never register.
    TakenByAnotherScaleSet,
}

/// How the ER controller adds missing finalizers, by the fixes in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FinalizerStep {
    /// #4320 / #4580: every missing finalizer in one patch, then on in the same pass.
    BothAtOnce,
    /// Before #4320 (`add_both_finalizers_at_once` off): the first missing one, then the pass ends.
    OnePerPass,
    /// ARC HEAD's short circuit (`no_finalizer_short_circuit` off): with the main finalizer missing,
    /// only it is added, and the pass carries on into registration.
    ShortCircuit,
}

impl FinalizerStep {
    /// The step `fixes` select.
    pub(super) fn of(fixes: &Fixes) -> Self {
        if !fixes.add_both_finalizers_at_once {
            FinalizerStep::OnePerPass
        } else if !fixes.no_finalizer_short_circuit {
            FinalizerStep::ShortCircuit
        } else {
            FinalizerStep::BothAtOnce
        }
    }

    /// Whether the pass carries on after adding finalizers.
    pub(super) fn carries_on(self) -> bool {
        self != FinalizerStep::OnePerPass
    }
}

/// The finalizers to add to a runner carrying `present` under `step`.
pub(super) fn finalizers_to_add(present: &[String], step: FinalizerStep) -> Vec<&'static str> {
    let has = |wanted: &str| present.iter().any(|f| f == wanted);
    let missing: Vec<&'static str> = FINALIZERS.into_iter().filter(|wanted| !has(wanted)).collect();
    match step {
        FinalizerStep::BothAtOnce => missing,
        FinalizerStep::OnePerPass => missing.into_iter().take(1).collect(),
        FinalizerStep::ShortCircuit if !has(EPHEMERAL_RUNNER_FINALIZER) => vec![EPHEMERAL_RUNNER_FINALIZER],
        FinalizerStep::ShortCircuit => missing,
    }
}

/// The runner id and name a JIT secret records; `None` when the id does not parse (a corrupted
/// secret).
pub(super) fn registration_of(secret: &Secret) -> Option<(i64, String)> {
    let data = secret.data.as_ref()?;
    let text = |key: &str| data.get(key).map(|value| String::from_utf8_lossy(&value.0).into_owned());
    let runner_id = text(JIT_SECRET_KEY_RUNNER_ID)?.trim().parse().ok()?;
    Some((runner_id, text(JIT_SECRET_KEY_RUNNER_NAME).unwrap_or_default()))
}

/// The work folder the runner registers with: the `runner` container's `workingDir`, if set.
fn work_folder(runner: &EphemeralRunner) -> String {
    let containers = runner.spec.pod_template.spec.as_ref().map(|spec| spec.containers.as_slice());
    let runner_container = containers.unwrap_or_default().iter().find(|c| c.name == RUNNER_CONTAINER_NAME);
    runner_container.and_then(|c| c.working_dir.clone()).unwrap_or_default()
}

impl EphemeralRunnerReconciler {
    /// Step 3: adds the missing finalizers in one patch and carries on ([`FinalizerStep`]: before
    /// #4320 one per reconcile, returning; with HEAD's short circuit the main one alone when it is
    /// missing, carrying on).
    pub(super) async fn ensure_finalizers(&self, runner: &mut RunnerDraft) -> Step {
        let present = runner.get().metadata.finalizers.as_deref().unwrap_or_default();
        let step = FinalizerStep::of(&self.ctx.switches.fixes);
        let adding = finalizers_to_add(present, step);
        if adding.is_empty() {
            return Ok(ControlFlow::Continue(()));
        }
        tracing::info!(finalizers = ?adding, "Adding finalizers");
        let finalizers = runner.mutate().metadata.finalizers.get_or_insert_with(Vec::new);
        finalizers.extend(adding.into_iter().map(String::from));
        runner.patch(&self.ctx.api).await?;
        tracing::info!("Successfully added finalizers");
        if step.carries_on() { Ok(ControlFlow::Continue(())) } else { Ok(ControlFlow::Break(Outcome::Done)) }
    }

    /// Step 4: the JIT secret, registering the runner and creating the secret when there is none.
    pub(super) async fn ensure_jit_secret(&self, runner: &RunnerDraft) -> Step<Arc<Secret>> {
        let (namespace, name) = namespace_and_name(runner.get());
        if let Some(secret) = self.read_jit_secret(namespace, name).await? {
            return Ok(ControlFlow::Continue(secret));
        }
        match self.create_runner_jit_config(runner.get()).await? {
            JitOutcome::Registered(config) => {
                let secret = self.create_jit_secret(runner.get(), config).await?;
                Ok(ControlFlow::Continue(Arc::new(secret)))
            }
            JitOutcome::Retry => {
                tracing::info!("Encountered retryable error registering the runner, requeueing");
                Ok(ControlFlow::Break(Outcome::Requeue))
            }
            JitOutcome::TakenByAnotherScaleSet => {
                tracing::info!("JIT config cannot be created for this ephemeral runner, issuing delete");
                self.delete_runner(runner.get()).await?;
                Ok(ControlFlow::Break(Outcome::Done))
            }
        }
    }

    /// ARC's `createRunnerJitConfig`: GenerateJitRunnerConfig, resolving a taken name.
    async fn create_runner_jit_config(&self, runner: &EphemeralRunner) -> Result<JitOutcome> {
        let (_, name) = namespace_and_name(runner);
        tracing::info!("Creating ephemeral runner JIT config");
        let client = self.actions_client(runner).await?;
        let setting = JitRunnerSetting { name: name.to_string(), work_folder: work_folder(runner) };
        match client.generate_jit_runner_config(&setting, runner.spec.runner_scale_set_id).await {
            Ok(config) => {
                tracing::info!(runner_id = config.runner.id, "Created ephemeral runner JIT config");
                Ok(JitOutcome::Registered(config))
            }
            Err(error) if error.is_agent_exists() => self.resolve_taken_name(&client, runner).await,
            Err(error) => Err(error.into()),
        }
    }

    /// The runner's name is registered already: remove that registration if it is this scale set's.
    async fn resolve_taken_name(
        &self,
        client: &ActionsClient,
        runner: &EphemeralRunner,
    ) -> Result<JitOutcome> {
        let (_, name) = namespace_and_name(runner);
        tracing::info!(runner_name = name, "Runner name already registered, looking the runner up by name");
        let Some(existing) = client.get_runner_by_name(name).await? else {
            tracing::info!("Runner with the same name does not exist anymore");
            return Ok(JitOutcome::Retry);
        };
        let scale_set_id = existing.runner_scale_set_id;
        tracing::info!(runner_id = existing.id, scale_set_id, "Found the runner with the same name");
        if scale_set_id != runner.spec.runner_scale_set_id {
            return Ok(JitOutcome::TakenByAnotherScaleSet);
        }
        client.remove_runner(existing.id).await?;
        tracing::info!(runner_id = existing.id, "Removed the runner with the same name");
        Ok(JitOutcome::Retry)
    }

    /// Creates the JIT secret holding `config` (ARC's `createSecret`).
    async fn create_jit_secret(&self, runner: &EphemeralRunner, config: JitRunnerConfig) -> Result<Secret> {
        let jit = JitConfig {
            encoded_jit_config: config.encoded_jit_config,
            runner_id: config.runner.id,
            runner_name: config.runner.name,
            runner_scale_set_id: config.runner.runner_scale_set_id,
        };
        let secret = self.ctx.builder.jit_secret(runner, &jit)?;
        let (namespace, _) = namespace_and_name(runner);
        let created = self.ctx.api.create(namespace, &secret).await?;
        tracing::info!("Created ephemeral runner secret for jitconfig");
        Ok(created)
    }

    /// Step 5: records the runner id and name from the secret when the status has none yet. A secret
    /// whose id does not parse is deleted, and the reconcile retried to register afresh.
    pub(super) async fn record_registration(&self, runner: &mut RunnerDraft, secret: &Secret) -> Step {
        if runner.get().runner_id() != 0 {
            return Ok(ControlFlow::Continue(()));
        }
        let Some((runner_id, runner_name)) = registration_of(secret) else {
            tracing::error!("Runner config secret is corrupted: missing runnerId; deleting it");
            let (namespace, name) = namespace_and_name(runner.get());
            self.ctx.api.delete::<Secret>(namespace, name, &Default::default()).await?;
            return Ok(ControlFlow::Break(Outcome::Requeue));
        };
        tracing::info!(runner_id, "Updating ephemeral runner status with runnerId and runnerName");
        let status = runner.status_mut();
        status.runner_id = runner_id;
        status.runner_name = runner_name;
        runner.patch_status(&self.ctx.api).await?;
        Ok(ControlFlow::Continue(()))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::ByteString;
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    use super::*;

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| (*v).to_string()).collect()
    }

    #[test]
    fn both_missing_finalizers_are_added_at_once_with_the_fix_and_one_at_a_time_without() {
        use FinalizerStep::{BothAtOnce, OnePerPass};
        assert_eq!(finalizers_to_add(&[], BothAtOnce), FINALIZERS);
        assert_eq!(finalizers_to_add(&[], OnePerPass), [EPHEMERAL_RUNNER_FINALIZER]);
        let main_only = strings(&[EPHEMERAL_RUNNER_FINALIZER]);
        assert_eq!(finalizers_to_add(&main_only, OnePerPass), [EPHEMERAL_RUNNER_REGISTRATION_FINALIZER]);
        assert_eq!(finalizers_to_add(&main_only, BothAtOnce), [EPHEMERAL_RUNNER_REGISTRATION_FINALIZER]);
        let both = strings(&["other", EPHEMERAL_RUNNER_REGISTRATION_FINALIZER, EPHEMERAL_RUNNER_FINALIZER]);
        assert!(finalizers_to_add(&both, BothAtOnce).is_empty());
        assert!(finalizers_to_add(&both, OnePerPass).is_empty());
    }

    #[test]
    fn the_short_circuit_adds_only_the_main_finalizer_when_it_is_missing_and_carries_on() {
        use FinalizerStep::ShortCircuit;
        assert_eq!(finalizers_to_add(&[], ShortCircuit), [EPHEMERAL_RUNNER_FINALIZER]);
        let main_only = strings(&[EPHEMERAL_RUNNER_FINALIZER]);
        assert_eq!(finalizers_to_add(&main_only, ShortCircuit), [EPHEMERAL_RUNNER_REGISTRATION_FINALIZER]);
        let registration_only = strings(&[EPHEMERAL_RUNNER_REGISTRATION_FINALIZER]);
        assert_eq!(finalizers_to_add(&registration_only, ShortCircuit), [EPHEMERAL_RUNNER_FINALIZER]);
        assert!(ShortCircuit.carries_on() && FinalizerStep::BothAtOnce.carries_on());
        assert!(!FinalizerStep::OnePerPass.carries_on());
    }

    #[test]
    fn the_finalizer_step_follows_the_fixes() {
        assert_eq!(FinalizerStep::of(&Fixes::all_on()), FinalizerStep::BothAtOnce);
        let short = Fixes { no_finalizer_short_circuit: false, ..Fixes::all_on() };
        assert_eq!(FinalizerStep::of(&short), FinalizerStep::ShortCircuit);
        let before = Fixes { add_both_finalizers_at_once: false, ..Fixes::all_on() };
        assert_eq!(FinalizerStep::of(&before), FinalizerStep::OnePerPass);
        assert_eq!(FinalizerStep::of(&Fixes::all_off()), FinalizerStep::OnePerPass);
    }

    fn secret_with(pairs: &[(&str, &str)]) -> Secret {
        let data = pairs.iter().map(|(k, v)| ((*k).to_string(), ByteString(v.as_bytes().to_vec())));
        Secret { data: Some(data.collect()), ..Default::default() }
    }

    #[test]
    fn the_registration_is_read_from_the_secret_and_a_bad_id_is_corruption() {
        let good = secret_with(&[("runnerId", "42"), ("runnerName", "r-1")]);
        assert_eq!(registration_of(&good), Some((42, "r-1".to_string())));
        assert_eq!(registration_of(&secret_with(&[("runnerId", "7")])), Some((7, String::new())));
        assert_eq!(registration_of(&secret_with(&[("runnerId", "x")])), None);
        assert_eq!(registration_of(&secret_with(&[("runnerName", "r-1")])), None);
        assert_eq!(registration_of(&Secret::default()), None);
    }

    #[test]
    fn the_work_folder_is_the_runner_containers_working_dir() {
        let mut runner = EphemeralRunner::new("r", Default::default());
        assert_eq!(work_folder(&runner), "");
        let container = |name: &str, dir: &str| Container {
            name: name.into(),
            working_dir: Some(dir.into()),
            ..Default::default()
        };
        runner.spec.pod_template.spec = Some(PodSpec {
            containers: vec![container("sidecar", "/x"), container("runner", "/w")],
            ..Default::default()
        });
        assert_eq!(work_folder(&runner), "/w");
    }
}
