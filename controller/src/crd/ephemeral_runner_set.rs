//! EphemeralRunnerSet (ERS, ARC-MODEL §2.2): the replica set of EphemeralRunners behind one
//! scale set. The listener writes `replicas` and `patchID`; the ARS writes the runner spec (and in
//! \[V\] bumps `actionableRevision` with it); the ERS controller creates and deletes runners.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{ResourceMeta, empty_string_as_none, is_zero_i32, is_zero_i64};
use super::ephemeral_runner::EphemeralRunnerSpec;
use crate::hash::{self, HashError};

/// Desired state of an EphemeralRunnerSet.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "actions.github.com",
    version = "v1alpha1",
    kind = "EphemeralRunnerSet",
    plural = "ephemeralrunnersets",
    namespaced,
    status = "EphemeralRunnerSetStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "EphemeralRunnerSet is the Schema for the ephemeralrunnersets API",
    printcolumn = r#"{"name":"DesiredReplicas","type":"integer","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"CurrentReplicas","type":"integer","jsonPath":".status.currentReplicas"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#
)]
pub struct EphemeralRunnerSetSpec {
    /// Desired number of runners (written by the listener).
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub replicas: i32,
    /// Id of the listener's last patch; 0 is the "forced" state that allows scale-down (§4.3).
    /// Always serialized, as in ARC (`json:"patchID"` without omitempty).
    #[serde(rename = "patchID", default)]
    pub patch_id: i64,
    /// \[V\] Bumped by the ARS whenever `ephemeralRunnerSpec` changes (§5.4).
    #[serde(rename = "actionableRevision", default, skip_serializing_if = "is_zero_i64")]
    pub actionable_revision: i64,
    /// The spec every runner of this set is created with.
    #[serde(rename = "ephemeralRunnerSpec", default)]
    pub ephemeral_runner_spec: EphemeralRunnerSpec,
    /// Extra metadata of runners created from now on.
    #[serde(rename = "ephemeralRunnerMetadata", default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_runner_metadata: Option<ResourceMeta>,
}

/// Phase of an EphemeralRunnerSet.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema)]
pub enum EphemeralRunnerSetPhase {
    /// Normal operation.
    Running,
    /// At least one runner is Outdated.
    Outdated,
}

/// Observed state of an EphemeralRunnerSet.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
pub struct EphemeralRunnerSetStatus {
    /// pending + running + failed.
    #[serde(rename = "currentReplicas", default)]
    pub current_replicas: i32,
    /// Runners in the pending bucket.
    #[serde(rename = "pendingEphemeralRunners", default)]
    pub pending_ephemeral_runners: i32,
    /// Runners in the running bucket.
    #[serde(rename = "runningEphemeralRunners", default)]
    pub running_ephemeral_runners: i32,
    /// Runners in the failed bucket.
    #[serde(rename = "failedEphemeralRunners", default)]
    pub failed_ephemeral_runners: i32,
    /// Phase; absent (or `""`) before the controller first sets it.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "empty_string_as_none")]
    #[schemars(with = "Option<String>")]
    pub phase: Option<EphemeralRunnerSetPhase>,
    /// \[V\] The `actionableRevision` whose cleanup has been done.
    #[serde(rename = "appliedActionableRevision", default, skip_serializing_if = "is_zero_i64")]
    pub applied_actionable_revision: i64,
    /// \[V\] The `patchID` under which finished runners were last cleaned up; 0 when cleared.
    #[serde(rename = "finishedRunnerCleanupPatchID", default, skip_serializing_if = "is_zero_i64")]
    pub finished_runner_cleanup_patch_id: i64,
}

impl EphemeralRunnerSet {
    /// The ERS integrity hash (ARC's `ephemeralRunnerSetIntegrityHash`): over
    /// `spec.ephemeralRunnerSpec` only, so replicas and patch ids never count as a spec change.
    pub fn integrity_hash(&self) -> Result<String, HashError> {
        integrity_hash_of(&self.spec.ephemeral_runner_spec)
    }

    /// `status.appliedActionableRevision`, 0 without a status.
    pub fn applied_actionable_revision(&self) -> i64 {
        self.status.as_ref().map_or(0, |s| s.applied_actionable_revision)
    }

    /// \[V\] The revision the ARS writes with a new runner spec:
    /// `max(spec.actionableRevision, status.appliedActionableRevision) + 1` (§5.4).
    pub fn next_actionable_revision(&self) -> i64 {
        self.spec.actionable_revision.max(self.applied_actionable_revision()).saturating_add(1)
    }
}

/// The integrity hash of a runner spec, as stored on an ERS.
pub fn integrity_hash_of(spec: &EphemeralRunnerSpec) -> Result<String, HashError> {
    #[derive(Serialize)]
    struct Data<'a> {
        #[serde(rename = "ephemeralRunnerSpec")]
        ephemeral_runner_spec: &'a EphemeralRunnerSpec,
    }
    hash::template_hash(&Data { ephemeral_runner_spec: spec })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ers() -> EphemeralRunnerSet {
        EphemeralRunnerSet::new("arc", EphemeralRunnerSetSpec::default())
    }

    #[test]
    fn integrity_hash_ignores_replicas_and_patch_ids() {
        let base = ers();
        let mut scaled = base.clone();
        scaled.spec.replicas = 5;
        scaled.spec.patch_id = 9;
        scaled.spec.actionable_revision = 2;
        assert_eq!(base.integrity_hash().unwrap(), scaled.integrity_hash().unwrap());
    }

    #[test]
    fn integrity_hash_follows_the_runner_spec() {
        let base = ers();
        let mut changed = base.clone();
        changed.spec.ephemeral_runner_spec.github_config_url = "https://github.com/other".into();
        assert_ne!(base.integrity_hash().unwrap(), changed.integrity_hash().unwrap());
    }

    #[test]
    fn next_actionable_revision_is_one_past_the_larger_of_spec_and_applied() {
        let mut set = ers();
        assert_eq!(set.next_actionable_revision(), 1);
        set.spec.actionable_revision = 4;
        set.status = Some(EphemeralRunnerSetStatus { applied_actionable_revision: 6, ..Default::default() });
        assert_eq!(set.next_actionable_revision(), 7);
    }

    #[test]
    fn patch_id_is_always_serialized_and_v_fields_only_when_set() {
        let json = serde_json::to_value(&ers().spec).unwrap();
        assert_eq!(json.get("patchID"), Some(&serde_json::json!(0)));
        assert_eq!(json.get("actionableRevision"), None);
        let status = EphemeralRunnerSetStatus { finished_runner_cleanup_patch_id: 3, ..Default::default() };
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json.get("finishedRunnerCleanupPatchID"), Some(&serde_json::json!(3)));
        assert_eq!(json.get("appliedActionableRevision"), None);
    }
}
