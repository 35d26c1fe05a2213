//! Job messages: the entries of a message's `body`, a JSON array carried as a string, each tagged by
//! `messageType` (`JobAvailable`, `JobAssigned`, `JobStarted`, `JobCompleted`).
//!
//! Every entry carries the common job fields; the Go clients declare them without `omitempty`, so
//! all of them are always present, and a time the job has not reached yet is Go's zero time
//! (`0001-01-01T00:00:00Z`).

use jiff::Timestamp;
use serde::Serialize;

/// Go's zero `time.Time`, as it marshals: the value of a time that is not set.
const GO_ZERO_TIME: Timestamp = Timestamp::constant(-62_135_596_800, 0);

/// The fields every job message carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobFields {
    /// The runner request id: the id AcquireJobs takes.
    pub runner_request_id: i64,
    pub repository_name: String,
    pub owner_name: String,
    /// The job id (a string on the wire).
    pub job_id: String,
    pub job_workflow_ref: String,
    pub job_display_name: String,
    pub workflow_run_id: i64,
    pub event_name: String,
    /// The job's `runs-on` labels.
    pub request_labels: Vec<String>,
    pub queue_time: Timestamp,
    pub scale_set_assign_time: Timestamp,
    pub runner_assign_time: Timestamp,
    pub finish_time: Timestamp,
}

impl JobFields {
    /// A time for the wire: `at`, or Go's zero time when it has not happened.
    pub(super) fn time(at: Option<Timestamp>) -> Timestamp {
        at.unwrap_or(GO_ZERO_TIME)
    }
}

/// One entry of a message body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "messageType")]
pub(crate) enum JobMessage {
    /// A job offered to the scale set; `acquireJobUrl` acquires this one job.
    #[serde(rename = "JobAvailable")]
    Available {
        #[serde(rename = "acquireJobUrl")]
        acquire_job_url: String,
        #[serde(flatten)]
        job: JobFields,
    },
    /// A job the scale set acquired.
    #[serde(rename = "JobAssigned")]
    Assigned {
        #[serde(flatten)]
        job: JobFields,
    },
    /// A job that started on a runner of the scale set.
    #[serde(rename = "JobStarted")]
    Started {
        #[serde(rename = "runnerId")]
        runner_id: i64,
        #[serde(rename = "runnerName")]
        runner_name: String,
        #[serde(flatten)]
        job: JobFields,
    },
    /// A job that ended: `result` is `succeeded`, `failed` or `canceled`; the runner is 0 and `""`
    /// when it never ran.
    #[serde(rename = "JobCompleted")]
    Completed {
        result: String,
        #[serde(rename = "runnerId")]
        runner_id: i64,
        #[serde(rename = "runnerName")]
        runner_name: String,
        #[serde(flatten)]
        job: JobFields,
    },
}

impl JobMessage {
    /// The request id a JobAvailable offers (`None` for the other kinds).
    pub(super) fn available_request_id(&self) -> Option<i64> {
        match self {
            JobMessage::Available { job, .. } => Some(job.runner_request_id),
            _ => None,
        }
    }

    /// A batch as a message body: a JSON array, as a string.
    pub(super) fn encode_batch(batch: &[JobMessage]) -> String {
        serde_json::to_string(batch).expect("job messages always serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> JobFields {
        JobFields {
            runner_request_id: 7,
            repository_name: "app".into(),
            owner_name: "arcsim".into(),
            job_id: "j".into(),
            job_workflow_ref: "arcsim/app/.github/workflows/ci.yml@refs/heads/main".into(),
            job_display_name: "build".into(),
            workflow_run_id: 10_007,
            event_name: "push".into(),
            request_labels: vec!["arc".into()],
            queue_time: JobFields::time(Some(Timestamp::constant(1_767_225_600, 0))),
            scale_set_assign_time: JobFields::time(None),
            runner_assign_time: JobFields::time(None),
            finish_time: JobFields::time(None),
        }
    }

    #[test]
    fn a_batch_is_a_string_holding_tagged_entries_with_every_common_field() {
        let body = JobMessage::encode_batch(&[JobMessage::Started {
            runner_id: 3,
            runner_name: "r".into(),
            job: fields(),
        }]);
        let parsed: serde_json::Value = serde_json::from_str(&body).unwrap();
        let started = &parsed[0];
        assert_eq!(started["messageType"], "JobStarted");
        assert_eq!(started["runnerId"], 3);
        assert_eq!(started["runnerRequestId"], 7);
        assert_eq!(started["queueTime"], "2026-01-01T00:00:00Z");
        assert_eq!(started["finishTime"], "0001-01-01T00:00:00Z");
        assert_eq!(started.as_object().unwrap().len(), 16);
    }
}
