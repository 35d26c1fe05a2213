//! The fake's request and answer bodies, as the Actions service and GitHub's REST API put them on
//! the wire: JSON field names, casing and envelopes as ARC's and `actions/scaleset`'s Go clients and
//! their test servers read and write them, and GitHub's REST docs show them. Job messages, which
//! travel as a string inside a message, are in `super::messages`.
//!
//! Requests decode leniently where the service's clients leave fields out (Go's `omitempty`), and
//! strictly where every client sends the field, so a client that misspells one gets a 400. Answers
//! leave out empty fields exactly where the Go types say `omitempty`. Every golden case in
//! `fixtures/github/` is checked against these types by `sim/tests/github/wire.rs`.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// `messageType` of a message whose body is a batch of job messages.
pub(crate) const MESSAGE_TYPE_JOB_MESSAGES: &str = "RunnerScaleSetJobMessages";

/// The Actions service's list envelope: `{"count": n, "value": [...]}` (runner groups, scale sets,
/// runners by name, acquired job ids).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ItemList<T> {
    pub count: i64,
    pub value: Vec<T>,
}

impl<T> ItemList<T> {
    /// A list holding `value`, with its count.
    pub(super) fn of(value: Vec<T>) -> Self {
        ItemList { count: i64::try_from(value.len()).unwrap_or(i64::MAX), value }
    }
}

/// A scale-set label: `{"type": "System", "name": "linux"}`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Label {
    /// `System` for labels ARC sets; `User` otherwise.
    #[serde(rename = "type")]
    pub kind: String,
    /// The label text.
    pub name: String,
}

impl Label {
    /// A `System` label.
    pub fn system(name: impl Into<String>) -> Self {
        Label { kind: "System".into(), name: name.into() }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A scale set's runner settings. The scale-set JSON key holding it is capitalised (`RunnerSetting`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunnerSetting {
    /// Runners are ephemeral.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ephemeral: bool,
    /// Runners are elastic.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_elastic: bool,
    /// Runners must not self-update.
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_update: bool,
}

/// A runner group, as `GET runnergroups/?groupName=` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunnerGroup {
    pub id: i64,
    pub name: String,
    pub size: i64,
    #[serde(rename = "isDefaultGroup")]
    pub is_default: bool,
}

/// The statistics every scale set, session and message carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Statistics {
    /// Jobs offered to the scale set and not yet acquired.
    pub total_available_jobs: i64,
    /// Jobs acquired by the scale set and not yet assigned to a runner.
    pub total_acquired_jobs: i64,
    /// Jobs acquired by the scale set and not completed (waiting or running).
    pub total_assigned_jobs: i64,
    /// Jobs running on a runner of the scale set.
    pub total_running_jobs: i64,
    /// Registered runners.
    pub total_registered_runners: i64,
    /// Runners with a job.
    pub total_busy_runners: i64,
    /// Online runners without a job.
    pub total_idle_runners: i64,
}

/// The body of a scale-set create (`POST`) or update (`PATCH`): every field may be left out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScaleSetRequest {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub runner_group_id: i64,
    #[serde(default)]
    pub labels: Vec<Label>,
    #[serde(rename = "RunnerSetting", default)]
    pub runner_setting: RunnerSetting,
}

/// A scale set as the service describes it. Go's client marks the strings and labels `omitempty`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScaleSetAnswer {
    pub id: i64,
    pub name: String,
    pub runner_group_id: i64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub runner_group_name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    #[serde(rename = "RunnerSetting")]
    pub runner_setting: RunnerSetting,
    pub created_on: Timestamp,
    pub runner_jit_config_url: String,
    pub statistics: Statistics,
}

/// The body of a session create: who opens it (Go's `omitempty`: absent when empty). The answer
/// echoes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionRequest {
    #[serde(default)]
    pub owner_name: String,
}

/// A message session, as create and refresh answer it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionAnswer {
    pub session_id: String,
    pub owner_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner_scale_set: Option<ScaleSetAnswer>,
    pub message_queue_url: String,
    pub message_queue_access_token: String,
    pub statistics: Statistics,
}

/// One message from a session's queue; `body` is a JSON array of job messages, as a string.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Message {
    pub message_id: i64,
    pub message_type: String,
    pub body: String,
    pub statistics: Statistics,
}

/// A runner registration token (`POST {scope}/actions/runners/registration-token`, 201).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistrationToken {
    /// The token.
    pub token: String,
    /// When it stops working.
    pub expires_at: Timestamp,
}

/// An installation access token (`POST /app/installations/{id}/access_tokens`, 201), with the
/// permissions and repository selection GitHub reports beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct InstallationAccessToken {
    /// The token (`ghs_…`).
    pub token: String,
    /// When it stops working.
    pub expires_at: Timestamp,
    /// What the installation may do (the fake grants what runner administration needs).
    pub permissions: std::collections::BTreeMap<String, String>,
    /// `all` or `selected`.
    pub repository_selection: String,
}

impl InstallationAccessToken {
    /// A token for runner administration, expiring at `expires_at`.
    pub(super) fn new(token: String, expires_at: Timestamp) -> Self {
        let permissions = [("administration", "write"), ("organization_self_hosted_runners", "write")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        InstallationAccessToken { token, expires_at, permissions, repository_selection: "all".into() }
    }
}

/// The body of `POST /actions/runner-registration`; both clients always send both fields.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct RunnerRegistrationRequest {
    pub url: String,
    pub runner_event: String,
}

/// The answer of `POST /actions/runner-registration`: the tenant's service URL and an admin JWT.
/// Simplification: actions/runner's `GitHubAuthResult` also reads `token_schema` and `use_v2_flow`;
/// the wire cases carry neither, and the fake serves `config.sh` only the flow `use_v2_flow` selects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct AdminConnection {
    pub url: String,
    pub token: String,
}

/// The body of `POST /actions/runners/register` (actions/runner's `AddOrReplaceRunner`): the
/// fields the fake reads. Simplification: the scope is the registration token's, whatever `url`
/// says, and `replace` takes over the live runner of that name whatever `runner_id` says.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct RegisterRunnerRequest {
    pub url: String,
    pub name: String,
    #[serde(default)]
    pub ephemeral: bool,
    #[serde(default)]
    pub labels: Vec<AgentLabel>,
    #[serde(default)]
    pub replace: bool,
}

/// A label as `config.sh` sends it (`AgentLabel`: name and type).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct AgentLabel {
    pub name: String,
}

/// The answer of `POST /actions/runners/register` (actions/runner's `Runner`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RegisteredRunner {
    pub id: i64,
    pub name: String,
    pub authorization: RunnerAuthorization,
}

/// Where and as whom the registered runner authenticates. Simplification: `client_id` carries the
/// runner's credential itself (a runner presents it directly, with no OAuth exchange: `Auth::Runner`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RunnerAuthorization {
    pub authorization_url: String,
    pub server_url: String,
    pub client_id: String,
}

/// The body of GenerateJitRunnerConfig: the runner's name (required) and work folder.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JitRequest {
    pub name: String,
    #[serde(default)]
    pub work_folder: String,
}

/// A registered runner, as the Actions service describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunnerReference {
    pub id: i64,
    pub name: String,
    pub runner_scale_set_id: i64,
}

/// The answer of GenerateJitRunnerConfig.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct JitConfig {
    pub runner: RunnerReference,
    #[serde(rename = "encodedJITConfig")]
    pub encoded_jit_config: String,
}

/// A label of a self-hosted runner in the REST API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RestRunnerLabel {
    pub id: i64,
    pub name: String,
    /// `read-only` (the default labels) or `custom`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// A self-hosted runner in the REST API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RestRunner {
    pub id: i64,
    pub name: String,
    pub os: String,
    /// `online` or `offline`.
    pub status: String,
    pub busy: bool,
    pub labels: Vec<RestRunnerLabel>,
}

/// One page of the REST runner list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RestRunnerList {
    pub total_count: i64,
    pub runners: Vec<RestRunner>,
}

/// An Actions service error: the exception's type name (clients match it by substring) and message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ExceptionBody {
    #[serde(rename = "typeName")]
    pub type_name: String,
    pub message: String,
}

/// A GitHub REST error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RestErrorBody {
    pub message: String,
    pub documentation_url: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_setting_key_is_capitalised_and_its_flags_are_omitted_when_false() {
        let request: ScaleSetRequest = serde_json::from_str(
            r#"{"name":"arc","runnerGroupId":2,"labels":[{"type":"System","name":"arc"}],"RunnerSetting":{"disableUpdate":true}}"#,
        )
        .unwrap();
        assert_eq!(request.runner_group_id, 2);
        assert!(request.runner_setting.disable_update);
        let setting = serde_json::to_string(&RunnerSetting::default()).unwrap();
        assert_eq!(setting, "{}");
    }

    #[test]
    fn required_request_fields_make_a_misspelt_body_an_error() {
        assert!(serde_json::from_str::<JitRequest>(r#"{"runnerName":"r","workFolder":"_work"}"#).is_err());
        let registration = r#"{"url":"https://github.com/o","runnerEvent":"register"}"#;
        assert!(serde_json::from_str::<RunnerRegistrationRequest>(registration).is_err());
    }
}

/// A runner process's session request (actions/runner's `TaskAgentSession`, `src/Sdk/DTWebApi/WebApi/
/// TaskAgentSession.cs`): who owns it (the listener sends "{machine} (PID: n)") and the agent it runs as.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunnerSessionRequest {
    #[serde(default)]
    pub owner_name: String,
    #[serde(default)]
    pub agent: AgentReference,
}

/// The agent a runner session names (`TaskAgentReference`; the fields the model uses).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentReference {
    #[serde(default)]
    pub id: i64,
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}

/// A runner session as the service answers its creation (`TaskAgentSession`; no encryption key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunnerSessionAnswer {
    pub session_id: String,
    pub owner_name: String,
    pub agent: AgentReference,
    pub use_fips_encryption: bool,
}

/// An OAuth token endpoint's error (RFC 6749 §5.2), as actions/runner's `VssOAuthTokenRequestException`
/// reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct OAuthError {
    pub error: &'static str,
    pub error_description: String,
}
