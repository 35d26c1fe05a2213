//! EphemeralRunner (ER, ARC-MODEL §2.3): one runner, one JIT registration, one pod at a time. Owned
//! by its EphemeralRunnerSet; its status is written by the ER controller (phase, ready, failures,
//! registration) and by the listener (the job fields, and in \[V\] the Running phase).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{ProxyConfig, ResourceMeta, TlsConfig, VaultConfig, empty_string_as_none, is_zero_i64};
use super::constants::{ENV_RUNNER_CONTAINER_HOOKS, RUNNER_CONTAINER_NAME};

/// Desired state of an EphemeralRunner: where to register, and the pod template inline.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "actions.github.com",
    version = "v1alpha1",
    kind = "EphemeralRunner",
    plural = "ephemeralrunners",
    namespaced,
    status = "EphemeralRunnerStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "EphemeralRunner is the Schema for the ephemeralrunners API",
    printcolumn = r#"{"name":"GitHub Config URL","type":"string","jsonPath":".spec.githubConfigUrl"}"#,
    printcolumn = r#"{"name":"RunnerId","type":"number","jsonPath":".status.runnerId"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"JobId","type":"string","jsonPath":".status.jobId"}"#,
    printcolumn = r#"{"name":"Message","type":"string","jsonPath":".status.message"}"#
)]
pub struct EphemeralRunnerSpec {
    /// GitHub config URL (required).
    #[serde(rename = "githubConfigUrl", default, skip_serializing_if = "String::is_empty")]
    pub github_config_url: String,
    /// Secret with the GitHub credentials (required).
    #[serde(rename = "githubConfigSecret", default, skip_serializing_if = "String::is_empty")]
    pub github_config_secret: String,
    /// Private CA for GitHub Enterprise Server.
    #[serde(rename = "githubServerTLS", default, skip_serializing_if = "Option::is_none")]
    pub github_server_tls: Option<TlsConfig>,
    /// Scale-set id at GitHub (required).
    #[serde(rename = "runnerScaleSetId", default, skip_serializing_if = "is_zero_i64")]
    pub runner_scale_set_id: i64,
    /// Proxy settings; which proxy env vars the pod gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyConfig>,
    /// Name of the ERS's proxy secret the pod's proxy env vars read from.
    #[serde(rename = "proxySecretRef", default, skip_serializing_if = "String::is_empty")]
    pub proxy_secret_ref: String,
    /// Credentials from a vault instead of a secret.
    #[serde(rename = "vaultConfig", default, skip_serializing_if = "Option::is_none")]
    pub vault_config: Option<VaultConfig>,
    /// Extra metadata of the JIT config secret.
    #[serde(
        rename = "ephemeralRunnerConfigSecretMetadata",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ephemeral_runner_config_secret_metadata: Option<ResourceMeta>,
    /// The runner pod template, inline (`metadata` and `spec` sit next to the fields above).
    #[serde(flatten)]
    pub pod_template: PodTemplateSpec,
}

/// Phase of an EphemeralRunner. A superset of the pod phases; an absent or empty phase reads as
/// [`EphemeralRunnerPhase::Pending`] through [`EphemeralRunnerStatus::phase_or_pending`].
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, JsonSchema)]
pub enum EphemeralRunnerPhase {
    /// Provisioning, or (in \[V\]) online and idle.
    Pending,
    /// Upstream: the pod runs. \[V\]: the listener saw this runner start a job.
    Running,
    /// The runner ran its job and left the service.
    Succeeded,
    /// Unrecoverable failure.
    Failed,
    /// The runner exited 7: its version is deprecated.
    Outdated,
}

impl EphemeralRunnerPhase {
    /// Succeeded, Failed or Outdated: the runner will never run a job again.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Outdated)
    }

    /// The phase as ARC spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Running => "Running",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Outdated => "Outdated",
        }
    }
}

/// Observed state of an EphemeralRunner.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct EphemeralRunnerStatus {
    /// Mirrors the pod's Ready condition.
    #[serde(default)]
    pub ready: bool,
    /// Phase as stored; read it with [`EphemeralRunnerStatus::phase_or_pending`] (empty = Pending).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "empty_string_as_none")]
    #[schemars(with = "Option<String>")]
    pub phase: Option<EphemeralRunnerPhase>,
    /// Machine-readable reason of the last phase change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human-readable message of the last phase change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Runner id at the service, copied from the JIT secret; 0 until registered.
    #[serde(rename = "runnerId", default, skip_serializing_if = "is_zero_i64")]
    pub runner_id: i64,
    /// Runner name at the service, copied from the JIT secret.
    #[serde(rename = "runnerName", default, skip_serializing_if = "String::is_empty")]
    pub runner_name: String,
    /// When each failed pod (by pod UID) was recorded as failed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failures: BTreeMap<String, Time>,
    /// Listener-written: the runner request id of the job.
    #[serde(rename = "jobRequestId", default, skip_serializing_if = "is_zero_i64")]
    pub job_request_id: i64,
    /// Listener-written: the job id; non-empty means a job was assigned.
    #[serde(rename = "jobId", default, skip_serializing_if = "String::is_empty")]
    pub job_id: String,
    /// Listener-written: `owner/repo` of the job.
    #[serde(rename = "jobRepositoryName", default, skip_serializing_if = "String::is_empty")]
    pub job_repository_name: String,
    /// Listener-written: the workflow ref of the job.
    #[serde(rename = "jobWorkflowRef", default, skip_serializing_if = "String::is_empty")]
    pub job_workflow_ref: String,
    /// Listener-written: the workflow run id.
    #[serde(rename = "workflowRunId", default, skip_serializing_if = "is_zero_i64")]
    pub workflow_run_id: i64,
    /// Listener-written: the job's display name.
    #[serde(rename = "jobDisplayName", default, skip_serializing_if = "String::is_empty")]
    pub job_display_name: String,
}

impl EphemeralRunnerStatus {
    /// The phase, with ARC's rule that an empty phase is Pending.
    pub fn phase_or_pending(&self) -> EphemeralRunnerPhase {
        self.phase.unwrap_or(EphemeralRunnerPhase::Pending)
    }

    /// The latest failure timestamp, if any pod failed.
    pub fn last_failure(&self) -> Option<&Time> {
        self.failures.values().max()
    }
}

impl EphemeralRunner {
    /// The phase (empty = Pending), also when the status is absent.
    pub fn phase(&self) -> EphemeralRunnerPhase {
        self.status.as_ref().map_or(EphemeralRunnerPhase::Pending, EphemeralRunnerStatus::phase_or_pending)
    }

    /// ARC's `IsDone`: the phase is Succeeded, Failed or Outdated.
    pub fn is_done(&self) -> bool {
        self.phase().is_terminal()
    }

    /// ARC's `HasJob`: the listener recorded a job id.
    pub fn has_job(&self) -> bool {
        self.status.as_ref().is_some_and(|s| !s.job_id.is_empty())
    }

    /// The runner id at the service, 0 while unregistered.
    pub fn runner_id(&self) -> i64 {
        self.status.as_ref().map_or(0, |s| s.runner_id)
    }

    /// How many distinct pods failed.
    pub fn failure_count(&self) -> usize {
        self.status.as_ref().map_or(0, |s| s.failures.len())
    }

    /// ARC's `HasContainerHookConfigured`: the runner container sets `ACTIONS_RUNNER_CONTAINER_HOOKS`.
    pub fn has_container_hooks(&self) -> bool {
        let containers = self.spec.pod_template.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or(&[]);
        containers
            .iter()
            .find(|c| c.name == RUNNER_CONTAINER_NAME)
            .and_then(|c| c.env.as_ref())
            .is_some_and(|env| env.iter().any(|e| e.name == ENV_RUNNER_CONTAINER_HOOKS))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec};
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn runner_with_status(status: Option<EphemeralRunnerStatus>) -> EphemeralRunner {
        EphemeralRunner { metadata: Default::default(), spec: Default::default(), status }
    }

    fn status_in(phase: Option<EphemeralRunnerPhase>) -> EphemeralRunnerStatus {
        EphemeralRunnerStatus { phase, ..Default::default() }
    }

    #[test]
    fn an_empty_phase_is_pending() {
        assert_eq!(runner_with_status(None).phase(), EphemeralRunnerPhase::Pending);
        assert_eq!(runner_with_status(Some(status_in(None))).phase(), EphemeralRunnerPhase::Pending);
        let from_go: EphemeralRunnerStatus = serde_json::from_str(r#"{"ready":false,"phase":""}"#).unwrap();
        assert_eq!(from_go.phase_or_pending(), EphemeralRunnerPhase::Pending);
    }

    #[test]
    fn done_means_succeeded_failed_or_outdated() {
        use EphemeralRunnerPhase::*;
        for (phase, done) in
            [(Pending, false), (Running, false), (Succeeded, true), (Failed, true), (Outdated, true)]
        {
            assert_eq!(runner_with_status(Some(status_in(Some(phase)))).is_done(), done, "{phase:?}");
        }
    }

    #[test]
    fn has_job_means_a_non_empty_job_id() {
        assert!(!runner_with_status(None).has_job());
        let with_job = EphemeralRunnerStatus { job_id: "j1".into(), ..Default::default() };
        assert!(runner_with_status(Some(with_job)).has_job());
    }

    #[test]
    fn status_serializes_with_arc_field_names_and_omits_zero_values() {
        let t: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let status = EphemeralRunnerStatus {
            phase: Some(EphemeralRunnerPhase::Running),
            runner_id: 7,
            failures: [("uid-1".to_string(), Time(t))].into(),
            job_id: "42".into(),
            ..Default::default()
        };
        let json = serde_json::to_value(&status).unwrap();
        let expected = serde_json::json!({
            "ready": false, "phase": "Running", "runnerId": 7,
            "failures": {"uid-1": "2026-01-01T00:00:00Z"}, "jobId": "42"
        });
        assert_eq!(json, expected);
    }

    #[test]
    fn last_failure_is_the_latest_timestamp() {
        let t = |s: &str| Time(s.parse::<Timestamp>().unwrap());
        let status = EphemeralRunnerStatus {
            failures: [("b".into(), t("2026-01-01T00:00:09Z")), ("a".into(), t("2026-01-01T00:00:10Z"))]
                .into(),
            ..Default::default()
        };
        assert_eq!(status.last_failure(), Some(&t("2026-01-01T00:00:10Z")));
    }

    #[test]
    fn the_pod_template_is_inline_in_the_spec() {
        let json = serde_json::json!({
            "githubConfigUrl": "https://github.com/org",
            "runnerScaleSetId": 3,
            "metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "runner", "image": "img"}]}
        });
        let spec: EphemeralRunnerSpec = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(spec.runner_scale_set_id, 3);
        assert_eq!(spec.pod_template.spec.as_ref().unwrap().containers[0].name, "runner");
        assert_eq!(serde_json::to_value(&spec).unwrap(), json);
    }

    #[test]
    fn container_hooks_are_detected_on_the_runner_container_only() {
        let with_env = |container: &str| {
            let mut er = runner_with_status(None);
            er.spec.pod_template.spec = Some(PodSpec {
                containers: vec![Container {
                    name: container.into(),
                    env: Some(vec![EnvVar {
                        name: "ACTIONS_RUNNER_CONTAINER_HOOKS".into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }],
                ..Default::default()
            });
            er
        };
        assert!(with_env("runner").has_container_hooks());
        assert!(!with_env("sidecar").has_container_hooks());
    }
}
