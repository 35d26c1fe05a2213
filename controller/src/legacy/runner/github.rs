//! One Runner's GitHub calls (ARC's `GetRegistrationToken`, `IsRunnerBusy` and `unregisterRunner`),
//! over the client of the Runner's scope, built on first use within a reconcile.
//!
//! `unregister` is #1125's safety step: list the runners; a runner not listed is already gone; one
//! listed busy is left alone ("runner is busy"); otherwise RemoveRunner, which GitHub serialises
//! against job assignment, so a 204 means no job can reach the runner any more and a 422 means one
//! already has.

use tokio::sync::OnceCell;

use super::decision::Registration;
use super::scope::RunnerScope;
use crate::github::ActionsClient;
use crate::github::wire::RegistrationToken;
use crate::kit::error::{Error, Result};
use crate::legacy::context::LegacyContext;

/// What `unregister` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unregistered {
    /// GitHub removed the runner (204).
    Removed,
    /// GitHub does not list the runner (or no longer knows its id): nothing to remove.
    AlreadyGone,
}

/// The GitHub side of one Runner.
pub(crate) struct RunnerGitHub<'a> {
    ctx: &'a LegacyContext,
    config_url: String,
    name: String,
    client: OnceCell<ActionsClient>,
}

impl<'a> RunnerGitHub<'a> {
    /// The runner `name` registered in `scope`, reached with `ctx`'s credentials.
    pub(crate) fn new(ctx: &'a LegacyContext, scope: &RunnerScope, name: &str) -> Self {
        let config_url = scope.config_url(&ctx.settings.pod.github_base_url);
        RunnerGitHub { ctx, config_url, name: name.to_string(), client: OnceCell::new() }
    }

    /// The GitHub config URL of the Runner's scope.
    pub(crate) fn config_url(&self) -> &str {
        &self.config_url
    }

    async fn client(&self) -> Result<&ActionsClient> {
        self.client.get_or_try_init(|| self.ctx.actions_client(&self.config_url)).await
    }

    /// A registration token for the scope, from the cache while it has more than the margin left.
    pub(crate) async fn registration_token(&self) -> Result<RegistrationToken> {
        let client = self.client().await?;
        let now = self.ctx.clock.now();
        let fetch = || client.create_registration_token();
        Ok(self.ctx.tokens.get_or_fetch(&self.config_url, now, fetch).await?)
    }

    /// What the runner list says about this runner.
    pub(crate) async fn registration(&self) -> Result<Registration> {
        let runners = self.client().await?.list_runners().await?;
        Ok(Registration::of(&runners, &self.name))
    }

    /// Removes the runner from GitHub unless it is listed busy. `Err(RunnerBusy)` when listed busy;
    /// a 422 from RemoveRunner (busy after all) is a GitHub error with kind `runner_busy`.
    pub(crate) async fn unregister(&self) -> Result<Unregistered> {
        let client = self.client().await?;
        let runners = client.list_runners().await?;
        let Some(listed) = runners.iter().find(|r| r.name == self.name) else {
            return Ok(Unregistered::AlreadyGone);
        };
        // A runner can stay listed busy after going offline; ARC assumes it still runs a job.
        if listed.busy {
            return Err(Error::RunnerBusy { name: self.name.clone() });
        }
        // ARC (§7 step 9): any 4xx, a 404 included, is an error and the pod is kept. A 404 means the
        // listed id is gone, but the list can be up to 60 s stale: the name may belong to a newer
        // registration (a restarted container's `config.sh --replace`) that is running a job now.
        client.remove_legacy_runner(listed.id).await?;
        Ok(Unregistered::Removed)
    }
}
