//! The AutoscalingListener controller alone against the fake API server, one test per case of ARC's
//! `autoscalinglistener_controller_test.go` (ARC-MODEL §10). The ARS it serves is created directly
//! (registered at the fake GitHub, no ARS controller), and the listener is built with the controller's
//! own builder, as the ARS controller would build it. There is no kubelet: the tests write pod status
//! themselves, as ARC's envtest suite does.

use std::time::Duration;

use arc_controller::crd::{AutoscalingListener, AutoscalingRunnerSet};
use arc_controller::runtime::manager::Manager;
use arc_controller::runtime::metrics::RECONCILE_ERRORS_TOTAL;
use arc_controller::scaleset::resource_builder::ListenerConfig;
use k8s_openapi::api::core::v1::{Pod, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{DeleteParams, Patch, PatchParams};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::support::fixtures::{CONFIG_SECRET, CONFIG_URL, runner_template};
use crate::support::{CONTROLLER_NS, Harness, RUNNER_NS};

const ARS_NAME: &str = "arc";
const LISTENER_IMAGE: &str = "ghcr.io/actions/gha-runner-scale-set-controller:test";
const WAIT: Duration = Duration::from_secs(30);
const STEADY: Duration = Duration::from_secs(5);

/// A registered ARS, created straight in the API server; `spec` is merged into the default spec.
async fn registered_ars(h: &Harness, spec: Value) -> AutoscalingRunnerSet {
    h.github_secret(RUNNER_NS).await;
    let id = h.scale_set(ARS_NAME);
    let mut value = json!({
        "apiVersion": "actions.github.com/v1alpha1",
        "kind": "AutoscalingRunnerSet",
        "metadata": {
            "name": ARS_NAME,
            "namespace": RUNNER_NS,
            "labels": {"app.kubernetes.io/version": h.ctx.builder.controller_version},
            "annotations": {
                "runner-scale-set-id": id.to_string(),
                "actions.github.com/runner-group-name": "Default",
                "actions.github.com/runner-scale-set-name": ARS_NAME,
            },
        },
        "spec": {
            "githubConfigUrl": CONFIG_URL,
            "githubConfigSecret": CONFIG_SECRET,
            "minRunners": 1,
            "maxRunners": 10,
            "template": runner_template(),
        },
    });
    value["spec"].as_object_mut().expect("a spec").extend(spec.as_object().cloned().unwrap_or_default());
    let ars: AutoscalingRunnerSet = serde_json::from_value(value).expect("a valid ARS");
    h.api::<AutoscalingRunnerSet>(RUNNER_NS).create(&Default::default(), &ars).await.expect("ARS created")
}

/// The listener the ARS controller would create for `ars`.
fn listener_for(h: &Harness, ars: &AutoscalingRunnerSet) -> AutoscalingListener {
    let runner_set = h.ctx.builder.ephemeral_runner_set(ars).expect("a runner set");
    h.ctx
        .builder
        .autoscaling_listener(ars, &runner_set, CONTROLLER_NS, LISTENER_IMAGE, &[])
        .expect("a listener")
}

/// Starts the AL controller alone and creates `listener`; returns the manager and the listener's name.
async fn start(h: &Harness, listener: &AutoscalingListener) -> (Manager, String) {
    let manager = h.start(&["autoscalinglistener"]);
    let api = h.api::<AutoscalingListener>(CONTROLLER_NS);
    let created = api.create(&Default::default(), listener).await.expect("listener created");
    (manager, created.metadata.name.expect("a name"))
}

/// The default ARS and its listener, with the listener pod created.
async fn start_with_pod(h: &Harness) -> (Manager, String) {
    let ars = registered_ars(h, json!({})).await;
    let started = start(h, &listener_for(h, &ars)).await;
    h.eventually("the listener pod exists", WAIT, || pod(h, &started.1).is_some()).await;
    started
}

fn typed<K: DeserializeOwned>(h: &Harness, plural: &str, namespace: &str, name: &str) -> Option<K> {
    h.object(plural, namespace, name).map(|value| serde_json::from_value(value).expect("a stored object"))
}

fn pod(h: &Harness, name: &str) -> Option<Pod> {
    typed(h, "pods", CONTROLLER_NS, name)
}

fn config_secret(h: &Harness, name: &str) -> Option<Secret> {
    typed(h, "secrets", CONTROLLER_NS, &format!("{name}-config"))
}

fn listener(h: &Harness, name: &str) -> Option<AutoscalingListener> {
    typed(h, "autoscalinglisteners", CONTROLLER_NS, name)
}

fn role(h: &Harness, name: &str) -> Option<Role> {
    typed(h, "roles", RUNNER_NS, name)
}

fn uid_of(meta: &kube::api::ObjectMeta) -> Option<String> {
    meta.uid.clone()
}

async fn patch_pod_status(h: &Harness, name: &str, status: Value) {
    let api = h.api::<Pod>(CONTROLLER_NS);
    let patch = json!({ "status": status });
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await.expect("pod status patched");
}

async fn patch_listener(h: &Harness, name: &str, patch: Value) {
    let api = h.api::<AutoscalingListener>(CONTROLLER_NS);
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await.expect("listener patched");
}

fn listener_container_terminated(exit_code: i32) -> Value {
    json!({
        "phase": "Failed",
        "containerStatuses": [{
            "name": "listener", "ready": false, "restartCount": 0,
            "image": LISTENER_IMAGE, "imageID": "",
            "state": {"terminated": {"exitCode": exit_code, "reason": "Error"}},
        }],
    })
}

#[tokio::test(start_paused = true)]
async fn creating_a_listener_adds_the_finalizer_and_creates_its_account_role_binding_config_and_pod() {
    let h = Harness::new();
    let (_manager, name) = start_with_pod(&h).await;

    let created = listener(&h, &name).expect("the listener");
    assert_eq!(
        created.metadata.finalizers.unwrap_or_default(),
        ["autoscalinglistener.actions.github.com/finalizer"]
    );
    let account: ServiceAccount =
        typed(&h, "serviceaccounts", CONTROLLER_NS, &name).expect("service account");
    let owner = &account.metadata.owner_references.unwrap_or_default()[0];
    assert_eq!(
        (owner.kind.as_str(), Some(&owner.uid)),
        ("AutoscalingListener", created.metadata.uid.as_ref())
    );
    let role = role(&h, &name).expect("role in the ARS namespace");
    assert_eq!(role.rules.unwrap_or_default()[0].resource_names, Some(vec![ARS_NAME.to_string()]));
    let binding: RoleBinding = typed(&h, "rolebindings", RUNNER_NS, &name).expect("role binding");
    assert_eq!(binding.role_ref.name, name);
    let subject = &binding.subjects.unwrap_or_default()[0];
    assert_eq!((subject.name.as_str(), subject.namespace.as_deref()), (name.as_str(), Some(CONTROLLER_NS)));

    let secret = config_secret(&h, &name).expect("config secret");
    let config =
        ListenerConfig::from_json(&secret.data.unwrap_or_default()["config.json"].0).expect("a valid config");
    assert_eq!(config.runner_scale_set_id, created.spec.runner_scale_set_id);
    assert_eq!((config.min_runners, config.max_runners), (1, 10));
    assert_eq!(
        (config.ephemeral_runner_set_namespace.as_str(), config.ephemeral_runner_set_name.as_str()),
        (RUNNER_NS, ARS_NAME)
    );
    assert_eq!(config.credentials.github_token, "ghp_arcsim");
    assert_eq!(config.configure_url, CONFIG_URL);

    let pod = pod(&h, &name).expect("listener pod");
    let spec = pod.spec.expect("a pod spec");
    assert_eq!(spec.service_account_name.as_deref(), Some(name.as_str()));
    assert_eq!(spec.containers[0].image.as_deref(), Some(LISTENER_IMAGE));
    let owner = &pod.metadata.owner_references.unwrap_or_default()[0];
    assert_eq!(owner.kind, "AutoscalingListener");
    // Like ARC, a created Role or RoleBinding is followed by a rate-limited requeue that can beat its
    // watch event and meet AlreadyExists; nothing else may fail.
    let errors = h.metric(RECONCILE_ERRORS_TOTAL, &[("controller", "autoscalinglistener")]);
    let already_exists = h.metric(
        RECONCILE_ERRORS_TOTAL,
        &[("controller", "autoscalinglistener"), ("reason", "AlreadyExists")],
    );
    assert_eq!(errors, already_exists);
}

#[tokio::test(start_paused = true)]
async fn deleting_a_listener_removes_its_resources_before_the_listener() {
    let h = Harness::new();
    let (_manager, name) = start_with_pod(&h).await;

    let api = h.api::<AutoscalingListener>(CONTROLLER_NS);
    api.delete(&name, &DeleteParams::default()).await.expect("delete issued");
    h.eventually("the listener is gone", WAIT, || listener(&h, &name).is_none()).await;
    assert!(pod(&h, &name).is_none(), "pod");
    assert!(config_secret(&h, &name).is_none(), "config secret");
    assert!(role(&h, &name).is_none(), "role");
    assert!(h.object("rolebindings", RUNNER_NS, &name).is_none(), "role binding");
    assert!(h.object("serviceaccounts", CONTROLLER_NS, &name).is_none(), "service account");
}

#[tokio::test(start_paused = true)]
async fn a_terminated_listener_container_recreates_the_pod_but_keeps_the_config_secret() {
    let h = Harness::new();
    let (_manager, name) = start_with_pod(&h).await;
    let pod_uid = uid_of(&pod(&h, &name).expect("pod").metadata);
    let secret_uid = uid_of(&config_secret(&h, &name).expect("secret").metadata);

    // Any exit, even a clean one: the listener is never restarted in place.
    patch_pod_status(&h, &name, listener_container_terminated(0)).await;
    h.eventually("a new pod", WAIT, || pod(&h, &name).is_some_and(|p| uid_of(&p.metadata) != pod_uid)).await;
    assert_eq!(
        uid_of(&config_secret(&h, &name).expect("secret").metadata),
        secret_uid,
        "the config secret is kept"
    );
}

#[tokio::test(start_paused = true)]
async fn a_deleted_listener_pod_is_recreated() {
    let h = Harness::new();
    let (_manager, name) = start_with_pod(&h).await;
    let pod_uid = uid_of(&pod(&h, &name).expect("pod").metadata);

    h.api::<Pod>(CONTROLLER_NS).delete(&name, &DeleteParams::default()).await.expect("pod deleted");
    h.eventually("a new pod", WAIT, || pod(&h, &name).is_some_and(|p| uid_of(&p.metadata) != pod_uid)).await;
}

#[tokio::test(start_paused = true)]
async fn an_evicted_listener_pod_is_recreated() {
    let h = Harness::new();
    let (_manager, name) = start_with_pod(&h).await;
    let pod_uid = uid_of(&pod(&h, &name).expect("pod").metadata);

    patch_pod_status(&h, &name, json!({"phase": "Failed", "reason": "Evicted", "message": "low on memory"}))
        .await;
    h.eventually("a new pod", WAIT, || pod(&h, &name).is_some_and(|p| uid_of(&p.metadata) != pod_uid)).await;
}

#[tokio::test(start_paused = true)]
async fn a_running_listener_pod_is_left_alone() {
    let h = Harness::new();
    let (_manager, name) = start_with_pod(&h).await;
    let pod_uid = uid_of(&pod(&h, &name).expect("pod").metadata);
    let running = json!({
        "phase": "Running",
        "containerStatuses": [{
            "name": "listener", "ready": true, "restartCount": 0, "image": LISTENER_IMAGE, "imageID": "",
            "state": {"running": {}},
        }],
    });
    patch_pod_status(&h, &name, running).await;
    h.consistently("the pod stays", STEADY, || {
        pod(&h, &name).is_some_and(|p| uid_of(&p.metadata) == pod_uid)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn the_role_follows_the_listeners_runner_set_and_the_pod_is_recreated_for_it() {
    let h = Harness::new();
    let (_manager, name) = start_with_pod(&h).await;
    let pod_uid = uid_of(&pod(&h, &name).expect("pod").metadata);

    patch_listener(&h, &name, json!({"spec": {"ephemeralRunnerSetName": "other-runner-set"}})).await;
    h.eventually("the role names the new runner set", WAIT, || {
        role(&h, &name)
            .and_then(|r| r.rules)
            .is_some_and(|rules| rules[0].resource_names == Some(vec!["other-runner-set".to_string()]))
    })
    .await;
    h.eventually("a pod built on the new role", WAIT, || {
        pod(&h, &name).is_some_and(|p| uid_of(&p.metadata) != pod_uid)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn updated_listener_labels_reach_its_account_role_and_pod_without_recreating_the_pod() {
    let h = Harness::new();
    let (_manager, name) = start_with_pod(&h).await;
    let pod_uid = uid_of(&pod(&h, &name).expect("pod").metadata);

    patch_listener(&h, &name, json!({"metadata": {"labels": {"arc.test/team": "blue"}}})).await;
    let labelled = |labels: Option<&std::collections::BTreeMap<String, String>>| {
        labels.and_then(|l| l.get("arc.test/team")).map(String::as_str) == Some("blue")
    };
    h.eventually("every dependent carries the label", WAIT, || {
        let account: Option<ServiceAccount> = typed(&h, "serviceaccounts", CONTROLLER_NS, &name);
        account.is_some_and(|a| labelled(a.metadata.labels.as_ref()))
            && role(&h, &name).is_some_and(|r| labelled(r.metadata.labels.as_ref()))
            && pod(&h, &name).is_some_and(|p| labelled(p.metadata.labels.as_ref()))
    })
    .await;
    assert_eq!(uid_of(&pod(&h, &name).expect("pod").metadata), pod_uid, "updated, not recreated");
}

#[tokio::test(start_paused = true)]
async fn a_listener_whose_ars_is_gone_deletes_itself() {
    let h = Harness::new();
    let ars = registered_ars(&h, json!({})).await;
    let listener_object = listener_for(&h, &ars);
    h.api::<AutoscalingRunnerSet>(RUNNER_NS)
        .delete(ARS_NAME, &DeleteParams::default())
        .await
        .expect("ARS deleted");
    let (_manager, name) = start(&h, &listener_object).await;
    h.eventually("the listener is gone", WAIT, || listener(&h, &name).is_none()).await;
    assert!(pod(&h, &name).is_none(), "no pod was ever started for it");
}

#[tokio::test(start_paused = true)]
async fn a_proxied_listener_gets_a_proxy_secret_with_credentials_and_loses_it_on_delete() {
    let h = Harness::new();
    let credentials: Secret = serde_json::from_value(json!({
        "metadata": {"name": "proxy-credentials", "namespace": RUNNER_NS},
        "stringData": {"username": "bot", "password": "s3cr:t"},
    }))
    .expect("a secret");
    h.api::<Secret>(RUNNER_NS).create(&Default::default(), &credentials).await.expect("credentials");
    let proxy = json!({"proxy": {
        "http": {"url": "http://proxy.corp:3128", "credentialSecretRef": "proxy-credentials"},
        "https": {"url": "http://proxy.corp:3129"},
        "noProxy": ["example.com", "internal"],
    }});
    let ars = registered_ars(&h, proxy).await;
    let (_manager, name) = start(&h, &listener_for(&h, &ars)).await;
    h.eventually("the listener pod exists", WAIT, || pod(&h, &name).is_some()).await;

    let proxy_secret: Secret =
        typed(&h, "secrets", CONTROLLER_NS, &format!("{name}-proxy")).expect("proxy secret");
    let data = proxy_secret.data.unwrap_or_default();
    let text = |key: &str| String::from_utf8_lossy(&data[key].0).into_owned();
    assert_eq!(text("http_proxy"), "http://bot:s3cr%3At@proxy.corp:3128");
    assert_eq!(text("https_proxy"), "http://proxy.corp:3129");
    assert_eq!(text("no_proxy"), "example.com,internal");
    let env = pod(&h, &name)
        .and_then(|p| p.spec)
        .map(|s| s.containers[0].env.clone().unwrap_or_default())
        .unwrap_or_default();
    let names: Vec<&str> = env.iter().map(|e| e.name.as_str()).collect();
    assert!(names.contains(&"http_proxy") && names.contains(&"no_proxy"), "{names:?}");

    h.api::<AutoscalingListener>(CONTROLLER_NS)
        .delete(&name, &DeleteParams::default())
        .await
        .expect("delete issued");
    h.eventually("the listener is gone", WAIT, || listener(&h, &name).is_none()).await;
    assert!(h.object("secrets", CONTROLLER_NS, &format!("{name}-proxy")).is_none(), "proxy secret removed");
}
