//! \[V\] update predicates of the owned watches (ARC-MODEL §5.1): pure `fn(old, new) -> bool`,
//! true when the update matters to the owner's reconciler.
//!
//! Each predicate compares a *projection*: the fields the owner's reconciler reads. An update is
//! dropped only when the projections of old and new are equal, so dropping it cannot change a
//! decision. Create, delete and generic events never reach these functions (they always pass), and
//! the global resourceVersion-changed filter still runs first.
//!
//! | Owner ← watched | Projection |
//! |---|---|
//! | ARS ← ERS | reconciled metadata, `spec`, `status.phase`, `status.appliedActionableRevision` |
//! | ERS ← ER | reconciled metadata, `spec`, `status.phase`, `status.runnerId` (+ `status.jobId`) |
//! | ER ← Pod | `uid`, `deletionTimestamp`, phase/reason/message, container and init-container statuses, derived Ready |
//!
//! Reconciled metadata is generation, deletionTimestamp, finalizers, labels, annotations and
//! ownerReferences; resourceVersion, managedFields and timestamps are ignored.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

use crate::crd::{
    EphemeralRunner, EphemeralRunnerPhase, EphemeralRunnerSet, EphemeralRunnerSetPhase,
    EphemeralRunnerSetSpec, EphemeralRunnerSpec,
};
use crate::switches::Fixes;

/// Name of the ARS←ERS predicate (for the dropped-updates metric).
pub const ARS_FROM_ERS: &str = "ars_from_ers";
/// Name of the ERS←ER predicate.
pub const ERS_FROM_EPHEMERAL_RUNNER: &str = "ers_from_ephemeral_runner";
/// Name of the ER←Pod predicate.
pub const EPHEMERAL_RUNNER_FROM_POD: &str = "ephemeral_runner_from_pod";

static NO_STRINGS: BTreeMap<String, String> = BTreeMap::new();

/// The metadata every reconciler acts on. An absent list or map equals an empty one.
#[derive(Debug, PartialEq)]
struct ReconciledMetadata<'a> {
    generation: Option<i64>,
    deletion_timestamp: Option<&'a Time>,
    finalizers: &'a [String],
    labels: &'a BTreeMap<String, String>,
    annotations: &'a BTreeMap<String, String>,
    owner_references: &'a [OwnerReference],
}

impl<'a> ReconciledMetadata<'a> {
    fn of(meta: &'a ObjectMeta) -> Self {
        ReconciledMetadata {
            generation: meta.generation,
            deletion_timestamp: meta.deletion_timestamp.as_ref(),
            finalizers: meta.finalizers.as_deref().unwrap_or_default(),
            labels: meta.labels.as_ref().unwrap_or(&NO_STRINGS),
            annotations: meta.annotations.as_ref().unwrap_or(&NO_STRINGS),
            owner_references: meta.owner_references.as_deref().unwrap_or_default(),
        }
    }
}

/// What the ARS reconciler reads of its ERS.
#[derive(Debug, PartialEq)]
struct ErsProjection<'a> {
    metadata: ReconciledMetadata<'a>,
    spec: &'a EphemeralRunnerSetSpec,
    phase: Option<EphemeralRunnerSetPhase>,
    applied_actionable_revision: i64,
    counts: (i32, i32, i32, i32),
}

/// ARS ← ERS: does this ERS update matter to the ARS reconciler? `finishedRunnerCleanupPatchID` is
/// deliberately outside the projection. The counts are inside it: §5.1 leaves them out because
/// §5.4's ERS stops writing them, but this ERS still writes them and the ARS reads them (its status
/// mirrors them, and its drain-before-update waits on `running + pending`). A reconciler must see every
/// field it reads change (§5.1's mutation test; the equivalence oracle caught the gap).
/// Without `include_counts` (`fixes.ars_predicate_includes_counts` off), §5.1's projection as written.
pub fn ars_needs_ers_update(
    old: &EphemeralRunnerSet,
    new: &EphemeralRunnerSet,
    include_counts: bool,
) -> bool {
    ErsProjection::of(old, include_counts) != ErsProjection::of(new, include_counts)
}

/// The ARS ← ERS predicate as configured by `fixes` (`ars_predicate_includes_counts`).
pub fn ars_ers_predicate(
    fixes: &Fixes,
) -> impl Fn(&EphemeralRunnerSet, &EphemeralRunnerSet) -> bool + Clone + 'static {
    let include_counts = fixes.ars_predicate_includes_counts;
    move |old, new| ars_needs_ers_update(old, new, include_counts)
}

impl<'a> ErsProjection<'a> {
    fn of(ers: &'a EphemeralRunnerSet, include_counts: bool) -> Self {
        let status = ers.status.as_ref();
        ErsProjection {
            metadata: ReconciledMetadata::of(&ers.metadata),
            spec: &ers.spec,
            phase: status.and_then(|s| s.phase),
            applied_actionable_revision: status.map_or(0, |s| s.applied_actionable_revision),
            counts: status.filter(|_| include_counts).map_or((0, 0, 0, 0), |s| {
                (
                    s.current_replicas,
                    s.pending_ephemeral_runners,
                    s.running_ephemeral_runners,
                    s.failed_ephemeral_runners,
                )
            }),
        }
    }
}

/// What the ERS reconciler reads of its runners.
#[derive(Debug, PartialEq)]
struct RunnerProjection<'a> {
    metadata: ReconciledMetadata<'a>,
    spec: &'a EphemeralRunnerSpec,
    phase: EphemeralRunnerPhase,
    runner_id: i64,
    job_id: Option<&'a str>,
}

/// ERS ← ER: does this runner update matter to the ERS reconciler? Ready, failures, reason,
/// message and the job fields are outside the projection, except `jobId` when `include_job_id`
/// (the ERS reads `HasJob()` to pick runners to scale down).
pub fn ers_needs_runner_update(old: &EphemeralRunner, new: &EphemeralRunner, include_job_id: bool) -> bool {
    RunnerProjection::of(old, include_job_id) != RunnerProjection::of(new, include_job_id)
}

impl<'a> RunnerProjection<'a> {
    fn of(er: &'a EphemeralRunner, include_job_id: bool) -> Self {
        RunnerProjection {
            metadata: ReconciledMetadata::of(&er.metadata),
            spec: &er.spec,
            phase: er.phase(),
            runner_id: er.runner_id(),
            job_id: include_job_id.then(|| er.status.as_ref().map_or("", |s| s.job_id.as_str())),
        }
    }
}

/// The ERS ← ER predicate as configured by `fixes` (`predicate_includes_job_id`).
pub fn ers_runner_predicate(
    fixes: &Fixes,
) -> impl Fn(&EphemeralRunner, &EphemeralRunner) -> bool + Clone + 'static {
    let include_job_id = fixes.predicate_includes_job_id;
    move |old, new| ers_needs_runner_update(old, new, include_job_id)
}

/// What the ER reconciler reads of its pod.
#[derive(Debug, PartialEq)]
struct PodProjection<'a> {
    uid: Option<&'a str>,
    deletion_timestamp: Option<&'a Time>,
    phase: Option<&'a str>,
    reason: Option<&'a str>,
    message: Option<&'a str>,
    container_statuses: &'a [ContainerStatus],
    init_container_statuses: &'a [ContainerStatus],
    ready: bool,
}

/// ER ← Pod: does this pod update matter to the ER reconciler? Labels, annotations, IPs and
/// conditions other than the derived Ready boolean are outside the projection.
pub fn ephemeral_runner_needs_pod_update(old: &Pod, new: &Pod) -> bool {
    PodProjection::of(old) != PodProjection::of(new)
}

impl<'a> PodProjection<'a> {
    fn of(pod: &'a Pod) -> Self {
        let status = pod.status.as_ref();
        PodProjection {
            uid: pod.metadata.uid.as_deref(),
            deletion_timestamp: pod.metadata.deletion_timestamp.as_ref(),
            phase: status.and_then(|s| s.phase.as_deref()),
            reason: status.and_then(|s| s.reason.as_deref()),
            message: status.and_then(|s| s.message.as_deref()),
            container_statuses: status.and_then(|s| s.container_statuses.as_deref()).unwrap_or_default(),
            init_container_statuses: status
                .and_then(|s| s.init_container_statuses.as_deref())
                .unwrap_or_default(),
            ready: pod_ready(pod),
        }
    }
}

/// The pod's readiness as the ER reconciler derives it (ARC's `updateRunStatusFromPod`): the
/// status of the `Ready` condition with the latest `lastTransitionTime`. Conditions without a
/// transition time never count; on a tie the first wins. No Ready condition means not ready.
pub fn pod_ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    let mut latest: Option<&PodCondition> = None;
    for condition in conditions.iter().filter(|c| c.type_ == "Ready") {
        let Some(at) = &condition.last_transition_time else { continue };
        if latest.and_then(|l| l.last_transition_time.as_ref()).is_none_or(|best| at > best) {
            latest = Some(condition);
        }
    }
    latest.is_some_and(|c| c.status == "True")
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ContainerState, ContainerStateTerminated, PodStatus};
    use k8s_openapi::jiff::Timestamp;

    use super::*;
    use crate::crd::{EphemeralRunnerSetStatus, EphemeralRunnerStatus};

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(1_767_225_600 + seconds).unwrap())
    }

    /// A named edit of an object's metadata.
    type MetadataEdit = (&'static str, fn(&mut ObjectMeta));

    /// Every reconciled-metadata edit, each of which must let an update through.
    fn metadata_edits() -> Vec<MetadataEdit> {
        vec![
            ("generation", |m| m.generation = Some(2)),
            ("deletionTimestamp", |m| m.deletion_timestamp = Some(at(5))),
            ("finalizers", |m| m.finalizers = Some(vec!["f".into()])),
            ("labels", |m| m.labels = Some([("l".to_string(), "v".to_string())].into())),
            ("annotations", |m| m.annotations = Some([("a".to_string(), "v".to_string())].into())),
            ("ownerReferences", |m| m.owner_references = Some(vec![OwnerReference::default()])),
        ]
    }

    /// Metadata edits outside every projection.
    fn ignored_metadata_edits() -> Vec<MetadataEdit> {
        vec![
            ("resourceVersion", |m| m.resource_version = Some("99".into())),
            ("managedFields", |m| m.managed_fields = Some(vec![Default::default()])),
            ("creationTimestamp", |m| m.creation_timestamp = Some(at(1))),
        ]
    }

    fn ers() -> EphemeralRunnerSet {
        let mut ers = EphemeralRunnerSet::new("arc", Default::default());
        ers.metadata.generation = Some(1);
        ers.status = Some(EphemeralRunnerSetStatus::default());
        ers
    }

    fn ers_passes(edit: impl Fn(&mut EphemeralRunnerSet)) -> bool {
        let old = ers();
        let mut new = old.clone();
        edit(&mut new);
        ars_needs_ers_update(&old, &new, true)
    }

    #[test]
    fn ars_sees_ers_reconciled_metadata_changes() {
        for (field, edit) in metadata_edits() {
            assert!(ers_passes(|e| edit(&mut e.metadata)), "{field} must pass");
        }
    }

    #[test]
    fn ars_ignores_ers_resource_version_and_bookkeeping_metadata() {
        for (field, edit) in ignored_metadata_edits() {
            assert!(!ers_passes(|e| edit(&mut e.metadata)), "{field} must be dropped");
        }
    }

    #[test]
    fn ars_sees_every_ers_spec_change() {
        assert!(ers_passes(|e| e.spec.replicas = 3));
        assert!(ers_passes(|e| e.spec.patch_id = 4));
        assert!(ers_passes(|e| e.spec.actionable_revision = 1));
        assert!(ers_passes(|e| e.spec.ephemeral_runner_spec.runner_scale_set_id = 9));
    }

    #[test]
    fn ars_sees_ers_phase_and_applied_revision() {
        let status = |e: &mut EphemeralRunnerSet| e.status.get_or_insert_with(Default::default).clone();
        assert!(ers_passes(|e| e.status =
            Some(EphemeralRunnerSetStatus { phase: Some(EphemeralRunnerSetPhase::Outdated), ..status(e) })));
        assert!(ers_passes(
            |e| e.status = Some(EphemeralRunnerSetStatus { applied_actionable_revision: 2, ..status(e) })
        ));
    }

    #[test]
    fn ars_ignores_the_cleanup_marker_but_sees_the_counts_it_mirrors() {
        assert!(!ers_passes(|e| e.status =
            Some(EphemeralRunnerSetStatus { finished_runner_cleanup_patch_id: 8, ..Default::default() })));
        for edit in [
            |s: &mut EphemeralRunnerSetStatus| s.current_replicas = 3,
            |s: &mut EphemeralRunnerSetStatus| s.pending_ephemeral_runners = 1,
            |s: &mut EphemeralRunnerSetStatus| s.running_ephemeral_runners = 1,
            |s: &mut EphemeralRunnerSetStatus| s.failed_ephemeral_runners = 1,
        ] {
            assert!(ers_passes(|e| {
                let mut status = EphemeralRunnerSetStatus::default();
                edit(&mut status);
                e.status = Some(status);
            }));
        }
    }

    fn runner() -> EphemeralRunner {
        let mut er = EphemeralRunner::new("arc-runner-x", Default::default());
        er.status = Some(EphemeralRunnerStatus::default());
        er
    }

    fn runner_passes(include_job_id: bool, edit: impl Fn(&mut EphemeralRunner)) -> bool {
        let old = runner();
        let mut new = old.clone();
        edit(&mut new);
        ers_needs_runner_update(&old, &new, include_job_id)
    }

    fn with_status(edit: impl Fn(&mut EphemeralRunnerStatus)) -> impl Fn(&mut EphemeralRunner) {
        move |er| edit(er.status.get_or_insert_with(Default::default))
    }

    #[test]
    fn without_the_fix_the_ars_predicate_drops_count_only_updates() {
        let old = ers();
        let mut new = old.clone();
        new.status.get_or_insert_with(Default::default).running_ephemeral_runners = 2;
        assert!(!ars_ers_predicate(&Fixes { ars_predicate_includes_counts: false, ..Fixes::default() })(
            &old, &new
        ));
        assert!(ars_ers_predicate(&Fixes::default())(&old, &new));
    }

    #[test]
    fn ers_sees_runner_reconciled_metadata_changes() {
        for (field, edit) in metadata_edits() {
            assert!(runner_passes(true, |r| edit(&mut r.metadata)), "{field} must pass");
        }
        for (field, edit) in ignored_metadata_edits() {
            assert!(!runner_passes(true, |r| edit(&mut r.metadata)), "{field} must be dropped");
        }
    }

    #[test]
    fn ers_sees_runner_spec_changes() {
        assert!(runner_passes(true, |r| r.spec.runner_scale_set_id = 3));
        assert!(runner_passes(true, |r| r.spec.proxy_secret_ref = "p".into()));
    }

    #[test]
    fn ers_sees_runner_phase_and_registration() {
        assert!(runner_passes(true, with_status(|s| s.phase = Some(EphemeralRunnerPhase::Running))));
        assert!(runner_passes(true, with_status(|s| s.runner_id = 12)));
    }

    #[test]
    fn an_explicit_pending_phase_equals_an_empty_one() {
        assert!(!runner_passes(true, with_status(|s| s.phase = Some(EphemeralRunnerPhase::Pending))));
    }

    #[test]
    fn ers_ignores_runner_readiness_failures_reason_and_message() {
        assert!(!runner_passes(true, with_status(|s| s.ready = true)));
        assert!(!runner_passes(
            true,
            with_status(|s| {
                s.failures.insert("uid".into(), at(1));
            })
        ));
        assert!(!runner_passes(true, with_status(|s| s.reason = "Evicted".into())));
        assert!(!runner_passes(true, with_status(|s| s.message = "gone".into())));
    }

    #[test]
    fn ers_ignores_job_fields_other_than_the_job_id() {
        assert!(!runner_passes(
            true,
            with_status(|s| {
                s.job_request_id = 1;
                s.job_repository_name = "o/r".into();
                s.job_workflow_ref = "ref".into();
                s.workflow_run_id = 2;
                s.job_display_name = "build".into();
            })
        ));
    }

    #[test]
    fn the_job_id_passes_only_with_the_4647_fix() {
        assert!(runner_passes(true, with_status(|s| s.job_id = "j".into())));
        assert!(!runner_passes(false, with_status(|s| s.job_id = "j".into())));
        let predicate = ers_runner_predicate(&Fixes { predicate_includes_job_id: false, ..Fixes::default() });
        let mut with_job = runner();
        with_status(|s| s.job_id = "j".into())(&mut with_job);
        assert!(!predicate(&runner(), &with_job));
        assert!(ers_runner_predicate(&Fixes::default())(&runner(), &with_job));
    }

    fn ready_condition(status: &str, seconds: i64) -> PodCondition {
        PodCondition {
            type_: "Ready".into(),
            status: status.into(),
            last_transition_time: Some(at(seconds)),
            ..Default::default()
        }
    }

    fn pod() -> Pod {
        Pod {
            metadata: ObjectMeta { uid: Some("pod-1".into()), ..Default::default() },
            spec: None,
            status: Some(PodStatus {
                phase: Some("Running".into()),
                conditions: Some(vec![ready_condition("False", 1)]),
                container_statuses: Some(vec![ContainerStatus {
                    name: "runner".into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
        }
    }

    fn pod_passes(edit: impl Fn(&mut Pod)) -> bool {
        let old = pod();
        let mut new = old.clone();
        edit(&mut new);
        ephemeral_runner_needs_pod_update(&old, &new)
    }

    fn pod_status(edit: impl Fn(&mut PodStatus)) -> impl Fn(&mut Pod) {
        move |p| edit(p.status.get_or_insert_with(Default::default))
    }

    #[test]
    fn the_runner_sees_pod_identity_and_deletion() {
        assert!(pod_passes(|p| p.metadata.uid = Some("pod-2".into())));
        assert!(pod_passes(|p| p.metadata.deletion_timestamp = Some(at(9))));
    }

    #[test]
    fn the_runner_sees_pod_phase_reason_and_message() {
        assert!(pod_passes(pod_status(|s| s.phase = Some("Failed".into()))));
        assert!(pod_passes(pod_status(|s| s.reason = Some("Evicted".into()))));
        assert!(pod_passes(pod_status(|s| s.message = Some("out of memory".into()))));
    }

    #[test]
    fn the_runner_sees_container_and_init_container_statuses() {
        let terminated = ContainerState {
            terminated: Some(ContainerStateTerminated { exit_code: 7, ..Default::default() }),
            ..Default::default()
        };
        assert!(pod_passes(pod_status(
            |s| s.container_statuses.as_mut().unwrap()[0].state = Some(terminated.clone())
        )));
        assert!(pod_passes(pod_status(|s| {
            s.init_container_statuses =
                Some(vec![ContainerStatus { name: "init".into(), ..Default::default() }])
        })));
    }

    #[test]
    fn the_runner_sees_readiness_flips() {
        assert!(pod_passes(pod_status(|s| s.conditions.as_mut().unwrap().push(ready_condition("True", 2)))));
    }

    #[test]
    fn the_runner_ignores_pod_changes_that_keep_readiness() {
        assert!(!pod_passes(pod_status(|s| s.conditions.as_mut().unwrap().push(ready_condition("True", 0)))));
        assert!(!pod_passes(pod_status(|s| {
            let scheduled =
                PodCondition { type_: "PodScheduled".into(), status: "True".into(), ..Default::default() };
            s.conditions.as_mut().unwrap().push(scheduled)
        })));
        assert!(!pod_passes(pod_status(|s| s.pod_ip = Some("10.0.0.1".into()))));
        assert!(!pod_passes(|p| p.metadata.labels = Some([("l".to_string(), "v".to_string())].into())));
        assert!(!pod_passes(|p| p.metadata.resource_version = Some("7".into())));
    }

    #[test]
    fn ready_is_the_latest_ready_condition() {
        let with = |conditions: Vec<PodCondition>| {
            let mut p = pod();
            p.status.as_mut().unwrap().conditions = Some(conditions);
            pod_ready(&p)
        };
        assert!(with(vec![ready_condition("False", 1), ready_condition("True", 2)]));
        assert!(!with(vec![ready_condition("True", 1), ready_condition("False", 2)]));
        assert!(with(vec![ready_condition("True", 3), ready_condition("False", 3)]), "first wins a tie");
        let undated = PodCondition { type_: "Ready".into(), status: "True".into(), ..Default::default() };
        assert!(!with(vec![undated]), "an undated condition never counts");
        assert!(!with(vec![]));
    }
}
