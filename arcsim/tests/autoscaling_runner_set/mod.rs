//! The AutoscalingRunnerSet controller alone against the fake API server and the stateful fake GitHub,
//! one test per case of ARC's `autoscalingrunnerset_controller_test.go` (ARC-MODEL §10), plus the
//! \[V\] actionable-revision bump (§5.4) and the ARS←ERS predicate (§5.1).
//!
//! As in ARC's suite, no other controller runs: runner sets and listeners carry no finalizers, so
//! deleting them removes them at once, and the tests stand in for the listener and the ERS
//! controller by patching the runner set's spec or status themselves.

use std::time::Duration;

use arc_controller::Optimisations;
use arc_controller::crd::{AutoscalingListener, AutoscalingRunnerSet, EphemeralRunnerSet};
use arc_controller::hash::listener_name;
use arc_controller::runtime::manager::Manager;
use arc_controller::runtime::metrics::{
    API_CALLS_TOTAL, DEEP_COPIES_TOTAL, PREDICATE_DROPPED_TOTAL, RECONCILE_ERRORS_TOTAL, RECONCILE_TOTAL,
};
use arc_controller::scaleset::predicates::ARS_FROM_ERS;
use arc_sim::github::Operation;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{DeleteParams, Patch, PatchParams};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::support::fixtures::{CONFIG_SECRET, CONFIG_URL, runner_template};
use crate::support::{CONTROLLER_NS, Harness, RUNNER_NS};

const ARS_NAME: &str = "arc";
const WAIT: Duration = Duration::from_secs(30);
const STEADY: Duration = Duration::from_secs(5);

const ARS: &str = "autoscalingrunnersets";
const ERS: &str = "ephemeralrunnersets";
const AL: &str = "autoscalinglisteners";

/// An ARS like ARC's test one: min 1, max 10, labelled for this controller's version.
fn ars_json(h: &Harness) -> Value {
    json!({
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "AutoscalingRunnerSet",
        "metadata": {
            "name": ARS_NAME,
            "namespace": RUNNER_NS,
            "labels": {
                "app.kubernetes.io/version": h.ctx.builder.controller_version,
                "arc.test/label-drift": "initial",
            },
        },
        "spec": {
            "githubConfigUrl": CONFIG_URL,
            "githubConfigSecret": CONFIG_SECRET,
            "minRunners": 1,
            "maxRunners": 10,
            "ephemeralRunnerSetMetadata": {"annotations": {"arc.test/metadata-annotation": "initial"}},
            "template": runner_template(),
        },
    })
}

/// Creates `ars` with the GitHub secret, and starts the ARS controller alone.
async fn start(h: &Harness, ars: Value) -> Manager {
    h.github_secret(RUNNER_NS).await;
    let manager = h.start(&["autoscalingrunnerset"]);
    let ars: AutoscalingRunnerSet = serde_json::from_value(ars).expect("a valid ARS");
    h.api::<AutoscalingRunnerSet>(RUNNER_NS).create(&Default::default(), &ars).await.expect("ARS created");
    manager
}

/// Starts the default ARS and waits until it is Running with its runner set and listener.
async fn start_running(h: &Harness) -> Manager {
    let manager = start(h, ars_json(h)).await;
    h.eventually("the ARS is Running", WAIT, || phase(h).as_deref() == Some("Running")).await;
    manager
}

fn typed<K: DeserializeOwned>(h: &Harness, plural: &str, namespace: &str, name: &str) -> Option<K> {
    h.object(plural, namespace, name).map(|value| serde_json::from_value(value).expect("a stored object"))
}

fn ars(h: &Harness) -> Option<AutoscalingRunnerSet> {
    typed(h, ARS, RUNNER_NS, ARS_NAME)
}

fn ers(h: &Harness) -> Option<EphemeralRunnerSet> {
    typed(h, ERS, RUNNER_NS, ARS_NAME)
}

fn listener_name_of(runner_group: &str) -> String {
    listener_name(ARS_NAME, RUNNER_NS, runner_group, CONFIG_URL)
}

fn listener(h: &Harness) -> Option<AutoscalingListener> {
    typed(h, AL, CONTROLLER_NS, &listener_name_of(""))
}

fn phase(h: &Harness) -> Option<String> {
    let ars = h.object(ARS, RUNNER_NS, ARS_NAME)?;
    ars.pointer("/status/phase").and_then(Value::as_str).map(str::to_string)
}

fn annotation(meta: &kube::api::ObjectMeta, key: &str) -> Option<String> {
    meta.annotations.as_ref()?.get(key).cloned()
}

fn label(meta: &kube::api::ObjectMeta, key: &str) -> Option<String> {
    meta.labels.as_ref()?.get(key).cloned()
}

/// `(uid, resourceVersion)` of an object, to tell a recreate from an update from nothing.
fn identity(meta: &kube::api::ObjectMeta) -> (Option<String>, Option<String>) {
    (meta.uid.clone(), meta.resource_version.clone())
}

fn runner_image(ers: &EphemeralRunnerSet) -> Option<String> {
    ers.spec.ephemeral_runner_spec.pod_template.spec.as_ref()?.containers[0].image.clone()
}

async fn patch_ars(h: &Harness, patch: Value) {
    let api = h.api::<AutoscalingRunnerSet>(RUNNER_NS);
    api.patch(ARS_NAME, &PatchParams::default(), &Patch::Merge(&patch)).await.expect("ARS patched");
}

async fn patch_ers(h: &Harness, patch: Value) {
    let api = h.api::<EphemeralRunnerSet>(RUNNER_NS);
    api.patch(ARS_NAME, &PatchParams::default(), &Patch::Merge(&patch)).await.expect("ERS patched");
}

async fn patch_ers_status(h: &Harness, status: Value) {
    let api = h.api::<EphemeralRunnerSet>(RUNNER_NS);
    let patch = json!({ "status": status });
    api.patch_status(ARS_NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("ERS status patched");
}

async fn set_runner_image(h: &Harness, image: &str) {
    let mut template = runner_template();
    template.spec.as_mut().expect("a pod spec").containers[0].image = Some(image.into());
    patch_ars(h, json!({"spec": {"template": template}})).await;
}

#[tokio::test(start_paused = true)]
async fn creating_an_ars_adds_the_finalizer_registers_the_scale_set_and_creates_runner_set_and_listener() {
    let h = Harness::new();
    let _manager = start_running(&h).await;

    let created = ars(&h).expect("the ARS");
    let finalizers = created.metadata.finalizers.clone().unwrap_or_default();
    assert_eq!(finalizers, ["autoscalingrunnerset.actions.github.com/finalizer"]);
    let scale_sets = h.github.scale_sets();
    assert_eq!(scale_sets.len(), 1, "one scale set registered at GitHub");
    let scale_set = &scale_sets[0];
    let id = annotation(&created.metadata, "runner-scale-set-id");
    assert_eq!(id, Some(scale_set.id.to_string()));
    assert_eq!(
        annotation(&created.metadata, "actions.github.com/runner-group-name").as_deref(),
        Some("Default")
    );
    assert_eq!(
        annotation(&created.metadata, "actions.github.com/runner-scale-set-name").as_deref(),
        Some(ARS_NAME)
    );
    assert_eq!(label(&created.metadata, "actions.github.com/organization").as_deref(), Some("arcsim"));
    assert_eq!(label(&created.metadata, "actions.github.com/repository").as_deref(), Some("app"));
    assert_eq!(created.spec.runner_scale_set_name, ARS_NAME, "ARC writes the default name back");
    let labels: Vec<&str> = scale_set.labels.iter().map(|l| l.name.as_str()).collect();
    assert_eq!((scale_set.name.as_str(), labels, scale_set.runner_group_id), (ARS_NAME, vec![ARS_NAME], 1));
    assert!(scale_set.runner_setting.disable_update);

    let runner_set = ers(&h).expect("one runner set named after the ARS");
    let owner = &runner_set.metadata.owner_references.clone().unwrap_or_default()[0];
    assert_eq!(
        (owner.kind.as_str(), Some(&owner.uid)),
        ("AutoscalingRunnerSet", created.metadata.uid.as_ref())
    );
    assert_eq!(runner_set.spec.ephemeral_runner_spec.runner_scale_set_id, scale_set.id);
    assert_eq!(h.apiserver.objects(ERS).len(), 1);
    let listener = listener(&h).expect("the listener in the controller namespace");
    assert_eq!(listener.spec.ephemeral_runner_set_name, ARS_NAME);
    assert_eq!((listener.spec.min_runners, listener.spec.max_runners), (1, 10));
    assert_eq!(listener.spec.runner_scale_set_id, scale_set.id);
    assert_eq!(h.metric(RECONCILE_ERRORS_TOTAL, &[("controller", "autoscalingrunnerset")]), 0);
}

#[tokio::test(start_paused = true)]
async fn deleting_an_ars_removes_listener_runner_set_and_scale_set_before_the_ars() {
    let h = Harness::new();
    let _manager = start_running(&h).await;

    let api = h.api::<AutoscalingRunnerSet>(RUNNER_NS);
    api.delete(ARS_NAME, &DeleteParams::default()).await.expect("delete issued");
    h.eventually("the listener is deleted", WAIT, || listener(&h).is_none()).await;
    h.eventually("the runner set is deleted", WAIT, || ers(&h).is_none()).await;
    h.eventually("the scale set is deleted at GitHub", WAIT, || h.github.scale_sets().is_empty()).await;
    h.eventually("the ARS is gone", WAIT, || ars(&h).is_none()).await;
}

#[tokio::test(start_paused = true)]
async fn a_steady_ars_does_not_churn_its_listener_on_unrelated_updates() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    let before = identity(&listener(&h).expect("listener").metadata);
    let copies = |h: &Harness| h.metric(DEEP_COPIES_TOTAL, &[("kind", "AutoscalingRunnerSet")]);
    let writes = |h: &Harness| h.metric(API_CALLS_TOTAL, &[("kind", "AutoscalingRunnerSet")]);
    let reconciles = |h: &Harness| h.metric(RECONCILE_TOTAL, &[("controller", "autoscalingrunnerset")]);
    let (copies_before, writes_before, reconciles_before) = (copies(&h), writes(&h), reconciles(&h));

    // What the listener writes all day long, and an annotation nobody reconciles.
    patch_ers(&h, json!({"spec": {"replicas": 3, "patchID": 4}})).await;
    patch_ars(&h, json!({"metadata": {"annotations": {"note": "unrelated"}}})).await;
    h.consistently("the listener is neither recreated nor updated", STEADY, || {
        listener(&h).is_some_and(|al| identity(&al.metadata) == before)
    })
    .await;
    assert_eq!(listener(&h).expect("listener").spec.ephemeral_runner_set_name, ARS_NAME);
    assert!(reconciles(&h) >= reconciles_before + 2, "both updates were reconciled");
    assert_eq!((copies(&h), writes(&h)), (copies_before, writes_before), "nothing copied, nothing written");
}

#[tokio::test(start_paused = true)]
async fn with_every_optimisation_off_the_ars_copies_on_every_pass_and_still_converges() {
    let h = Harness::with(|b| b.switches.optimisations = Optimisations::all_off());
    let _manager = start_running(&h).await;
    assert!(ers(&h).is_some() && listener(&h).is_some());
    let copies = h.metric(DEEP_COPIES_TOTAL, &[("kind", "AutoscalingRunnerSet")]);
    let reconciles = h.metric(RECONCILE_TOTAL, &[("controller", "autoscalingrunnerset")]);
    assert_eq!(copies, reconciles, "an eager copy per reconcile, as ARC's DeepCopy");
}

#[tokio::test(start_paused = true)]
async fn a_runner_image_change_updates_the_runner_set_in_place_without_touching_the_listener() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    let listener_before = identity(&listener(&h).expect("listener").metadata);
    let runner_set = ers(&h).expect("runner set");
    let hash_before = annotation(&runner_set.metadata, "actions.github.com/integrity-hash");

    set_runner_image(&h, "ghcr.io/actions/actions-runner:updated").await;
    h.eventually("the runner set has the new image", WAIT, || {
        ers(&h).is_some_and(|e| runner_image(&e).as_deref() == Some("ghcr.io/actions/actions-runner:updated"))
    })
    .await;
    let updated = ers(&h).expect("runner set");
    assert_eq!(updated.metadata.uid, runner_set.metadata.uid, "updated in place");
    assert_ne!(annotation(&updated.metadata, "actions.github.com/integrity-hash"), hash_before);
    h.consistently("the listener is untouched", STEADY, || {
        listener(&h).is_some_and(|al| identity(&al.metadata) == listener_before)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_max_runners_change_recreates_only_the_listener() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    let listener_uid = listener(&h).expect("listener").metadata.uid;
    let runner_set = ers(&h).expect("runner set");
    let runner_set_identity = (
        runner_set.metadata.uid.clone(),
        annotation(&runner_set.metadata, "actions.github.com/integrity-hash"),
    );

    patch_ars(&h, json!({"spec": {"maxRunners": 20}})).await;
    h.eventually("a new listener with the new maximum", WAIT, || {
        listener(&h).is_some_and(|al| al.metadata.uid != listener_uid && al.spec.max_runners == 20)
    })
    .await;
    h.consistently("the runner set is neither recreated nor respecced", STEADY, || {
        ers(&h).is_some_and(|e| {
            (e.metadata.uid.clone(), annotation(&e.metadata, "actions.github.com/integrity-hash"))
                == runner_set_identity
                && e.spec.actionable_revision == 0
        })
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn ars_labels_and_runner_set_metadata_changes_reach_the_runner_set() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    let runner_set_uid = ers(&h).expect("runner set").metadata.uid;

    patch_ars(
        &h,
        json!({
            "metadata": {"labels": {"arc.test/label-drift": "updated"}},
            "spec": {
                "ephemeralRunnerSetMetadata": {"annotations": {"arc.test/metadata-annotation": "updated"}},
                "ephemeralRunnerMetadata": {"labels": {"arc.test/runner-label": "added"}},
            },
        }),
    )
    .await;
    h.eventually("the runner set carries the new metadata", WAIT, || {
        ers(&h).is_some_and(|e| {
            label(&e.metadata, "arc.test/label-drift").as_deref() == Some("updated")
                && annotation(&e.metadata, "arc.test/metadata-annotation").as_deref() == Some("updated")
                && e.spec
                    .ephemeral_runner_metadata
                    .as_ref()
                    .is_some_and(|m| m.labels.contains_key("arc.test/runner-label"))
        })
    })
    .await;
    let updated = ers(&h).expect("runner set");
    assert_eq!(updated.metadata.uid, runner_set_uid, "patched, not recreated");
    assert_eq!(updated.spec.actionable_revision, 0, "metadata is not a runner-spec change");
}

#[tokio::test(start_paused = true)]
async fn a_new_github_config_secret_updates_the_runner_set_in_place_and_recreates_the_listener() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    let runner_set_uid = ers(&h).expect("runner set").metadata.uid;
    let listener_uid = listener(&h).expect("listener").metadata.uid;
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "github-config-updated", "namespace": RUNNER_NS},
        "stringData": {"github_token": "ghp_rotated"},
    }))
    .expect("a secret");
    h.api::<Secret>(RUNNER_NS).create(&Default::default(), &secret).await.expect("secret created");

    patch_ars(&h, json!({"spec": {"githubConfigSecret": "github-config-updated"}})).await;
    h.eventually("the runner set uses the new secret", WAIT, || {
        ers(&h).is_some_and(|e| e.spec.ephemeral_runner_spec.github_config_secret == "github-config-updated")
    })
    .await;
    h.eventually("a new listener uses the new secret", WAIT, || {
        listener(&h).is_some_and(|al| {
            al.metadata.uid != listener_uid && al.spec.github_config_secret == "github-config-updated"
        })
    })
    .await;
    assert_eq!(ers(&h).expect("runner set").metadata.uid, runner_set_uid, "updated in place");
}

#[tokio::test(start_paused = true)]
async fn a_runner_group_change_moves_the_scale_set_and_a_lost_annotation_is_restored() {
    let h = Harness::with(|b| b.github.runner_groups = vec!["testgroup".into(), "testgroup2".into()]);
    let mut ars_value = ars_json(&h);
    ars_value["spec"]["runnerGroup"] = json!("testgroup");
    let _manager = start(&h, ars_value).await;
    let group_annotation =
        |h: &Harness| ars(h).and_then(|a| annotation(&a.metadata, "actions.github.com/runner-group-name"));
    h.eventually("registered in testgroup", WAIT, || group_annotation(&h).as_deref() == Some("testgroup"))
        .await;
    assert_eq!(h.github.scale_sets()[0].runner_group_id, 2);

    patch_ars(&h, json!({"spec": {"runnerGroup": "testgroup2"}})).await;
    h.eventually("moved to testgroup2", WAIT, || group_annotation(&h).as_deref() == Some("testgroup2")).await;
    assert_eq!(h.github.scale_sets()[0].runner_group_id, 3);
    assert_eq!(h.github.scale_sets().len(), 1, "moved, not re-registered");

    patch_ars(&h, json!({"metadata": {"annotations": {"actions.github.com/runner-group-name": null}}})).await;
    h.eventually("the annotation is back", WAIT, || group_annotation(&h).as_deref() == Some("testgroup2"))
        .await;
}

#[tokio::test(start_paused = true)]
async fn a_custom_scale_set_name_is_registered_and_recorded() {
    let h = Harness::new();
    let mut ars_value = ars_json(&h);
    ars_value["spec"]["runnerScaleSetName"] = json!("custom-scale-set");
    ars_value["spec"]["runnerScaleSetLabels"] = json!(["linux", "custom-scale-set"]);
    let _manager = start(&h, ars_value).await;
    h.eventually("the ARS is Running", WAIT, || phase(&h).as_deref() == Some("Running")).await;

    let created = ars(&h).expect("the ARS");
    assert_eq!(
        annotation(&created.metadata, "actions.github.com/runner-scale-set-name").as_deref(),
        Some("custom-scale-set")
    );
    let scale_set = &h.github.scale_sets()[0];
    let labels: Vec<&str> = scale_set.labels.iter().map(|l| l.name.as_str()).collect();
    assert_eq!((scale_set.name.as_str(), labels), ("custom-scale-set", vec!["custom-scale-set", "linux"]));
}

#[tokio::test(start_paused = true)]
async fn a_runner_spec_change_waits_for_pending_and_running_runners_before_updating_the_runner_set() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    let runner_set_uid = ers(&h).expect("runner set").metadata.uid;
    let busy = json!({"currentReplicas": 6, "failedEphemeralRunners": 1, "runningEphemeralRunners": 2, "pendingEphemeralRunners": 3});
    patch_ers_status(&h, busy).await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    set_runner_image(&h, "ghcr.io/actions/abcd:1.1.1").await;
    h.eventually("the listener is deleted to stop new jobs", WAIT, || listener(&h).is_none()).await;
    h.consistently("nothing is applied while runners are busy", STEADY, || {
        let runner_set = ers(&h).expect("runner set");
        listener(&h).is_none()
            && runner_set.metadata.uid == runner_set_uid
            && runner_image(&runner_set).as_deref() == Some("ghcr.io/actions/actions-runner:2.330.0")
    })
    .await;

    let drained = json!({"currentReplicas": 1, "failedEphemeralRunners": 1, "runningEphemeralRunners": 0, "pendingEphemeralRunners": 0});
    patch_ers_status(&h, drained).await;
    h.eventually("the runner spec is applied in place", WAIT, || {
        ers(&h).is_some_and(|e| runner_image(&e).as_deref() == Some("ghcr.io/actions/abcd:1.1.1"))
    })
    .await;
    h.eventually("the listener is back", WAIT, || listener(&h).is_some()).await;
    let runner_set = ers(&h).expect("runner set");
    assert_eq!((runner_set.metadata.uid, runner_set.spec.actionable_revision), (runner_set_uid, 1));
}

#[tokio::test(start_paused = true)]
async fn every_runner_spec_change_bumps_the_actionable_revision_past_the_applied_one() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    assert_eq!(ers(&h).expect("runner set").spec.actionable_revision, 0);

    set_runner_image(&h, "ghcr.io/actions/actions-runner:one").await;
    h.eventually("revision 1", WAIT, || ers(&h).is_some_and(|e| e.spec.actionable_revision == 1)).await;

    // The ERS controller reports a later applied revision (a restored backup, say): the next bump
    // must go past it, never back.
    patch_ers_status(&h, json!({"appliedActionableRevision": 5})).await;
    set_runner_image(&h, "ghcr.io/actions/actions-runner:two").await;
    h.eventually("revision 6", WAIT, || ers(&h).is_some_and(|e| e.spec.actionable_revision == 6)).await;
    assert_eq!(
        runner_image(&ers(&h).expect("runner set")).as_deref(),
        Some("ghcr.io/actions/actions-runner:two")
    );

    patch_ars(&h, json!({"spec": {"maxRunners": 3}})).await;
    h.eventually("the listener follows the new maximum", WAIT, || {
        listener(&h).is_some_and(|al| al.spec.max_runners == 3)
    })
    .await;
    assert_eq!(
        ers(&h).expect("runner set").spec.actionable_revision,
        6,
        "no bump without a runner-spec change"
    );
}

fn status_counts(h: &Harness) -> Option<Value> {
    let status = h.object(ARS, RUNNER_NS, ARS_NAME)?.get("status")?.clone();
    Some(status)
}

#[tokio::test(start_paused = true)]
async fn the_ars_status_mirrors_the_runner_set_counts() {
    // Upstream watches every ERS update; the [V] predicate is off here.
    let h = Harness::with(|b| b.switches.optimisations.predicates = false);
    let _manager = start_running(&h).await;

    patch_ers_status(&h, json!({"currentReplicas": 6, "failedEphemeralRunners": 1, "runningEphemeralRunners": 2, "pendingEphemeralRunners": 3})).await;
    let wanted = json!({"currentRunners": 6, "phase": "Running", "pendingEphemeralRunners": 3, "runningEphemeralRunners": 2, "failedEphemeralRunners": 1});
    h.eventually("the ARS status mirrors the counts", WAIT, || status_counts(&h).as_ref() == Some(&wanted))
        .await;
}

#[tokio::test(start_paused = true)]
async fn with_the_predicate_count_updates_still_reach_the_ars_status_at_once() {
    // The ARS←ERS projection includes the counts: the ARS mirrors them and drains on them. (An earlier
    // projection left them out, as §5.1 does for an ERS that no longer writes them; the equivalence
    // oracle showed the ARS status then lagged, with different writes than with predicates off.)
    let h = Harness::new();
    let _manager = start_running(&h).await;
    patch_ers_status(&h, json!({"currentReplicas": 2, "pendingEphemeralRunners": 2})).await;
    h.eventually("the counts reach the ARS status without another ARS event", WAIT, || {
        status_counts(&h)
            .is_some_and(|s| s["currentRunners"] == json!(2) && s["pendingEphemeralRunners"] == json!(2))
    })
    .await;
    let dropped_before = h.metric(PREDICATE_DROPPED_TOTAL, &[("predicate", ARS_FROM_ERS)]);
    patch_ers_status(&h, json!({"finishedRunnerCleanupPatchID": 4})).await;
    h.eventually("an update of the cleanup marker alone is dropped", WAIT, || {
        h.metric(PREDICATE_DROPPED_TOTAL, &[("predicate", ARS_FROM_ERS)]) > dropped_before
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_ars_labelled_with_arcs_chart_version_0_14_1_is_reconciled_not_deleted() {
    let h = Harness::new();
    let mut ars_value = ars_json(&h);
    ars_value["metadata"]["labels"]["app.kubernetes.io/version"] = json!("0.14.1");
    let _manager = start(&h, ars_value).await;
    h.eventually("the ARS is Running", WAIT, || phase(&h).as_deref() == Some("Running")).await;
    assert_eq!(h.github.scale_sets().len(), 1, "its scale set is registered");
    assert!(ers(&h).is_some() && listener(&h).is_some());
    assert!(ars(&h).and_then(|a| a.status).is_some_and(|s| s.conditions.is_empty()));
}

#[tokio::test(start_paused = true)]
async fn an_ars_labelled_for_a_version_not_accepted_is_left_alone_with_a_condition() {
    let h = Harness::new();
    let mut ars_value = ars_json(&h);
    ars_value["metadata"]["labels"]["app.kubernetes.io/version"] = json!("999.1.0");
    let _manager = start(&h, ars_value).await;
    let condition = |h: &Harness| {
        let ars = h.object(ARS, RUNNER_NS, ARS_NAME)?;
        ars.pointer("/status/conditions/0").cloned()
    };
    h.eventually("the condition is reported", WAIT, || condition(&h).is_some()).await;
    tokio::time::sleep(STEADY).await;
    let reported = condition(&h).expect("a condition");
    assert_eq!(reported["type"], "VersionAccepted");
    assert_eq!(reported["status"], "False");
    assert_eq!(reported["reason"], "VersionNotAccepted");
    let message = reported["message"].as_str().unwrap_or_default();
    assert!(message.contains("\"999.1.0\"") && message.contains("0.13, 0.14, 0.15"), "{message}");
    let kept = ars(&h).expect("the ARS is never deleted for its label");
    assert!(kept.metadata.deletion_timestamp.is_none() && kept.metadata.finalizers.is_none());
    assert!(h.github.scale_sets().is_empty(), "nothing was registered for it");
    assert!(ers(&h).is_none());
    let status_writes =
        h.metric(API_CALLS_TOTAL, &[("verb", "patch_status"), ("kind", "AutoscalingRunnerSet")]);
    assert!(status_writes <= 1, "the condition is written once, not on every pass: {status_writes}");

    patch_ars(&h, json!({"metadata": {"labels": {"app.kubernetes.io/version": "0.15.0"}}})).await;
    h.eventually("once relabelled, the ARS is reconciled", WAIT, || phase(&h).as_deref() == Some("Running"))
        .await;
    assert!(condition(&h).is_none(), "the condition is removed");
}

#[tokio::test(start_paused = true)]
async fn an_ars_whose_registration_failed_is_still_cleaned_up_on_delete() {
    let h = Harness::new();
    for _ in 0..200 {
        h.script.answer(Operation::GetScaleSet, 400, r#"{"message": "bad request"}"#);
    }
    let _manager = start(&h, ars_json(&h)).await;
    h.eventually("the finalizer is on", WAIT, || ars(&h).is_some_and(|a| a.metadata.finalizers.is_some()))
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(ars(&h).is_some_and(|a| annotation(&a.metadata, "runner-scale-set-id").is_none()));

    let api = h.api::<AutoscalingRunnerSet>(RUNNER_NS);
    api.delete(ARS_NAME, &DeleteParams::default()).await.expect("delete issued");
    h.eventually("the ARS is gone", WAIT, || ars(&h).is_none()).await;
    let deletes = h.metric(API_CALLS_TOTAL, &[("verb", "delete"), ("kind", "EphemeralRunnerSet")]);
    assert_eq!(deletes, 0, "there was no runner set to delete");
}

/// A helm-made resource carrying `cleanup-protection`.
fn protected<K: DeserializeOwned>(kind: &str, api_version: &str, name: &str, extra: Value) -> K {
    let mut value = json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": RUNNER_NS, "finalizers": ["actions.github.com/cleanup-protection"]},
    });
    value.as_object_mut().expect("an object").extend(extra.as_object().cloned().unwrap_or_default());
    serde_json::from_value(value).expect("a valid object")
}

fn finalizers_of(h: &Harness, plural: &str, name: &str) -> Option<Value> {
    h.object(plural, RUNNER_NS, name).map(|o| o.pointer("/metadata/finalizers").cloned().unwrap_or(json!([])))
}

#[tokio::test(start_paused = true)]
async fn deleting_an_ars_strips_cleanup_protection_from_the_resources_it_names() {
    let h = Harness::new();
    let role: Role =
        protected("Role", "rbac.authorization.k8s.io/v1", "kube-mode-role", json!({"rules": []}));
    let role_ref = json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kube-mode-role"});
    let binding: RoleBinding = protected(
        "RoleBinding",
        "rbac.authorization.k8s.io/v1",
        "kube-mode-role-binding",
        json!({"roleRef": role_ref}),
    );
    let account: ServiceAccount = protected("ServiceAccount", "v1", "kube-mode-service-account", json!({}));
    h.api::<Role>(RUNNER_NS).create(&Default::default(), &role).await.expect("role");
    h.api::<RoleBinding>(RUNNER_NS).create(&Default::default(), &binding).await.expect("binding");
    h.api::<ServiceAccount>(RUNNER_NS).create(&Default::default(), &account).await.expect("account");
    let mut ars_value = ars_json(&h);
    ars_value["metadata"]["annotations"] = json!({
        "actions.github.com/cleanup-kubernetes-mode-role-name": "kube-mode-role",
        "actions.github.com/cleanup-kubernetes-mode-role-binding-name": "kube-mode-role-binding",
        "actions.github.com/cleanup-kubernetes-mode-service-account-name": "kube-mode-service-account",
        "actions.github.com/cleanup-github-secret-name": CONFIG_SECRET,
    });
    let _manager = start(&h, ars_value).await;
    let protect = json!({"metadata": {"finalizers": ["actions.github.com/cleanup-protection"]}});
    h.api::<Secret>(RUNNER_NS)
        .patch(CONFIG_SECRET, &PatchParams::default(), &Patch::Merge(&protect))
        .await
        .expect("secret protected");
    h.eventually("the ARS is Running", WAIT, || phase(&h).as_deref() == Some("Running")).await;

    let api = h.api::<AutoscalingRunnerSet>(RUNNER_NS);
    api.delete(ARS_NAME, &DeleteParams::default()).await.expect("delete issued");
    h.eventually("the ARS is gone", WAIT, || ars(&h).is_none()).await;
    for (plural, name) in [
        ("roles", "kube-mode-role"),
        ("rolebindings", "kube-mode-role-binding"),
        ("serviceaccounts", "kube-mode-service-account"),
        ("secrets", CONFIG_SECRET),
    ] {
        assert_eq!(
            finalizers_of(&h, plural, name),
            Some(json!([])),
            "{plural}/{name} is unprotected but kept"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_outdated_ars_stops_its_listener_and_asks_its_runner_set_for_nothing() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    patch_ers(&h, json!({"spec": {"replicas": 4, "patchID": 9}})).await;

    let api = h.api::<AutoscalingRunnerSet>(RUNNER_NS);
    let outdated = json!({"status": {"phase": "Outdated"}});
    api.patch_status(ARS_NAME, &PatchParams::default(), &Patch::Merge(&outdated))
        .await
        .expect("status patched");
    h.eventually("the listener is removed", WAIT, || listener(&h).is_none()).await;
    h.eventually("the runner set is zeroed", WAIT, || {
        ers(&h).is_some_and(|e| e.spec.replicas == 0 && e.spec.patch_id == 0)
    })
    .await;
    h.consistently("no listener while Outdated", STEADY, || listener(&h).is_none()).await;
}

#[tokio::test(start_paused = true)]
async fn an_outdated_runner_set_under_a_running_ars_is_removed_with_its_listener() {
    let h = Harness::new();
    let _manager = start_running(&h).await;
    let old_uid = ers(&h).expect("runner set").metadata.uid;
    let old_listener_uid = listener(&h).expect("listener").metadata.uid;

    patch_ers_status(&h, json!({"phase": "Outdated"})).await;
    // Upstream never writes the ARS Outdated phase (ARC-MODEL §12.5), so once the outdated runner set
    // is gone a fresh one, and a fresh listener, take its place.
    h.eventually("the outdated runner set is replaced", WAIT, || {
        ers(&h).is_some_and(|e| e.metadata.uid != old_uid)
    })
    .await;
    h.eventually("the listener is replaced", WAIT, || {
        listener(&h).is_some_and(|al| al.metadata.uid != old_listener_uid)
    })
    .await;
}
