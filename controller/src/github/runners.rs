//! Runner registration and removal at the Actions service (ARC-MODEL §3.1 step 5, §6.3, §6.4): the
//! calls the EphemeralRunner and EphemeralRunnerSet controllers make.

use http::Method;

use super::client::{ActionsClient, decode};
use super::error::ActionsError;
use super::operation::Operation;
use super::scale_sets::single;
use super::wire::{JitRunnerConfig, JitRunnerSetting, ListResponse, RunnerReference};

const AGENTS: &str = "_apis/distributedtask/pools/0/agents";

impl ActionsClient {
    /// Registers a runner in scale set `scale_set_id` and returns its JIT config. A taken name is
    /// [`ActionsError::AgentExists`].
    pub async fn generate_jit_runner_config(
        &self,
        setting: &JitRunnerSetting,
        scale_set_id: i64,
    ) -> Result<JitRunnerConfig, ActionsError> {
        let op = Operation::GenerateJitConfig;
        self.observe(op, async {
            let path = format!("_apis/runtime/runnerscalesets/{scale_set_id}/generatejitconfig");
            let call = self.service_call(op, Method::POST, &path, &[]).await?.json(setting)?;
            decode(op, &self.exchange(&call, &[200]).await?)
        })
        .await
    }

    /// The runner with id `runner_id`; a missing one is [`ActionsError::RunnerNotFound`] (or
    /// [`ActionsError::NotFound`] if the service gives no exception name).
    pub async fn get_runner(&self, runner_id: i64) -> Result<RunnerReference, ActionsError> {
        let op = Operation::GetRunner;
        self.observe(op, async {
            let call = self.service_call(op, Method::GET, &format!("{AGENTS}/{runner_id}"), &[]).await?;
            decode(op, &self.exchange(&call, &[200]).await?)
        })
        .await
    }

    /// The runner named `name`, or `None`; several is [`ActionsError::Ambiguous`].
    pub async fn get_runner_by_name(&self, name: &str) -> Result<Option<RunnerReference>, ActionsError> {
        let op = Operation::GetRunnerByName;
        self.observe(op, async {
            let call = self.service_call(op, Method::GET, AGENTS, &[("agentName", name)]).await?;
            let list: ListResponse<RunnerReference> = decode(op, &self.exchange(&call, &[200]).await?)?;
            single(op, list, format!("runner {name:?}"))
        })
        .await
    }

    /// Removes runner `runner_id`. 204 is `Ok` (removed, or never existed); a runner with a job is
    /// [`ActionsError::JobStillRunning`]; a service that reports unknown ids answers
    /// [`ActionsError::RunnerNotFound`].
    pub async fn remove_runner(&self, runner_id: i64) -> Result<(), ActionsError> {
        let op = Operation::RemoveRunner;
        self.observe(op, async {
            let call = self.service_call(op, Method::DELETE, &format!("{AGENTS}/{runner_id}"), &[]).await?;
            self.exchange(&call, &[204]).await.map(drop)
        })
        .await
    }
}
