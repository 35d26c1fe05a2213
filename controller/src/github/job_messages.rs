//! Job messages: the entries of a message body (a JSON array carried as a string), each tagged by
//! `messageType` (ARC-MODEL §4.1).
//!
//! [`JobMessage::parse_batch`] decodes a body the way ARC's listener does: known types into their
//! structs, unknown types kept by name and otherwise ignored.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// `messageType` of a job offered to the scale set.
pub const JOB_AVAILABLE: &str = "JobAvailable";
/// `messageType` of a job acquired by the scale set.
pub const JOB_ASSIGNED: &str = "JobAssigned";
/// `messageType` of a job that started on a runner.
pub const JOB_STARTED: &str = "JobStarted";
/// `messageType` of a job that finished.
pub const JOB_COMPLETED: &str = "JobCompleted";

/// The fields every job message carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobMessageBase {
    /// One of the `JOB_*` constants.
    pub message_type: String,
    /// The runner request id: the id AcquireJobs takes.
    #[serde(default)]
    pub runner_request_id: i64,
    /// Repository name (without owner).
    #[serde(default)]
    pub repository_name: String,
    /// Repository owner.
    #[serde(default)]
    pub owner_name: String,
    /// Job id (a string).
    #[serde(default)]
    pub job_id: String,
    /// Workflow ref.
    #[serde(default)]
    pub job_workflow_ref: String,
    /// Display name.
    #[serde(default)]
    pub job_display_name: String,
    /// Workflow run id.
    #[serde(default)]
    pub workflow_run_id: i64,
    /// Triggering event.
    #[serde(default)]
    pub event_name: String,
    /// `runs-on` labels.
    #[serde(default)]
    pub request_labels: Vec<String>,
    /// When the job was queued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_time: Option<Timestamp>,
    /// When a scale set acquired it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_set_assign_time: Option<Timestamp>,
    /// When a runner got it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_assign_time: Option<Timestamp>,
    /// When it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_time: Option<Timestamp>,
}

/// A job offered to the scale set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobAvailable {
    /// URL to acquire this one job.
    #[serde(default)]
    pub acquire_job_url: String,
    /// Common fields.
    #[serde(flatten)]
    pub base: JobMessageBase,
}

/// A job acquired by the scale set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobAssigned {
    /// Common fields.
    #[serde(flatten)]
    pub base: JobMessageBase,
}

/// A job that started on a runner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobStarted {
    /// The runner.
    pub runner_id: i64,
    /// The runner's name (ARC: the EphemeralRunner's name).
    pub runner_name: String,
    /// Common fields.
    #[serde(flatten)]
    pub base: JobMessageBase,
}

/// A job that finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobCompleted {
    /// `succeeded`, `failed` or `canceled`.
    pub result: String,
    /// The runner (0 when it never ran).
    #[serde(default)]
    pub runner_id: i64,
    /// The runner's name (empty when it never ran).
    #[serde(default)]
    pub runner_name: String,
    /// Common fields.
    #[serde(flatten)]
    pub base: JobMessageBase,
}

/// One entry of a message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobMessage {
    /// [`JOB_AVAILABLE`].
    Available(JobAvailable),
    /// [`JOB_ASSIGNED`].
    Assigned(JobAssigned),
    /// [`JOB_STARTED`].
    Started(JobStarted),
    /// [`JOB_COMPLETED`].
    Completed(JobCompleted),
    /// A type this client does not know; ARC ignores these.
    Unknown {
        /// Its `messageType`.
        message_type: String,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TypeOnly {
    #[serde(default)]
    message_type: String,
}

impl JobMessage {
    /// Decodes a message body: a JSON array of job messages. An empty body is an empty batch.
    pub fn parse_batch(body: &str) -> Result<Vec<JobMessage>, serde_json::Error> {
        if body.trim().is_empty() {
            return Ok(Vec::new());
        }
        let raw: Vec<serde_json::Value> = serde_json::from_str(body)?;
        raw.into_iter().map(JobMessage::from_value).collect()
    }

    fn from_value(value: serde_json::Value) -> Result<JobMessage, serde_json::Error> {
        let TypeOnly { message_type } = serde_json::from_value(value.clone())?;
        Ok(match message_type.as_str() {
            JOB_AVAILABLE => JobMessage::Available(serde_json::from_value(value)?),
            JOB_ASSIGNED => JobMessage::Assigned(serde_json::from_value(value)?),
            JOB_STARTED => JobMessage::Started(serde_json::from_value(value)?),
            JOB_COMPLETED => JobMessage::Completed(serde_json::from_value(value)?),
            _ => JobMessage::Unknown { message_type },
        })
    }

    /// Encodes a batch as a message body string.
    pub fn encode_batch(batch: &[JobMessage]) -> String {
        let values: Vec<serde_json::Value> = batch.iter().filter_map(JobMessage::to_value).collect();
        serde_json::Value::Array(values).to_string()
    }

    fn to_value(&self) -> Option<serde_json::Value> {
        let value = match self {
            JobMessage::Available(m) => serde_json::to_value(m),
            JobMessage::Assigned(m) => serde_json::to_value(m),
            JobMessage::Started(m) => serde_json::to_value(m),
            JobMessage::Completed(m) => serde_json::to_value(m),
            JobMessage::Unknown { .. } => return None,
        };
        Some(value.expect("job messages always serialise"))
    }

    /// The common fields, for the known types.
    pub fn base(&self) -> Option<&JobMessageBase> {
        match self {
            JobMessage::Available(m) => Some(&m.base),
            JobMessage::Assigned(m) => Some(&m.base),
            JobMessage::Started(m) => Some(&m.base),
            JobMessage::Completed(m) => Some(&m.base),
            JobMessage::Unknown { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_decodes_each_type_and_keeps_unknown_ones_by_name() {
        let body = r#"[
          {"messageType":"JobAvailable","acquireJobUrl":"u","runnerRequestId":1,"requestLabels":["arc"],
           "queueTime":"2026-01-01T00:00:00Z"},
          {"messageType":"JobAssigned","runnerRequestId":1},
          {"messageType":"JobStarted","runnerRequestId":1,"runnerId":7,"runnerName":"r-1","jobId":"j"},
          {"messageType":"JobCompleted","runnerRequestId":1,"result":"succeeded","runnerId":7,"runnerName":"r-1"},
          {"messageType":"SomethingNew","x":1}
        ]"#;
        let batch = JobMessage::parse_batch(body).unwrap();
        assert_eq!(batch.len(), 5);
        assert!(matches!(&batch[0], JobMessage::Available(m) if m.acquire_job_url == "u"
            && m.base.request_labels == ["arc"] && m.base.queue_time.is_some()));
        assert!(matches!(&batch[2], JobMessage::Started(m) if m.runner_id == 7 && m.base.job_id == "j"));
        assert!(matches!(&batch[3], JobMessage::Completed(m) if m.result == "succeeded"));
        assert_eq!(batch[4], JobMessage::Unknown { message_type: "SomethingNew".into() });
    }

    #[test]
    fn encoding_then_parsing_a_batch_round_trips() {
        let started = JobMessage::Started(JobStarted {
            runner_id: 3,
            runner_name: "r".into(),
            base: JobMessageBase {
                message_type: JOB_STARTED.into(),
                runner_request_id: 11,
                ..JobMessageBase::default()
            },
        });
        let body = JobMessage::encode_batch(std::slice::from_ref(&started));
        assert!(body.contains(r#""messageType":"JobStarted""#), "{body}");
        assert_eq!(JobMessage::parse_batch(&body).unwrap(), vec![started]);
        assert_eq!(JobMessage::parse_batch("").unwrap(), vec![]);
        assert!(JobMessage::parse_batch("{not json").is_err());
    }
}
