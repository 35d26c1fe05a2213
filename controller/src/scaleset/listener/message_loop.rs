//! The message loop (ARC-MODEL §4.1, \[SS\] `listener.Run`): the initial scaling from the session's
//! statistics, then long polls until cancelled.
//!
//! A 202 (no message) scales from the latest statistics; with `fixes.reread_statistics_when_quiet`
//! it first reads them afresh (GetRunnerScaleSet), so a message's stale `totalAssignedJobs` does
//! not hold runners up for as long as no other message comes (#4397). A message is handled in \[SS\] order:
//! record its statistics, acknowledge it (DeleteMessage), AcquireJobs for the JobAvailable ones,
//! HandleJobStarted for each JobStarted, HandleJobCompleted for each JobCompleted (both mark the
//! scaler dirty, as ARC's scaler does), then HandleDesiredRunnerCount from the message's
//! `totalAssignedJobs`; with `fixes.acquire_before_ack` AcquireJobs comes before the acknowledgement,
//! so a listener that dies between them leaves the message to be redelivered. JobAssigned messages
//! are only logged. Only the long poll is interrupted by
//! cancellation; a message once received is handled to the end (ARC: `context.WithoutCancel`). Any
//! error ends the loop.
//!
//! With the 0.13 worker (`releases.scaleset_listener` off) the loop is 0.13.1's `Listen`: a 202 is
//! an empty batch (`HandleDesiredRunnerCount(0, 0)`), and a message is handled as AcquireJobs,
//! then DeleteMessage, then HandleJobStarted for each, then HandleDesiredRunnerCount with the
//! message's `totalAssignedJobs` and its number of completions.

use tokio_util::sync::CancellationToken;

use super::desired_count::DesiredCount;
use super::error::ListenerError;
use super::job_handlers::JobHandlers;
use super::session::MessageSession;
use crate::github::job_messages::{JobAvailable, JobCompleted, JobMessage, JobStarted};
use crate::github::wire::{MESSAGE_TYPE_JOB_MESSAGES, RunnerScaleSetMessage, RunnerScaleSetStatistic};

/// A message taken apart as the listener handles it.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedMessage {
    /// The message id.
    pub message_id: i64,
    /// Its statistics.
    pub statistics: RunnerScaleSetStatistic,
    /// JobAvailable entries, in order.
    pub available: Vec<JobAvailable>,
    /// JobStarted entries, in order.
    pub started: Vec<JobStarted>,
    /// JobCompleted entries, in order.
    pub completed: Vec<JobCompleted>,
    /// How many JobAssigned entries there were (logged only).
    pub assigned: usize,
}

/// Checks a message's type and statistics and sorts its job messages by type. Unknown job message
/// types are skipped, as ARC skips them.
pub fn parse_message(message: &RunnerScaleSetMessage) -> Result<ParsedMessage, ListenerError> {
    let message_id = message.message_id;
    if message.message_type != MESSAGE_TYPE_JOB_MESSAGES {
        let message_type = message.message_type.clone();
        return Err(ListenerError::UnsupportedMessage { message_id, message_type });
    }
    let statistics = message
        .statistics
        .ok_or_else(|| ListenerError::MissingStatistics { what: format!("message {message_id}") })?;
    let batch = JobMessage::parse_batch(&message.body)
        .map_err(|source| ListenerError::MalformedMessage { message_id, source })?;
    let mut parsed = ParsedMessage {
        message_id,
        statistics,
        available: Vec::new(),
        started: Vec::new(),
        completed: Vec::new(),
        assigned: 0,
    };
    for job in batch {
        match job {
            JobMessage::Available(m) => parsed.available.push(m),
            JobMessage::Assigned(_) => parsed.assigned += 1,
            JobMessage::Started(m) => parsed.started.push(m),
            JobMessage::Completed(m) => parsed.completed.push(m),
            JobMessage::Unknown { message_type } => {
                tracing::info!(message_id, %message_type, "skipping a job message of unknown type");
            }
        }
    }
    Ok(parsed)
}

/// The loop's state between messages.
#[derive(Debug)]
pub struct MessageLoop<'s> {
    session: &'s mut MessageSession,
    desired: DesiredCount,
    jobs: JobHandlers,
    max_capacity: u32,
    last_message_id: i64,
    latest_statistics: RunnerScaleSetStatistic,
    exit_when_poll_fails: bool,
    acquire_before_ack: bool,
    reread_statistics_when_quiet: bool,
    acquire_acquirable_on_open: bool,
}

impl<'s> MessageLoop<'s> {
    /// A loop over the open `session`, starting from the session's `statistics`;
    /// `acquire_before_ack` (`fixes.acquire_before_ack`) acquires a message's jobs before
    /// acknowledging it in the \[SS\] order too.
    pub fn new(
        session: &'s mut MessageSession,
        desired: DesiredCount,
        jobs: JobHandlers,
        max_capacity: u32,
        statistics: RunnerScaleSetStatistic,
        acquire_before_ack: bool,
    ) -> Self {
        MessageLoop {
            session,
            desired,
            jobs,
            max_capacity,
            last_message_id: 0,
            latest_statistics: statistics,
            exit_when_poll_fails: true,
            acquire_before_ack,
            reread_statistics_when_quiet: false,
            acquire_acquirable_on_open: false,
        }
    }

    /// Whether a session that opens with available jobs acquires those nobody has acquired
    /// (`fixes.acquire_acquirable_jobs_on_open`; off: only what messages offer).
    pub fn acquire_acquirable_on_open(self, acquire: bool) -> Self {
        MessageLoop { acquire_acquirable_on_open: acquire, ..self }
    }

    /// Whether a 202 reads the scale set's statistics afresh before scaling from them
    /// (`fixes.reread_statistics_when_quiet`; off: the message's, however old).
    pub fn reread_statistics_when_quiet(self, reread: bool) -> Self {
        MessageLoop { reread_statistics_when_quiet: reread, ..self }
    }

    /// Whether a long poll that fails for want of an answer ends the loop (`fixes.listener_exits_when_poll_fails`;
    /// on by default). Off: the loop waits for `cancel` instead, a zombie.
    pub fn exit_when_poll_fails(self, exit: bool) -> Self {
        MessageLoop { exit_when_poll_fails: exit, ..self }
    }

    /// Scales from the session's statistics, then polls and handles messages until `cancel` fires
    /// (`Ok`) or a step fails (`Err`).
    pub async fn run(mut self, cancel: &CancellationToken) -> Result<(), ListenerError> {
        let initial = self.latest_statistics.total_assigned_jobs;
        tracing::info!(assigned_jobs = initial, "handling the session's initial statistics");
        self.desired.handle(initial, 0).await?;
        self.acquire_acquirable().await?;
        while !cancel.is_cancelled() {
            tracing::info!(last_message_id = self.last_message_id, "getting the next message");
            let polled = tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                polled = self.session.get_message(self.last_message_id, self.max_capacity) => polled,
            };
            let polled = match polled {
                Err(error) if error.is_transport() && !self.exit_when_poll_fails => {
                    tracing::warn!(%error, "the long poll got no answer; waiting to be stopped");
                    cancel.cancelled().await;
                    break;
                }
                polled => polled?,
            };
            match polled {
                None if self.desired.is_worker() => {
                    tracing::info!("no message; an empty batch");
                    self.desired.handle(0, 0).await?;
                }
                None => {
                    self.reread_statistics().await;
                    tracing::info!("no message; scaling from the latest statistics");
                    self.desired.handle(self.latest_statistics.total_assigned_jobs, 0).await?;
                }
                Some(message) => {
                    self.last_message_id = message.message_id;
                    self.handle_message(&message).await?;
                }
            }
        }
        tracing::info!("message loop cancelled");
        Ok(())
    }

    /// With `reread_statistics_when_quiet`, takes the scale set's statistics as the service has them
    /// now; a failed read keeps the latest (logged), since a quiet poll is no reason to stop.
    async fn reread_statistics(&mut self) {
        if !self.reread_statistics_when_quiet {
            return;
        }
        match self.session.scale_set_statistics().await {
            Ok(Some(statistics)) => self.latest_statistics = statistics,
            Ok(None) => tracing::warn!("the scale set came without statistics; keeping the latest"),
            Err(error) => {
                tracing::warn!(%error, "cannot read the scale set's statistics; keeping the latest")
            }
        }
    }

    async fn handle_message(&mut self, message: &RunnerScaleSetMessage) -> Result<(), ListenerError> {
        let parsed = parse_message(message)?;
        tracing::info!(
            message_id = parsed.message_id,
            available = parsed.available.len(),
            assigned = parsed.assigned,
            started = parsed.started.len(),
            completed = parsed.completed.len(),
            statistics = ?parsed.statistics,
            "handling a message"
        );
        self.latest_statistics = parsed.statistics;
        if self.desired.is_worker() || self.acquire_before_ack {
            self.acquire_available(&parsed.available).await?;
            self.session.delete_message(parsed.message_id).await?;
        } else {
            self.session.delete_message(parsed.message_id).await?;
            self.acquire_available(&parsed.available).await?;
        }
        for job in &parsed.started {
            self.desired.mark_dirty();
            self.jobs.job_started(job).await?;
        }
        for job in &parsed.completed {
            self.desired.mark_dirty();
            self.jobs.job_completed(job);
        }
        let completed = parsed.completed.len();
        self.desired.handle(parsed.statistics.total_assigned_jobs, completed).await?;
        Ok(())
    }

    /// With `acquire_acquirable_on_open` and available jobs in the session's statistics, acquires
    /// the jobs nobody has acquired: offers a dead listener received and never acknowledged may be
    /// gone (assumption `unacknowledged-messages=dropped`, #4027), so the offers alone cannot be
    /// trusted to arrive (ARC up to 0.8.1 did this with `GetAcquirableJobs`).
    async fn acquire_acquirable(&mut self) -> Result<(), ListenerError> {
        if !self.acquire_acquirable_on_open || self.latest_statistics.total_available_jobs <= 0 {
            return Ok(());
        }
        let ids = self.session.acquirable_jobs().await.map_err(ListenerError::Queue)?;
        tracing::info!(?ids, "acquirable jobs when the session opened");
        self.acquire_ids(&ids).await
    }

    async fn acquire_available(&mut self, available: &[JobAvailable]) -> Result<(), ListenerError> {
        let ids: Vec<i64> = available.iter().map(|job| job.base.runner_request_id).collect();
        self.acquire_ids(&ids).await
    }

    async fn acquire_ids(&mut self, ids: &[i64]) -> Result<(), ListenerError> {
        if ids.is_empty() {
            return Ok(());
        }
        tracing::info!(?ids, "acquiring jobs");
        let acquired = self.session.acquire_jobs(ids).await?;
        tracing::info!(?acquired, "jobs acquired");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(message_type: &str, body: serde_json::Value, assigned: Option<i64>) -> RunnerScaleSetMessage {
        RunnerScaleSetMessage {
            message_id: 5,
            message_type: message_type.into(),
            body: body.to_string(),
            statistics: assigned.map(|total_assigned_jobs| RunnerScaleSetStatistic {
                total_assigned_jobs,
                ..RunnerScaleSetStatistic::default()
            }),
        }
    }

    #[test]
    fn a_batch_is_sorted_by_job_message_type_in_order() {
        let body = json!([
            {"messageType": "JobAvailable", "runnerRequestId": 1, "acquireJobUrl": "u"},
            {"messageType": "JobAvailable", "runnerRequestId": 2, "acquireJobUrl": "u"},
            {"messageType": "JobAssigned", "runnerRequestId": 1},
            {"messageType": "JobStarted", "runnerRequestId": 3, "runnerId": 7, "runnerName": "r-7"},
            {"messageType": "JobCompleted", "runnerRequestId": 4, "result": "succeeded",
             "runnerId": 8, "runnerName": "r-8"},
            {"messageType": "SomethingNew"}
        ]);
        let parsed = parse_message(&message(MESSAGE_TYPE_JOB_MESSAGES, body, Some(3))).unwrap();
        let available: Vec<i64> = parsed.available.iter().map(|m| m.base.runner_request_id).collect();
        assert_eq!(available, [1, 2]);
        assert_eq!(parsed.assigned, 1);
        assert_eq!(parsed.started[0].runner_name, "r-7");
        assert_eq!(parsed.completed[0].result, "succeeded");
        assert_eq!((parsed.message_id, parsed.statistics.total_assigned_jobs), (5, 3));
    }

    #[test]
    fn an_empty_body_is_an_empty_batch() {
        let mut empty = message(MESSAGE_TYPE_JOB_MESSAGES, json!(null), Some(0));
        empty.body.clear();
        let parsed = parse_message(&empty).unwrap();
        assert!(parsed.available.is_empty() && parsed.started.is_empty() && parsed.completed.is_empty());
    }

    #[test]
    fn a_message_of_another_type_is_refused() {
        let error = parse_message(&message("SomethingElse", json!([]), Some(0))).unwrap_err();
        assert!(matches!(error, ListenerError::UnsupportedMessage { message_id: 5, .. }), "{error}");
    }

    #[test]
    fn a_message_without_statistics_is_refused() {
        let error = parse_message(&message(MESSAGE_TYPE_JOB_MESSAGES, json!([]), None)).unwrap_err();
        assert_eq!(error.to_string(), "message 5 carries no statistics");
    }

    #[test]
    fn a_body_that_is_not_a_batch_is_refused() {
        let error = parse_message(&message(MESSAGE_TYPE_JOB_MESSAGES, json!({"x": 1}), Some(0))).unwrap_err();
        assert!(matches!(error, ListenerError::MalformedMessage { message_id: 5, .. }), "{error}");
    }
}
