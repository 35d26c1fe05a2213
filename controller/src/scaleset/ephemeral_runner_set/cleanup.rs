//! Taking runners away: ARC's `cleanUpEphemeralRunners` (used when the set is deleted, when its runner
//! spec changes and when it is Outdated) and `deleteEphemeralRunnerWithActionsClient`, the
//! RemoveRunner-then-delete step every removal of a live runner goes through (ARC-MODEL §3.2 steps
//! 10–11, §8.3).
//!
//! A live runner is removed at the service *before* its EphemeralRunner is deleted: the service
//! serialises RemoveRunner against job assignment, so a 204 means no job can reach the runner any
//! more, and `JobStillRunning` means a job got there first and the runner must stay. With
//! `fixes.remove_runner_before_scale_down` off (the behaviour before #1125) the EphemeralRunner is
//! deleted on the cached "no job" reading alone, and the runner's own finalizer calls RemoveRunner
//! later, when its pod may already be dying.

use std::sync::Arc;

use kube::api::DeleteParams;

use super::EphemeralRunnerSetReconciler;
use super::annotations::removing_runner_id;
use super::buckets::RunnerBuckets;
use crate::crd::{EphemeralRunner, EphemeralRunnerSet};
use crate::github::ActionsClient;
use crate::kit::error::{Error, Result};
use crate::runtime::api::{is_conflict, is_not_found};
use crate::runtime::object_key::ObjectKey;
use crate::scaleset::GitHubTarget;

/// What became of a runner [`EphemeralRunnerSetReconciler::remove_then_delete`] was asked to take
/// away.
pub(crate) enum Removal {
    /// It stays: a job is running on it, or (re-read) it has changed.
    Kept,
    /// It is gone or being deleted.
    Gone,
    /// The service removed it, but its EphemeralRunner's delete failed: it has no registration and
    /// is still live.
    RemovedNotDeleted(Error),
}

impl Removal {
    /// ARC's `(ok, err)`: a runner removed but not deleted is `false` with the error.
    pub(crate) fn into_result(self) -> Result<bool> {
        match self {
            Removal::Kept => Ok(false),
            Removal::Gone => Ok(true),
            Removal::RemovedNotDeleted(error) => Err(error),
        }
    }
}

/// A runner picked for removal, as read again just before removing it.
enum Fresh {
    /// Still live and idle: remove it (this is the runner to use).
    Idle(Box<EphemeralRunner>),
    /// Already gone or being deleted: it counts as removed, nothing to do.
    Leaving,
    /// It has taken a job or finished since the snapshot: leave it.
    Busy(Box<EphemeralRunner>),
}

impl EphemeralRunnerSetReconciler {
    /// ARC's `cleanUpEphemeralRunners`: `true` only when the set has no runners left (its proxy
    /// secret is then deleted too). Otherwise it deletes every terminated runner, removes every
    /// pending runner and every running runner without a job (RemoveRunner first), and returns
    /// `false`; runners with a job are left to finish. With `releases.cleanup_skips_unregistered`
    /// (#4683) a runner with no recorded runner id is left too, with its pod, for a later pass.
    pub(crate) async fn clean_up_runners(&self, ers: &EphemeralRunnerSet) -> Result<bool> {
        let runners = self.owned_runners(ers);
        if runners.is_empty() {
            self.delete_proxy_secret(ers).await?;
            tracing::info!("All ephemeral runners are deleted");
            return Ok(true);
        }
        let buckets = RunnerBuckets::of(runners, ers.applied_actionable_revision());
        let mut errors = Vec::new();
        for runner in buckets.terminated() {
            errors.extend(self.delete_runner(runner).await.err());
        }
        combine(std::mem::take(&mut errors))?;
        let idle_running = buckets.running.iter().filter(|runner| !runner.has_job());
        let skip_unregistered = self.ctx.switches.releases.cleanup_skips_unregistered;
        let removable: Vec<&Arc<EphemeralRunner>> = buckets
            .pending
            .iter()
            .chain(idle_running)
            .filter(|runner| !(skip_unregistered && leave_unregistered(runner)))
            .collect();
        if removable.is_empty() {
            return Ok(false);
        }
        let client = self.removal_client(ers).await?;
        let set = ObjectKey::from_resource(ers);
        for runner in removable {
            let removal = self.remove_then_delete(&set, runner, client.as_ref()).await;
            errors.extend(removal.and_then(Removal::into_result).err());
        }
        combine(errors)?;
        Ok(false)
    }

    /// The GitHub client RemoveRunner goes through; `None` when the fix is off and nothing is removed
    /// at the service before a delete.
    pub(crate) async fn removal_client(&self, ers: &EphemeralRunnerSet) -> Result<Option<ActionsClient>> {
        if !self.ctx.switches.fixes.remove_runner_before_scale_down {
            return Ok(None);
        }
        let spec = &ers.spec.ephemeral_runner_spec;
        let namespace = ers.metadata.namespace.as_deref().unwrap_or_default();
        let target = GitHubTarget {
            url: &spec.github_config_url,
            secret: &spec.github_config_secret,
            proxy: spec.proxy.as_ref(),
            tls: spec.github_server_tls.as_ref(),
        };
        let client = self.ctx.actions_client(namespace, target).await?;
        Ok(Some(client))
    }

    /// ARC's `deleteEphemeralRunnerWithActionsClient`: RemoveRunner (when `client` is given), then
    /// delete the EphemeralRunner. [`Removal::Kept`] when the runner stays: the service says a job is
    /// still running on it, or (with `fixes.reread_runner_before_removal`) a fresh read shows it has
    /// finished, got a job, or changed before the delete; [`Removal::RemovedNotDeleted`] when the
    /// service removed it and the delete failed (any other failure is an error).
    ///
    /// The runner comes from this reconcile's snapshot, and RemoveRunner calls go one after another,
    /// so by the time this one's turn comes the snapshot may be seconds old: a runner seen pending
    /// with `runnerId` 0 may have registered and taken a job since. ARC removes `runnerId` 0 (a no-op
    /// 204) and deletes the busy runner. The fix reads the runner afresh, removes the id it has now,
    /// and deletes an unregistered one only if it is unchanged since that read.
    pub(crate) async fn remove_then_delete(
        &self,
        set: &ObjectKey,
        runner: &EphemeralRunner,
        client: Option<&ActionsClient>,
    ) -> Result<Removal> {
        let marking = self.ctx.switches.fixes.delete_removed_runner_first;
        let runner = match self.fresh(runner).await? {
            Fresh::Idle(runner) => *runner,
            Fresh::Leaving => return Ok(Removal::Gone),
            // A mark stays on a runner the service kept: it has a job (or will show one), and a
            // runner with a job is never in the `removing` bucket.
            Fresh::Busy(runner) => {
                self.begun.refused(set, &runner);
                return Ok(Removal::Kept);
            }
        };
        let name = runner.metadata.name.as_deref().unwrap_or_default().to_string();
        let runner_id = runner.runner_id();
        // With the re-read and `remove_runner_by_known_id`, a runner still unregistered is not removed
        // as id 0: it is deleted only if unchanged, and its finalizer (which re-reads it) removes the
        // id it has by then, or nothing.
        let unregistered = runner_id == 0
            && self.ctx.switches.fixes.reread_runner_before_removal
            && self.ctx.switches.fixes.remove_runner_by_known_id;
        let removing = client.filter(|_| !unregistered);
        if let Some(client) = removing {
            // The mark goes on first, so that a removal is finished even if this process stops here.
            if marking
                && removing_runner_id(&runner) != runner_id
                && !self.mark_removal(&runner, runner_id).await?
            {
                return Ok(Removal::Gone);
            }
            if marking {
                self.begun.remember(set, &runner);
            }
            match client.remove_runner(runner_id).await {
                Err(error) if error.is_job_still_running() => {
                    tracing::info!(
                        runner = name,
                        runner_id,
                        "Runner is still running a job, skipping deletion"
                    );
                    self.begun.refused(set, &runner);
                    return Ok(Removal::Kept);
                }
                Err(error) => return Err(error.into()),
                Ok(()) => {}
            }
            tracing::info!(
                runner = name,
                runner_id,
                "Deleting ephemeral runner after removing it from the service"
            );
        }
        if self.ctx.switches.fixes.reread_runner_before_removal && runner_id == 0 {
            let deleted = self.delete_if_unchanged(&runner).await?;
            return Ok(if deleted { Removal::Gone } else { Removal::Kept });
        }
        match self.delete_runner(&runner).await {
            Ok(()) => {
                self.begun.forget(&runner);
                Ok(Removal::Gone)
            }
            Err(error) if removing.is_some() => Ok(Removal::RemovedNotDeleted(error)),
            Err(error) => Err(error),
        }
    }

    /// The runner as the API server has it now (with the fix), or as the snapshot had it (without).
    async fn fresh(&self, runner: &EphemeralRunner) -> Result<Fresh> {
        if !self.ctx.switches.fixes.reread_runner_before_removal {
            return Ok(Fresh::Idle(Box::new(runner.clone())));
        }
        let name = runner.metadata.name.as_deref().unwrap_or_default();
        let namespace = runner.metadata.namespace.as_deref().unwrap_or_default();
        let fresh: Option<EphemeralRunner> = self.ctx.api.get(namespace, name).await?;
        Ok(match fresh {
            None => Fresh::Leaving,
            Some(r) if r.metadata.deletion_timestamp.is_some() => Fresh::Leaving,
            Some(r) if r.is_done() || r.has_job() => Fresh::Busy(Box::new(r)),
            Some(r) => Fresh::Idle(Box::new(r)),
        })
    }

    /// Deletes `runner` only if its resourceVersion is still the one read: an unregistered runner that
    /// registered in the meantime is left for the next reconcile.
    async fn delete_if_unchanged(&self, runner: &EphemeralRunner) -> Result<bool> {
        let name = runner.metadata.name.as_deref().unwrap_or_default();
        let namespace = runner.metadata.namespace.as_deref().unwrap_or_default();
        let preconditions = kube::api::Preconditions {
            uid: None,
            resource_version: runner.metadata.resource_version.clone(),
        };
        let params = DeleteParams::default().preconditions(preconditions);
        match self.ctx.api.delete::<EphemeralRunner>(namespace, name, &params).await {
            Ok(_) => Ok(true),
            Err(error) if is_not_found(&error) || is_conflict(&error) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// Deletes an EphemeralRunner; NotFound (already gone) is success.
    pub(crate) async fn delete_runner(&self, runner: &EphemeralRunner) -> Result<()> {
        let name = runner.metadata.name.as_deref().unwrap_or_default();
        let namespace = runner.metadata.namespace.as_deref().unwrap_or_default();
        tracing::info!(runner = name, "Deleting ephemeral runner");
        match self.ctx.api.delete::<EphemeralRunner>(namespace, name, &DeleteParams::default()).await {
            Err(error) if !is_not_found(&error) => Err(error.into()),
            _ => Ok(()),
        }
    }

    /// Deletes each of `runners` (NotFound ignored), trying all before reporting the first error.
    pub(crate) async fn delete_runners(&self, runners: &[Arc<EphemeralRunner>]) -> Result<()> {
        let mut errors = Vec::new();
        for runner in runners {
            errors.extend(self.delete_runner(runner).await.err());
        }
        combine(errors)
    }
}

/// #4683: a runner whose runner id is not recorded may have a pod already (#4681 creates it first),
/// so set cleanup leaves it instead of removing id 0 and deleting it.
fn leave_unregistered(runner: &EphemeralRunner) -> bool {
    let unregistered = runner.runner_id() == 0;
    if unregistered {
        let name = runner.metadata.name.as_deref().unwrap_or_default();
        tracing::info!(
            runner = name,
            "Leaving ephemeral runner without a runner id for a later cleanup pass"
        );
    }
    unregistered
}

/// Several independent failures as one: every one is logged, the first is returned (its kind is
/// the reason the reconcile-error metric records). ARC combines them with `multierr`.
pub(crate) fn combine(errors: Vec<Error>) -> Result<()> {
    for error in &errors {
        tracing::error!(error = %error, "runner set step failed");
    }
    match errors.into_iter().next() {
        Some(first) => Err(first),
        None => Ok(()),
    }
}
