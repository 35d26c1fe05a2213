//! Message sessions and the message queue (ARC-MODEL §4.1, §6.5): what the listener calls.
//!
//! Session calls use the admin token. The queue calls (GetMessage, DeleteMessage, AcquireJobs) use the
//! session's queue token, and a 401 on them is [`ActionsError::QueueTokenExpired`]: the listener
//! refreshes the session and retries once.

use http::Method;

use super::client::{ActionsClient, decode, join_path, with_query};
use super::error::ActionsError;
use super::operation::Operation;
use super::wire::{
    API_VERSION, HEADER_SCALE_SET_MAX_CAPACITY, Int64List, RunnerScaleSetMessage, RunnerScaleSetSession,
};

fn sessions_path(scale_set_id: i64) -> String {
    format!("_apis/runtime/runnerscalesets/{scale_set_id}/sessions")
}

impl ActionsClient {
    /// Opens the scale set's message session; 409 (another session open) is
    /// [`ActionsError::SessionConflict`].
    pub async fn create_message_session(
        &self,
        scale_set_id: i64,
        owner: &str,
    ) -> Result<RunnerScaleSetSession, ActionsError> {
        let op = Operation::CreateSession;
        self.observe(op, async {
            let body =
                RunnerScaleSetSession { owner_name: owner.to_string(), ..RunnerScaleSetSession::default() };
            let call =
                self.service_call(op, Method::POST, &sessions_path(scale_set_id), &[]).await?.json(&body)?;
            decode(op, &self.exchange(&call, &[200]).await?)
        })
        .await
    }

    /// Refreshes the session: a new queue token and current statistics.
    pub async fn refresh_message_session(
        &self,
        scale_set_id: i64,
        session_id: &str,
    ) -> Result<RunnerScaleSetSession, ActionsError> {
        let op = Operation::RefreshSession;
        self.observe(op, async {
            let path = format!("{}/{session_id}", sessions_path(scale_set_id));
            let call = self.service_call(op, Method::PATCH, &path, &[]).await?;
            decode(op, &self.exchange(&call, &[200]).await?)
        })
        .await
    }

    /// Closes the session (204).
    pub async fn delete_message_session(
        &self,
        scale_set_id: i64,
        session_id: &str,
    ) -> Result<(), ActionsError> {
        let op = Operation::DeleteSession;
        self.observe(op, async {
            let path = format!("{}/{session_id}", sessions_path(scale_set_id));
            let call = self.service_call(op, Method::DELETE, &path, &[]).await?;
            self.exchange(&call, &[204]).await.map(drop)
        })
        .await
    }

    /// Long-polls the queue for the next message after `last_message_id` (0: from the start).
    /// `Ok(None)` is the 202 "nothing arrived". `max_capacity` goes in `X-ScaleSetMaxCapacity`.
    pub async fn get_message(
        &self,
        message_queue_url: &str,
        queue_token: &str,
        last_message_id: i64,
        max_capacity: u32,
    ) -> Result<Option<RunnerScaleSetMessage>, ActionsError> {
        let op = Operation::GetMessage;
        self.observe(op, async {
            let last = last_message_id.to_string();
            let params: &[(&str, &str)] = if last_message_id > 0 { &[("lastMessageId", &last)] } else { &[] };
            let url = with_query(message_queue_url, params);
            let call = self
                .queue_call(op, Method::GET, url, queue_token)?
                .header(http::header::ACCEPT, &format!("application/json; api-version={API_VERSION}"))?
                .header(HEADER_SCALE_SET_MAX_CAPACITY, &max_capacity.to_string())?;
            let answer = self.exchange(&call, &[200, 202]).await?;
            if answer.status == 202 {
                return Ok(None);
            }
            decode(op, &answer).map(Some)
        })
        .await
    }

    /// Acknowledges (deletes) message `message_id` (204).
    pub async fn delete_message(
        &self,
        message_queue_url: &str,
        queue_token: &str,
        message_id: i64,
    ) -> Result<(), ActionsError> {
        let op = Operation::DeleteMessage;
        self.observe(op, async {
            let (path, query) = message_queue_url.split_once('?').unwrap_or((message_queue_url, ""));
            let mut url = join_path(path, &message_id.to_string());
            if !query.is_empty() {
                url = format!("{url}?{query}");
            }
            let call = self
                .queue_call(op, Method::DELETE, url, queue_token)?
                .header(http::header::CONTENT_TYPE, "application/json")?;
            self.exchange(&call, &[204]).await.map(drop)
        })
        .await
    }

    /// Acquires the jobs `request_ids` for the scale set; returns the ids actually acquired.
    pub async fn acquire_jobs(
        &self,
        scale_set_id: i64,
        queue_token: &str,
        request_ids: &[i64],
    ) -> Result<Vec<i64>, ActionsError> {
        let op = Operation::AcquireJobs;
        self.observe(op, async {
            let admin = self.admin_session().await?;
            let path = format!("_apis/runtime/runnerscalesets/{scale_set_id}/acquirejobs");
            let url = with_query(&join_path(&admin.service_url, &path), &[("api-version", API_VERSION)]);
            let call = self.queue_call(op, Method::POST, url, queue_token)?.json(&request_ids)?;
            let acquired: Int64List = decode(op, &self.exchange(&call, &[200]).await?)?;
            Ok(acquired.value)
        })
        .await
    }
}
