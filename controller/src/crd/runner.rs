//! Runner (legacy summerwind mode, ARC-MODEL §7): one long-lived runner, one pod of the same name.
//! The controller keeps a registration token in the status, passes it to the pod as `RUNNER_TOKEN`,
//! and recreates the pod when its `pod-template-hash` changes (with #1087, also when the token does).
//!
//! The spec keeps the registration fields and the pod-template fields ARC's `RunnerPodSpec` offers
//! that the pod builder uses; the docker-in-docker knobs are not modelled.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvFromSource, EnvVar, LocalObjectReference, PodSecurityContext,
    ResourceRequirements, Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Desired state of a legacy Runner: where to register, and its pod.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "actions.summerwind.dev",
    version = "v1alpha1",
    kind = "Runner",
    plural = "runners",
    namespaced,
    status = "RunnerStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "Runner is the Schema for the runners API",
    printcolumn = r#"{"name":"Organization","type":"string","jsonPath":".spec.organization"}"#,
    printcolumn = r#"{"name":"Repository","type":"string","jsonPath":".spec.repository"}"#,
    printcolumn = r#"{"name":"Status","type":"string","jsonPath":".status.phase"}"#
)]
pub struct RunnerSpec {
    /// Enterprise to register with (exclusive with organization and repository).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub enterprise: String,
    /// Organization to register with.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub organization: String,
    /// `owner/repo` to register with.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repository: String,
    /// Runner labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Runner group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// Ephemeral runner (`--ephemeral`); unset means true, as in ARC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<bool>,
    /// Runner image; empty means the controller's default.
    #[serde(default)]
    pub image: String,
    /// Work directory; empty means `/runner/_work`.
    #[serde(rename = "workDir", default, skip_serializing_if = "String::is_empty")]
    pub work_dir: String,
    /// Full container list; when empty a `runner` container is generated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<Container>,
    /// Pull policy of the generated runner container.
    #[serde(rename = "imagePullPolicy", default, skip_serializing_if = "String::is_empty")]
    pub image_pull_policy: String,
    /// Extra env of the generated runner container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    /// Extra envFrom of the generated runner container.
    #[serde(rename = "envFrom", default, skip_serializing_if = "Vec::is_empty")]
    pub env_from: Vec<EnvFromSource>,
    /// Resources of the generated runner container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Extra volume mounts of the runner container.
    #[serde(rename = "volumeMounts", default, skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<VolumeMount>,
    /// Extra pod volumes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    /// Init containers.
    #[serde(rename = "initContainers", default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<Container>,
    /// Containers appended after the runner container.
    #[serde(rename = "sidecarContainers", default, skip_serializing_if = "Vec::is_empty")]
    pub sidecar_containers: Vec<Container>,
    /// Node selector.
    #[serde(rename = "nodeSelector", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Service account of the pod.
    #[serde(rename = "serviceAccountName", default, skip_serializing_if = "String::is_empty")]
    pub service_account_name: String,
    /// Pod security context.
    #[serde(rename = "securityContext", default, skip_serializing_if = "Option::is_none")]
    pub security_context: Option<PodSecurityContext>,
    /// Image pull secrets.
    #[serde(rename = "imagePullSecrets", default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// Affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// Tolerations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// Termination grace period.
    #[serde(rename = "terminationGracePeriodSeconds", default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
}

/// Observed state of a legacy Runner.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct RunnerStatus {
    /// The runner pod is ready.
    #[serde(default)]
    pub ready: bool,
    /// The registration token the pod registers with.
    #[serde(default)]
    pub registration: RunnerStatusRegistration,
    /// Mirrors the pod phase.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
    /// Reason of the last phase change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Message of the last phase change.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Last time the controller asked GitHub whether the runner is registered and busy.
    #[serde(rename = "lastRegistrationCheckTime", default, skip_serializing_if = "Option::is_none")]
    pub last_registration_check_time: Option<Time>,
}

/// The registration token and what it was issued for.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct RunnerStatusRegistration {
    /// Enterprise the token was issued for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub enterprise: String,
    /// Organization the token was issued for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub organization: String,
    /// Repository the token was issued for.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub repository: String,
    /// Labels at issue time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// The token (TTL about 1 h).
    #[serde(default)]
    pub token: String,
    /// When the token expires.
    #[serde(rename = "expiresAt", default)]
    pub expires_at: Option<Time>,
}

impl Runner {
    /// The registration token in the status, empty when none was fetched yet.
    pub fn registration_token(&self) -> &str {
        self.status.as_ref().map_or("", |s| s.registration.token.as_str())
    }

    /// ARC's `IsRegisterable`: a token exists, was issued for the current repository, and has
    /// not expired at `now`.
    pub fn is_registerable(&self, now: Timestamp) -> bool {
        let Some(status) = &self.status else { return false };
        let registration = &status.registration;
        registration.repository == self.spec.repository
            && !registration.token.is_empty()
            && registration.expires_at.as_ref().is_some_and(|expires| expires.0 >= now)
    }

    /// Whether the runner is ephemeral (unset means true).
    pub fn is_ephemeral(&self) -> bool {
        self.spec.ephemeral.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner_with_token(token: &str, repository: &str, expires: &str) -> Runner {
        let mut runner = Runner::new("r1", RunnerSpec { repository: "o/r".into(), ..Default::default() });
        runner.status = Some(RunnerStatus {
            registration: RunnerStatusRegistration {
                repository: repository.into(),
                token: token.into(),
                expires_at: Some(Time(expires.parse().unwrap())),
                ..Default::default()
            },
            ..Default::default()
        });
        runner
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn a_fresh_token_for_the_same_repository_is_registerable() {
        let runner = runner_with_token("T1", "o/r", "2026-01-01T01:00:00Z");
        assert!(runner.is_registerable(at("2026-01-01T00:30:00Z")));
    }

    #[test]
    fn an_expired_empty_or_foreign_token_is_not_registerable() {
        let now = at("2026-01-01T00:30:00Z");
        assert!(!runner_with_token("T1", "o/r", "2026-01-01T00:29:59Z").is_registerable(now));
        assert!(!runner_with_token("", "o/r", "2026-01-01T01:00:00Z").is_registerable(now));
        assert!(!runner_with_token("T1", "o/other", "2026-01-01T01:00:00Z").is_registerable(now));
        assert!(!Runner::new("r", RunnerSpec::default()).is_registerable(now));
    }

    #[test]
    fn runners_are_ephemeral_unless_told_otherwise() {
        let mut runner = Runner::new("r", RunnerSpec::default());
        assert!(runner.is_ephemeral());
        runner.spec.ephemeral = Some(false);
        assert!(!runner.is_ephemeral());
    }

    #[test]
    fn registration_serializes_with_arc_field_names() {
        let runner = runner_with_token("T1", "o/r", "2026-01-01T01:00:00Z");
        let json = serde_json::to_value(runner.status.unwrap().registration).unwrap();
        let expected =
            serde_json::json!({"repository": "o/r", "token": "T1", "expiresAt": "2026-01-01T01:00:00Z"});
        assert_eq!(json, expected);
    }
}
