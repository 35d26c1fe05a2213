//! Runner groups and runner scale sets (ARC-MODEL §3.3 step 7–8 and deletion): the calls the
//! AutoscalingRunnerSet controller makes.

use http::Method;

use super::client::{ActionsClient, decode};
use super::error::ActionsError;
use super::operation::Operation;
use super::wire::{AcquirableJobList, ListResponse, RunnerGroup, RunnerScaleSet};

const SCALE_SETS: &str = "_apis/runtime/runnerscalesets";

impl ActionsClient {
    /// The runner group named `name`. None found is [`ActionsError::NotFound`], several is
    /// [`ActionsError::Ambiguous`].
    pub async fn get_runner_group_by_name(&self, name: &str) -> Result<RunnerGroup, ActionsError> {
        let op = Operation::GetRunnerGroup;
        self.observe(op, async {
            let call = self
                .service_call(op, Method::GET, "_apis/runtime/runnergroups/", &[("groupName", name)])
                .await?;
            let list: ListResponse<RunnerGroup> = decode(op, &self.exchange(&call, &[200]).await?)?;
            let message = format!("runner group {name:?}");
            single(op, list, message)?.ok_or_else(|| ActionsError::NotFound {
                operation: op,
                message: format!("no runner group found with name {name:?}"),
            })
        })
        .await
    }

    /// The scale set named `name` in group `runner_group_id`, or `None`.
    pub async fn get_runner_scale_set(
        &self,
        runner_group_id: i64,
        name: &str,
    ) -> Result<Option<RunnerScaleSet>, ActionsError> {
        let op = Operation::GetScaleSet;
        self.observe(op, async {
            let group = runner_group_id.to_string();
            let params = [("runnerGroupId", group.as_str()), ("name", name)];
            let call = self.service_call(op, Method::GET, SCALE_SETS, &params).await?;
            let list: ListResponse<RunnerScaleSet> = decode(op, &self.exchange(&call, &[200]).await?)?;
            single(op, list, format!("runner scale set {name:?}"))
        })
        .await
    }

    /// The scale set with id `id`; a missing one is [`ActionsError::NotFound`].
    pub async fn get_runner_scale_set_by_id(&self, id: i64) -> Result<RunnerScaleSet, ActionsError> {
        let op = Operation::GetScaleSet;
        self.observe(op, async {
            let call = self.service_call(op, Method::GET, &format!("{SCALE_SETS}/{id}"), &[]).await?;
            decode(op, &self.exchange(&call, &[200]).await?)
        })
        .await
    }

    /// The request ids of the jobs offered to scale set `id` that nobody has acquired yet (ARC before
    /// 0.8.2 read them when a session opened with available jobs).
    pub async fn get_acquirable_jobs(&self, id: i64) -> Result<Vec<i64>, ActionsError> {
        let op = Operation::GetAcquirableJobs;
        self.observe(op, async {
            let path = format!("{SCALE_SETS}/{id}/acquirablejobs");
            let call = self.service_call(op, Method::GET, &path, &[]).await?;
            let answer = self.exchange(&call, &[200, 204]).await?;
            if answer.status == 204 {
                return Ok(Vec::new());
            }
            let list: AcquirableJobList = decode(op, &answer)?;
            Ok(list.jobs.into_iter().map(|job| job.runner_request_id).collect())
        })
        .await
    }

    /// Creates a scale set (ARC: labels = name + extra labels, `disableUpdate: true`).
    pub async fn create_runner_scale_set(
        &self,
        scale_set: &RunnerScaleSet,
    ) -> Result<RunnerScaleSet, ActionsError> {
        let op = Operation::CreateScaleSet;
        self.observe(op, async {
            let call = self.service_call(op, Method::POST, SCALE_SETS, &[]).await?.json(scale_set)?;
            decode(op, &self.exchange(&call, &[200]).await?)
        })
        .await
    }

    /// Updates scale set `id` with the non-empty fields of `scale_set` (name, group, labels, settings).
    pub async fn update_runner_scale_set(
        &self,
        id: i64,
        scale_set: &RunnerScaleSet,
    ) -> Result<RunnerScaleSet, ActionsError> {
        let op = Operation::UpdateScaleSet;
        self.observe(op, async {
            let call = self
                .service_call(op, Method::PATCH, &format!("{SCALE_SETS}/{id}"), &[])
                .await?
                .json(scale_set)?;
            decode(op, &self.exchange(&call, &[200]).await?)
        })
        .await
    }

    /// Deletes scale set `id` (204).
    pub async fn delete_runner_scale_set(&self, id: i64) -> Result<(), ActionsError> {
        let op = Operation::DeleteScaleSet;
        self.observe(op, async {
            let call = self.service_call(op, Method::DELETE, &format!("{SCALE_SETS}/{id}"), &[]).await?;
            self.exchange(&call, &[204]).await.map(drop)
        })
        .await
    }
}

/// The only item of a list, `None` for an empty list, [`ActionsError::Ambiguous`] for several.
pub(crate) fn single<T>(
    op: Operation,
    list: ListResponse<T>,
    what: String,
) -> Result<Option<T>, ActionsError> {
    let ListResponse { count, mut value } = list;
    match (count, value.len()) {
        (0, _) | (_, 0) => Ok(None),
        (1, 1) => Ok(value.pop()),
        _ => Err(ActionsError::Ambiguous { operation: op, message: format!("several matches for {what}") }),
    }
}
