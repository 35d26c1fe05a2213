//! The scale set at GitHub (ARC-MODEL §3.3 steps 7–8): registered once (the runner group looked up
//! by name, default group 1; an existing scale set of that name reused, otherwise created with labels
//! `[name] + runnerScaleSetLabels` and `disableUpdate`), then followed when the ARS's runner group or
//! scale-set name changes. Each call records what GitHub answered in the ARS annotations, in one
//! patch, and ends the reconcile.

use std::ops::ControlFlow;

use super::{AutoscalingRunnerSetReconciler, Step, namespace_and_name, patch_object};
use crate::crd::AutoscalingRunnerSet;
use crate::crd::constants::{
    ANNOTATION_RUNNER_GROUP_NAME, ANNOTATION_RUNNER_SCALE_SET_ID, ANNOTATION_RUNNER_SCALE_SET_NAME,
};
use crate::github::ActionsClient;
use crate::github::wire::{Label, RunnerScaleSet, RunnerSetting};
use crate::kit::error::Result;
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::outcome::Outcome;
use crate::scaleset::GitHubTarget;
use crate::scaleset::resource_builder::github_url::apply_github_url_labels;

/// Id of GitHub's default runner group, used when the ARS names none.
const DEFAULT_RUNNER_GROUP_ID: i64 = 1;

impl AutoscalingRunnerSetReconciler {
    /// Steps 7–8: register the scale set, or bring its group or name in line with the spec.
    pub(super) async fn register_scale_set(&self, ars: &mut LazyCopy<AutoscalingRunnerSet>) -> Step {
        let Some(id) = registered_id(ars.get()) else {
            return self.create_scale_set(ars).await.map(ControlFlow::Break);
        };
        let spec = &ars.get().spec;
        let annotation =
            |key: &str| ars.get().metadata.annotations.as_ref().and_then(|a| a.get(key)).cloned();
        if needs_update(annotation(ANNOTATION_RUNNER_GROUP_NAME), &spec.runner_group) {
            return self.update_runner_group(ars, id).await.map(ControlFlow::Break);
        }
        if needs_update(annotation(ANNOTATION_RUNNER_SCALE_SET_NAME), &spec.runner_scale_set_name) {
            return self.update_scale_set_name(ars, id).await.map(ControlFlow::Break);
        }
        Ok(ControlFlow::Continue(()))
    }

    /// #4571: whether GitHub no longer knows the scale set `ars` recorded (it answers 404 for its id).
    pub(super) async fn scale_set_vanished(&self, ars: &AutoscalingRunnerSet) -> Result<bool> {
        let Some(id) = registered_id(ars) else { return Ok(false) };
        let client = self.actions_client(ars).await?;
        match client.get_runner_scale_set_by_id(id).await {
            Ok(_) => Ok(false),
            Err(e) if e.is_not_found() => Ok(true),
            Err(e) => Err(e.into()),
        }
    }

    /// #4571: drops the recorded id of a scale set GitHub no longer knows, so the next pass
    /// registers it again by name (steps 7–8) before anything is built on the dead id.
    pub(super) async fn forget_scale_set(&self, ars: &AutoscalingRunnerSet) -> Step {
        let (namespace, name) = namespace_and_name(ars);
        tracing::info!(%namespace, %name, "the runner scale set is gone from GitHub; registering it again");
        let patch =
            serde_json::json!({ "metadata": { "annotations": { ANNOTATION_RUNNER_SCALE_SET_ID: null } } });
        self.ctx.api.patch_merge::<AutoscalingRunnerSet>(namespace, name, &patch).await?;
        Ok(ControlFlow::Break(Outcome::Done))
    }

    /// The GitHub client of `ars` (credentials read uncached from its config secret).
    pub(super) async fn actions_client(&self, ars: &AutoscalingRunnerSet) -> Result<ActionsClient> {
        let namespace = ars.metadata.namespace.as_deref().unwrap_or_default();
        let spec = &ars.spec;
        let target = GitHubTarget {
            url: &spec.github_config_url,
            secret: &spec.github_config_secret,
            proxy: spec.proxy.as_ref(),
            tls: spec.github_server_tls.as_ref(),
        };
        self.ctx.actions_client(namespace, target).await
    }

    /// Gets or creates the scale set and records id, name, group and the URL labels. As in ARC, an
    /// empty `runnerScaleSetName` is written back as the ARS name in the same patch.
    async fn create_scale_set(&self, ars: &mut LazyCopy<AutoscalingRunnerSet>) -> Result<Outcome> {
        let client = self.actions_client(ars.get()).await?;
        let name = ars.get().scale_set_name().to_string();
        if ars.get().spec.runner_scale_set_name.is_empty() {
            ars.mutate().spec.runner_scale_set_name = name.clone();
        }
        let group_id = runner_group_id(&client, &ars.get().spec.runner_group).await?;
        let scale_set = match client.get_runner_scale_set(group_id, &name).await? {
            Some(existing) => existing,
            None => {
                let wanted = new_scale_set(&name, group_id, &ars.get().spec.runner_scale_set_labels);
                client.create_runner_scale_set(&wanted).await?
            }
        };
        tracing::info!(id = scale_set.id, name = %scale_set.name, group = %scale_set.runner_group_name, "created or reused the runner scale set");
        let url = ars.get().spec.github_config_url.clone();
        let live = ars.mutate();
        let annotations = live.metadata.annotations.get_or_insert_with(Default::default);
        annotations.insert(ANNOTATION_RUNNER_SCALE_SET_NAME.into(), scale_set.name);
        annotations.insert(ANNOTATION_RUNNER_SCALE_SET_ID.into(), scale_set.id.to_string());
        annotations.insert(ANNOTATION_RUNNER_GROUP_NAME.into(), scale_set.runner_group_name);
        apply_github_url_labels(&url, live.metadata.labels.get_or_insert_with(Default::default))?;
        patch_object(&self.ctx.api, ars).await?;
        Ok(Outcome::Done)
    }

    /// Moves scale set `id` to the spec's runner group and records the group and name GitHub reports.
    async fn update_runner_group(
        &self,
        ars: &mut LazyCopy<AutoscalingRunnerSet>,
        id: i64,
    ) -> Result<Outcome> {
        let client = self.actions_client(ars.get()).await?;
        let runner_group_id = runner_group_id(&client, &ars.get().spec.runner_group).await?;
        let change = RunnerScaleSet { runner_group_id, ..Default::default() };
        let updated = client.update_runner_scale_set(id, &change).await?;
        tracing::info!(id, group = %updated.runner_group_name, "moved the runner scale set to its runner group");
        let annotations = ars.mutate().metadata.annotations.get_or_insert_with(Default::default);
        annotations.insert(ANNOTATION_RUNNER_GROUP_NAME.into(), updated.runner_group_name);
        annotations.insert(ANNOTATION_RUNNER_SCALE_SET_NAME.into(), updated.name);
        patch_object(&self.ctx.api, ars).await?;
        Ok(Outcome::Done)
    }

    /// Renames scale set `id` to the spec's scale-set name. With no name in the spec there is nothing
    /// to rename to, and (as in ARC) the reconcile ends there.
    async fn update_scale_set_name(
        &self,
        ars: &mut LazyCopy<AutoscalingRunnerSet>,
        id: i64,
    ) -> Result<Outcome> {
        let name = ars.get().spec.runner_scale_set_name.clone();
        if name.is_empty() {
            tracing::info!(id, "runner scale set name is not specified; skipping the rename");
            return Ok(Outcome::Done);
        }
        let client = self.actions_client(ars.get()).await?;
        let updated =
            client.update_runner_scale_set(id, &RunnerScaleSet { name, ..Default::default() }).await?;
        let annotations = ars.mutate().metadata.annotations.get_or_insert_with(Default::default);
        annotations.insert(ANNOTATION_RUNNER_SCALE_SET_NAME.into(), updated.name);
        patch_object(&self.ctx.api, ars).await?;
        Ok(Outcome::Done)
    }
}

/// The recorded scale-set id, if it is a positive number (ARC's `shouldCreateScaleSet` inverted).
fn registered_id(ars: &AutoscalingRunnerSet) -> Option<i64> {
    ars.runner_scale_set_id().ok().filter(|id| *id > 0)
}

/// Whether a recorded group or name must follow the spec: it was never recorded, or the spec names
/// one that differs (case-insensitively, Go's `strings.EqualFold`). An empty spec value never
/// triggers an update.
fn needs_update(recorded: Option<String>, wanted: &str) -> bool {
    match recorded {
        None => true,
        Some(recorded) => !wanted.is_empty() && !equal_fold(&recorded, wanted),
    }
}

/// Case-insensitive comparison under Unicode simple case folding, like Go's `strings.EqualFold`.
fn equal_fold(a: &str, b: &str) -> bool {
    a.chars().flat_map(char::to_lowercase).eq(b.chars().flat_map(char::to_lowercase))
}

/// The id of runner group `name`; the default group when no name is given.
async fn runner_group_id(client: &ActionsClient, name: &str) -> Result<i64> {
    if name.is_empty() {
        return Ok(DEFAULT_RUNNER_GROUP_ID);
    }
    Ok(client.get_runner_group_by_name(name).await?.id)
}

/// The scale set ARC creates: its name as the first label, then the extra labels without
/// duplicates, all `System` labels, with runner self-updates disabled.
fn new_scale_set(name: &str, runner_group_id: i64, extra_labels: &[String]) -> RunnerScaleSet {
    let mut labels = vec![Label::system(name)];
    for extra in extra_labels {
        if labels.iter().any(|label| label.name == *extra) {
            tracing::info!(label = %extra, "duplicate runner scale set label skipped");
            continue;
        }
        labels.push(Label::system(extra.clone()));
    }
    RunnerScaleSet {
        name: name.to_string(),
        runner_group_id,
        labels,
        runner_setting: RunnerSetting { disable_update: true, ..Default::default() },
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_set_is_labelled_with_its_name_then_the_unique_extra_labels() {
        let extras = ["linux".to_string(), "arc".to_string(), "linux".to_string(), "x64".to_string()];
        let scale_set = new_scale_set("arc", 3, &extras);
        let names: Vec<&str> = scale_set.labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["arc", "linux", "x64"]);
        assert!(scale_set.labels.iter().all(|l| l.kind == "System"));
        assert!(scale_set.runner_setting.disable_update);
        assert_eq!((scale_set.runner_group_id, scale_set.id), (3, 0));
    }

    #[test]
    fn a_recorded_value_is_updated_only_when_missing_or_named_differently() {
        assert!(needs_update(None, ""));
        assert!(needs_update(None, "group"));
        assert!(!needs_update(Some("Default".into()), ""), "an empty spec never triggers an update");
        assert!(!needs_update(Some("TestGroup".into()), "testgroup"), "case does not matter");
        assert!(needs_update(Some("testgroup".into()), "testgroup2"));
        assert!(equal_fold("ÄRC", "ärc"));
    }
}
