//! The JSON bodies of the Actions service and the GitHub REST API, field for field as ARC's Go client
//! (`github/actions/types.go`, gha-runner-scale-set-0.13.1; `actions/scaleset` `types.go`) and
//! go-github speak them.
//!
//! These types are `pub` for the client's callers. The wire format itself is pinned by the golden
//! cases in the workspace's `fixtures/github/`, which `tests/github_wire` plays against this client.
//! Job messages, which travel as a JSON string inside a message, are in [`super::job_messages`].
//! Go's `omitempty` is mirrored with `skip_serializing_if`, and missing fields decode to defaults as
//! Go's decoder leaves them zero.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// `api-version` query value every Actions service call carries.
pub const API_VERSION: &str = "6.0-preview";
/// Request header carrying the listener's maximum capacity on GetMessage.
pub const HEADER_SCALE_SET_MAX_CAPACITY: &str = "X-ScaleSetMaxCapacity";
/// Response header with the Actions service's activity id.
pub const HEADER_ACTIVITY_ID: &str = "ActivityId";
/// Response header with GitHub's REST request id.
pub const HEADER_GITHUB_REQUEST_ID: &str = "X-GitHub-Request-Id";
/// `messageType` of a message whose body is a batch of job messages.
pub const MESSAGE_TYPE_JOB_MESSAGES: &str = "RunnerScaleSetJobMessages";
/// `runner_event` of the admin-token exchange.
pub const RUNNER_EVENT_REGISTER: &str = "register";

fn is_zero(n: &i64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The Actions service's list envelope: `{"count": n, "value": [...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListResponse<T> {
    /// Number of items.
    #[serde(default)]
    pub count: i64,
    /// The items.
    #[serde(default = "Vec::new")]
    pub value: Vec<T>,
}

impl<T> ListResponse<T> {
    /// A list holding `value`, with its count.
    pub fn of(value: Vec<T>) -> Self {
        ListResponse { count: i64::try_from(value.len()).unwrap_or(i64::MAX), value }
    }
}

/// An Actions service error body. REST error bodies have only `message`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// The .NET exception type name, e.g. `GitHub.DistributedTask.WebApi.AgentExistsException`.
    #[serde(rename = "typeName", default, skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A runner label: `{"type": "System", "name": "linux"}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Label {
    /// `System` for labels ARC sets; `User` otherwise.
    #[serde(rename = "type")]
    pub kind: String,
    /// The label text.
    pub name: String,
}

impl Label {
    /// A `System` label, as ARC creates them.
    pub fn system(name: impl Into<String>) -> Self {
        Label { kind: "System".into(), name: name.into() }
    }
}

/// A runner group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerGroup {
    /// Group id; the default group is 1.
    pub id: i64,
    /// Group name.
    pub name: String,
    /// Number of runners in it.
    #[serde(default)]
    pub size: i64,
    /// Whether it is the default group.
    #[serde(rename = "isDefaultGroup", default)]
    pub is_default: bool,
}

/// Runner settings of a scale set. Go marshals this struct even when empty (`"RunnerSetting":{}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerSetting {
    /// Runners are ephemeral.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ephemeral: bool,
    /// Runners are elastic.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_elastic: bool,
    /// Runners must not self-update (ARC sets this).
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_update: bool,
}

/// A runner scale set, as created, read and updated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerScaleSet {
    /// Id (absent on create).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub id: i64,
    /// Name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Runner group id.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub runner_group_id: i64,
    /// Runner group name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub runner_group_name: String,
    /// Labels jobs are matched against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    /// Runner settings (the JSON key is capitalised, as in ARC's client).
    #[serde(rename = "RunnerSetting", default)]
    pub runner_setting: RunnerSetting,
    /// Creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_on: Option<Timestamp>,
    /// URL of the JIT config endpoint.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub runner_jit_config_url: String,
    /// Current statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics: Option<RunnerScaleSetStatistic>,
}

/// Body of GenerateJitRunnerConfig.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JitRunnerSetting {
    /// Runner name (ARC: the EphemeralRunner's name).
    pub name: String,
    /// Work folder (ARC: the runner container's workingDir).
    #[serde(default)]
    pub work_folder: String,
}

/// A registered runner as the Actions service describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerReference {
    /// Runner id.
    pub id: i64,
    /// Runner name.
    pub name: String,
    /// The scale set it belongs to (0 for none).
    #[serde(default)]
    pub runner_scale_set_id: i64,
}

/// Answer of GenerateJitRunnerConfig.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JitRunnerConfig {
    /// The runner just registered.
    pub runner: RunnerReference,
    /// The opaque config the runner process starts with (`ACTIONS_RUNNER_INPUT_JITCONFIG`).
    #[serde(rename = "encodedJITConfig")]
    pub encoded_jit_config: String,
}

/// The statistics attached to every message and session (ARC-MODEL §4.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerScaleSetStatistic {
    /// Jobs offered to the scale set and not yet acquired.
    #[serde(default)]
    pub total_available_jobs: i64,
    /// Jobs acquired by the scale set and not yet assigned to a runner.
    #[serde(default)]
    pub total_acquired_jobs: i64,
    /// Jobs acquired by the scale set and not completed (waiting or running).
    #[serde(default)]
    pub total_assigned_jobs: i64,
    /// Jobs running on a runner of the scale set.
    #[serde(default)]
    pub total_running_jobs: i64,
    /// Registered runners.
    #[serde(default)]
    pub total_registered_runners: i64,
    /// Runners with a job.
    #[serde(default)]
    pub total_busy_runners: i64,
    /// Online runners without a job.
    #[serde(default)]
    pub total_idle_runners: i64,
}

/// A message session of one listener.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerScaleSetSession {
    /// Session id (a UUID).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub session_id: String,
    /// Who opened it (ARC: the listener's hostname).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub owner_name: String,
    /// The scale set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_scale_set: Option<RunnerScaleSet>,
    /// Where to long-poll for messages.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message_queue_url: String,
    /// Bearer token for the queue and AcquireJobs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message_queue_access_token: String,
    /// Statistics when the session was created or refreshed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics: Option<RunnerScaleSetStatistic>,
}

/// One message from the queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerScaleSetMessage {
    /// Monotonic id within the scale set's queue.
    pub message_id: i64,
    /// [`MESSAGE_TYPE_JOB_MESSAGES`] for job batches.
    pub message_type: String,
    /// A JSON array of job messages, as a string.
    #[serde(default)]
    pub body: String,
    /// Statistics when the message was sealed.
    #[serde(default)]
    pub statistics: Option<RunnerScaleSetStatistic>,
}

/// Answer of AcquireJobs: the request ids actually acquired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Int64List {
    /// Number of ids.
    #[serde(default)]
    pub count: i64,
    /// The ids.
    #[serde(default)]
    pub value: Vec<i64>,
}

/// A runner registration token (`POST …/actions/runners/registration-token`, 201).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistrationToken {
    /// The token.
    pub token: String,
    /// When it stops working.
    pub expires_at: Timestamp,
}

/// A GitHub App installation access token (`POST /app/installations/{id}/access_tokens`, 201; ARC's
/// `accessToken`). GitHub also sends `permissions` and `repository_selection`, which nothing reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallationAccessToken {
    /// The token (`ghs_…`), sent as `Authorization: Bearer` on REST calls.
    pub token: String,
    /// When it stops working (an hour after issue).
    pub expires_at: Timestamp,
}

/// Body of `POST /actions/runner-registration`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunnerRegistrationRequest {
    /// The githubConfigUrl.
    pub url: String,
    /// Always [`RUNNER_EVENT_REGISTER`].
    pub runner_event: String,
}

/// Answer of `POST /actions/runner-registration`: the Actions service URL and an admin JWT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminConnection {
    /// The tenant's Actions service base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The admin token (a JWT whose `exp` claim says when it expires).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// A label of a self-hosted runner in the legacy REST API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyRunnerLabel {
    /// Label id.
    #[serde(default)]
    pub id: i64,
    /// Label text.
    pub name: String,
    /// `read-only` or `custom`.
    #[serde(rename = "type", default)]
    pub kind: String,
}

/// A self-hosted runner in the legacy REST API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyRunner {
    /// Runner id.
    pub id: i64,
    /// Runner name.
    pub name: String,
    /// Operating system.
    #[serde(default)]
    pub os: String,
    /// `online` or `offline`.
    pub status: String,
    /// Whether it is running a job. Possibly stale.
    pub busy: bool,
    /// Labels.
    #[serde(default)]
    pub labels: Vec<LegacyRunnerLabel>,
}

/// One page of the legacy REST runner list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LegacyRunnerList {
    /// Runners in the scope, over all pages.
    pub total_count: i64,
    /// This page.
    pub runners: Vec<LegacyRunner>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_scale_set_serialises_like_go_with_omitempty() {
        let set = RunnerScaleSet {
            name: "arc".into(),
            runner_group_id: 1,
            labels: vec![Label::system("arc")],
            runner_setting: RunnerSetting { disable_update: true, ..RunnerSetting::default() },
            ..RunnerScaleSet::default()
        };
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(
            json,
            r#"{"name":"arc","runnerGroupId":1,"labels":[{"type":"System","name":"arc"}],"RunnerSetting":{"disableUpdate":true}}"#
        );
    }

    #[test]
    fn a_session_decodes_from_the_service_field_names() {
        let json = r#"{"sessionId":"6f7a0c2e-0000-4000-8000-000000000001","ownerName":"listener",
            "runnerScaleSet":{"id":3,"name":"arc","createdOn":"0001-01-01T00:00:00Z","RunnerSetting":{}},
            "messageQueueUrl":"https://broker/q","messageQueueAccessToken":"t",
            "statistics":{"totalAvailableJobs":1,"totalAcquiredJobs":2,"totalAssignedJobs":3,"totalRunningJobs":4,
            "totalRegisteredRunners":5,"totalBusyRunners":6,"totalIdleRunners":7}}"#;
        let session: RunnerScaleSetSession = serde_json::from_str(json).unwrap();
        assert_eq!(session.runner_scale_set.as_ref().map(|s| s.id), Some(3));
        let stats = session.statistics.unwrap();
        assert_eq!((stats.total_assigned_jobs, stats.total_idle_runners), (3, 7));
    }

    #[test]
    fn jit_config_and_registration_token_use_their_odd_field_names() {
        let jit: JitRunnerConfig = serde_json::from_str(
            r#"{"runner":{"id":9,"name":"r","runnerScaleSetId":3},"encodedJITConfig":"abc"}"#,
        )
        .unwrap();
        assert_eq!((jit.runner.id, jit.encoded_jit_config.as_str()), (9, "abc"));
        let token: RegistrationToken =
            serde_json::from_str(r#"{"token":"T","expires_at":"2020-01-22T12:13:35.123-08:00"}"#).unwrap();
        assert_eq!(token.expires_at.to_string(), "2020-01-22T20:13:35.123Z");
    }
}

/// Answer of GetAcquirableJobs (ARC's `AcquirableJobList`): the jobs offered to a scale set that nobody
/// has acquired, each as its JobAvailable (only the request id is read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcquirableJobList {
    /// How many.
    #[serde(default)]
    pub count: i64,
    /// The jobs.
    #[serde(default)]
    pub jobs: Vec<AcquirableJob>,
}

/// One acquirable job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcquirableJob {
    /// The runner request id: what AcquireJobs takes.
    pub runner_request_id: i64,
}
