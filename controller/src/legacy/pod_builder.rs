//! The pod of a legacy Runner (ARC-MODEL §7 step 7, ARC's `newPod` + `newRunnerPod` +
//! `mutatePod` at `0b9bef2c`): same name as the Runner, owned by it, a `runner` container with the
//! registration env (`RUNNER_TOKEN`, `RUNNER_NAME`, org/repo/labels/…), and the
//! `pod-template-hash` label the controller compares to decide on a restart.
//!
//! The hash covers the Runner's labels (minus `runner-template-hash`, which the parent replica
//! set stamps), its annotations, its spec and the GitHub base URL, and, since #1087
//! ([`Fixes::token_in_pod_hash`]), the registration token in its status: a refreshed token then
//! changes the hash and the pod is recreated one loop earlier. ARC's `FNVHashStringObjects` resets
//! its hasher before each part, so only the last part reaches ARC's sum; that quirk is kept with
//! [`Departures::pod_hash_covers_every_part`](crate::switches::Departures) off. Docker-in-docker is
//! not modelled.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, EnvVar, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::crd::Runner;
use crate::crd::constants::{
    ENV_GITHUB_URL, ENV_RUNNER_ENTERPRISE, ENV_RUNNER_EPHEMERAL, ENV_RUNNER_GROUP, ENV_RUNNER_LABELS,
    ENV_RUNNER_NAME, ENV_RUNNER_ORG, ENV_RUNNER_REPO, ENV_RUNNER_TOKEN, ENV_RUNNER_WORKDIR,
    LABEL_POD_TEMPLATE_HASH, LABEL_RUNNER_TEMPLATE_HASH, RUNNER_CONTAINER_NAME,
};
use crate::hash::ObjectsHasher;
use crate::kit::BuildResult;
use crate::kit::meta::{annotations_of, controller_reference, labels_of, name_of, namespace_of, plain_env};
#[cfg(test)]
use crate::switches::Fixes;
use crate::switches::Switches;

/// Work directory when the Runner does not set one.
const DEFAULT_WORK_DIR: &str = "/runner/_work";

/// Controller-wide inputs of the legacy pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyPodSettings {
    /// GitHub base URL (`https://github.com/` or an Enterprise Server URL); part of the hash.
    pub github_base_url: String,
    /// Runner image when neither the Runner nor its runner container names one.
    pub default_runner_image: String,
}

/// The pod-template hash of `runner`: labels without `runner-template-hash`, annotations, spec,
/// GitHub base URL, and the registration token when `fixes.token_in_pod_hash` (#1087). With
/// `departures.pod_hash_covers_every_part` off, ARC's sum: the last of those parts alone.
pub(crate) fn runner_pod_template_hash(
    runner: &Runner,
    settings: &LegacyPodSettings,
    switches: &Switches,
) -> BuildResult<String> {
    let mut labels = labels_of(runner);
    labels.remove(LABEL_RUNNER_TEMPLATE_HASH);
    labels.remove(LABEL_POD_TEMPLATE_HASH);
    let mut hasher = ObjectsHasher::default();
    let token_counts = switches.fixes.token_in_pod_hash;
    if !switches.departures.pod_hash_covers_every_part {
        if token_counts {
            hasher.add(runner.registration_token())?;
        } else {
            hasher.add(&settings.github_base_url)?;
        }
        return Ok(hasher.finish());
    }
    hasher.add(&labels)?.add(&annotations_of(runner))?.add(&runner.spec)?.add(&settings.github_base_url)?;
    if token_counts {
        hasher.add(runner.registration_token())?;
    }
    Ok(hasher.finish())
}

/// The desired pod of `runner`.
pub(crate) fn runner_pod(
    runner: &Runner,
    settings: &LegacyPodSettings,
    switches: &Switches,
) -> BuildResult<Pod> {
    let name = name_of(runner)?;
    let mut labels = labels_of(runner);
    labels.insert(LABEL_POD_TEMPLATE_HASH.to_string(), runner_pod_template_hash(runner, settings, switches)?);
    let mut spec = pod_spec(runner);
    let runner_container = runner_container(&mut spec);
    configure_runner_container(runner_container, runner, settings);
    runner_container
        .env
        .get_or_insert_with(Vec::new)
        .extend([plain_env(ENV_RUNNER_NAME, name), plain_env(ENV_RUNNER_TOKEN, runner.registration_token())]);
    Ok(Pod {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace_of(runner).to_string()),
            labels: Some(labels),
            annotations: runner.metadata.annotations.clone(),
            owner_references: Some(vec![controller_reference(runner)?]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    })
}

/// The pod spec from the Runner's pod fields, before the runner container is configured.
fn pod_spec(runner: &Runner) -> PodSpec {
    let spec = &runner.spec;
    let mut containers = spec.containers.clone();
    if containers.is_empty() {
        containers.push(Container {
            name: RUNNER_CONTAINER_NAME.to_string(),
            image_pull_policy: Some(spec.image_pull_policy.clone()).filter(|p| !p.is_empty()),
            env: some_vec(&spec.env),
            env_from: some_vec(&spec.env_from),
            resources: spec.resources.clone(),
            ..Default::default()
        });
    }
    containers.extend(spec.sidecar_containers.iter().cloned());
    PodSpec {
        containers,
        init_containers: some_vec(&spec.init_containers),
        volumes: some_vec(&spec.volumes),
        node_selector: Some(spec.node_selector.clone()).filter(|m: &BTreeMap<_, _>| !m.is_empty()),
        service_account_name: Some(spec.service_account_name.clone()).filter(|s| !s.is_empty()),
        security_context: spec.security_context.clone(),
        image_pull_secrets: some_vec(&spec.image_pull_secrets),
        affinity: spec.affinity.clone(),
        tolerations: some_vec(&spec.tolerations),
        termination_grace_period_seconds: spec.termination_grace_period_seconds,
        restart_policy: Some("OnFailure".to_string()),
        ..Default::default()
    }
}

/// `None` for an empty list, as an unset Go slice serializes.
fn some_vec<T: Clone>(items: &[T]) -> Option<Vec<T>> {
    (!items.is_empty()).then(|| items.to_vec())
}

/// The `runner` container of `spec`, added first when the Runner's containers lack one.
fn runner_container(spec: &mut PodSpec) -> &mut Container {
    let index = match spec.containers.iter().position(|c| c.name == RUNNER_CONTAINER_NAME) {
        Some(index) => index,
        None => {
            let generated = Container { name: RUNNER_CONTAINER_NAME.to_string(), ..Default::default() };
            spec.containers.insert(0, generated);
            0
        }
    };
    &mut spec.containers[index]
}

/// Image, pull policy, registration env and volume mounts of the runner container.
fn configure_runner_container(container: &mut Container, runner: &Runner, settings: &LegacyPodSettings) {
    let spec = &runner.spec;
    if !spec.image.is_empty() {
        container.image = Some(spec.image.clone());
    }
    if container.image.as_deref().is_none_or(str::is_empty) {
        container.image = Some(settings.default_runner_image.clone());
    }
    if container.image_pull_policy.as_deref().is_none_or(str::is_empty) {
        container.image_pull_policy = Some("Always".to_string());
    }
    container.env.get_or_insert_with(Vec::new).extend(registration_env(runner, settings));
    if !spec.volume_mounts.is_empty() {
        container.volume_mounts.get_or_insert_with(Vec::new).extend(spec.volume_mounts.iter().cloned());
    }
}

/// The env the runner's entrypoint registers with, in ARC's order.
fn registration_env(runner: &Runner, settings: &LegacyPodSettings) -> Vec<EnvVar> {
    let spec = &runner.spec;
    let work_dir = if spec.work_dir.is_empty() { DEFAULT_WORK_DIR } else { spec.work_dir.as_str() };
    vec![
        plain_env(ENV_RUNNER_ORG, &spec.organization),
        plain_env(ENV_RUNNER_REPO, &spec.repository),
        plain_env(ENV_RUNNER_ENTERPRISE, &spec.enterprise),
        plain_env(ENV_RUNNER_LABELS, &spec.labels.join(",")),
        plain_env(ENV_RUNNER_GROUP, &spec.group),
        plain_env(ENV_GITHUB_URL, &settings.github_base_url),
        plain_env(ENV_RUNNER_WORKDIR, work_dir),
        plain_env(ENV_RUNNER_EPHEMERAL, if runner.is_ephemeral() { "true" } else { "false" }),
    ]
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::crd::{RunnerSpec, RunnerStatus, RunnerStatusRegistration};

    fn settings() -> LegacyPodSettings {
        LegacyPodSettings {
            github_base_url: "https://github.com/".into(),
            default_runner_image: "summerwind/actions-runner:latest".into(),
        }
    }

    fn runner_with_token(token: &str) -> Runner {
        let mut runner =
            Runner::new("r1", RunnerSpec { repository: "octo/app".into(), ..Default::default() });
        runner.metadata.namespace = Some("ci".into());
        runner.metadata.uid = Some("uid-r1".into());
        runner.status = Some(RunnerStatus {
            registration: RunnerStatusRegistration {
                repository: "octo/app".into(),
                token: token.into(),
                expires_at: Some(Time("2026-01-01T01:00:00Z".parse().unwrap())),
                ..Default::default()
            },
            ..Default::default()
        });
        runner
    }

    fn with(fixes: &Fixes) -> Switches {
        Switches { fixes: *fixes, ..Switches::default() }
    }

    fn hash(runner: &Runner, fixes: &Fixes) -> String {
        runner_pod_template_hash(runner, &settings(), &with(fixes)).unwrap()
    }

    fn env_value(pod: &Pod, name: &str) -> Option<String> {
        let container = pod.spec.as_ref()?.containers.iter().find(|c| c.name == "runner")?;
        container.env.as_ref()?.iter().find(|e| e.name == name)?.value.clone()
    }

    #[test]
    fn with_token_in_hash_a_new_token_changes_the_hash() {
        let fixes = Fixes::default();
        assert_ne!(hash(&runner_with_token("T1"), &fixes), hash(&runner_with_token("T2"), &fixes));
    }

    #[test]
    fn without_token_in_hash_a_new_token_keeps_the_hash() {
        let fixes = Fixes { token_in_pod_hash: false, ..Fixes::default() };
        assert_eq!(hash(&runner_with_token("T1"), &fixes), hash(&runner_with_token("T2"), &fixes));
    }

    #[test]
    fn the_hash_follows_spec_labels_annotations_and_base_url_either_way() {
        for fixes in [Fixes::all_on(), Fixes::all_off()] {
            let base = runner_with_token("T1");
            let mut respecced = base.clone();
            respecced.spec.labels = vec!["gpu".into()];
            let mut relabelled = base.clone();
            relabelled.metadata.labels = Some([("team".to_string(), "a".to_string())].into());
            let mut annotated = base.clone();
            annotated.metadata.annotations = Some([("note".to_string(), "a".to_string())].into());
            let other_url =
                LegacyPodSettings { github_base_url: "https://ghes.example/".into(), ..settings() };
            let h = hash(&base, &fixes);
            assert_ne!(h, hash(&respecced, &fixes));
            assert_ne!(h, hash(&relabelled, &fixes));
            assert_ne!(h, hash(&annotated, &fixes));
            assert_ne!(h, runner_pod_template_hash(&base, &other_url, &with(&fixes)).unwrap());
        }
    }

    #[test]
    fn arcs_hash_is_the_last_part_only_the_token_with_1087_the_url_without() {
        let upstream = |token_in_pod_hash: bool| {
            let mut switches = Switches::default();
            switches.fixes.token_in_pod_hash = token_in_pod_hash;
            switches.departures.pod_hash_covers_every_part = false;
            switches
        };
        let h = |runner: &Runner, switches: &Switches| {
            runner_pod_template_hash(runner, &settings(), switches).unwrap()
        };
        let base = runner_with_token("T1");
        let mut respecced = base.clone();
        respecced.spec.labels = vec!["gpu".into()];
        assert_eq!(h(&base, &upstream(true)), h(&respecced, &upstream(true)), "the spec does not count");
        assert_ne!(h(&base, &upstream(true)), h(&runner_with_token("T2"), &upstream(true)));
        assert_eq!(h(&base, &upstream(false)), h(&runner_with_token("T2"), &upstream(false)));
        assert_eq!(h(&base, &upstream(false)), h(&respecced, &upstream(false)), "constant without #1087");
    }

    #[test]
    fn the_runner_template_hash_label_does_not_count() {
        let base = runner_with_token("T1");
        let mut stamped = base.clone();
        stamped.metadata.labels = Some([("runner-template-hash".to_string(), "abc".to_string())].into());
        assert_eq!(hash(&base, &Fixes::default()), hash(&stamped, &Fixes::default()));
    }

    #[test]
    fn the_pod_carries_the_token_name_and_hash() {
        let runner = runner_with_token("T1");
        let pod = runner_pod(&runner, &settings(), &Switches::default()).unwrap();
        assert_eq!(pod.metadata.name.as_deref(), Some("r1"));
        assert_eq!(pod.metadata.namespace.as_deref(), Some("ci"));
        let labels = pod.metadata.labels.clone().unwrap();
        assert_eq!(labels["pod-template-hash"], hash(&runner, &Fixes::default()));
        assert_eq!(env_value(&pod, "RUNNER_TOKEN").as_deref(), Some("T1"));
        assert_eq!(env_value(&pod, "RUNNER_NAME").as_deref(), Some("r1"));
        assert_eq!(env_value(&pod, "RUNNER_REPO").as_deref(), Some("octo/app"));
        assert_eq!(env_value(&pod, "RUNNER_EPHEMERAL").as_deref(), Some("true"));
        assert_eq!(env_value(&pod, "GITHUB_URL").as_deref(), Some("https://github.com/"));
        let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.api_version.as_str(), owner.kind.as_str()),
            ("actions.summerwind.dev/v1alpha1", "Runner")
        );
    }

    #[test]
    fn the_generated_runner_container_uses_the_default_image() {
        let pod = runner_pod(&runner_with_token("T1"), &settings(), &Switches::default()).unwrap();
        let spec = pod.spec.unwrap();
        assert_eq!(spec.containers.len(), 1);
        assert_eq!(spec.containers[0].image.as_deref(), Some("summerwind/actions-runner:latest"));
        assert_eq!(spec.containers[0].image_pull_policy.as_deref(), Some("Always"));
        assert_eq!(spec.restart_policy.as_deref(), Some("OnFailure"));
    }

    #[test]
    fn user_containers_keep_their_order_and_get_a_runner_if_missing() {
        let mut runner = runner_with_token("T1");
        runner.spec.containers = vec![Container { name: "helper".into(), ..Default::default() }];
        runner.spec.image = "custom:1".into();
        let pod = runner_pod(&runner, &settings(), &Switches::default()).unwrap();
        let containers = pod.spec.unwrap().containers;
        let names: Vec<_> = containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["runner", "helper"]);
        assert_eq!(containers[0].image.as_deref(), Some("custom:1"));
    }

    #[test]
    fn a_runner_never_stored_has_no_pod() {
        let mut runner = runner_with_token("T1");
        runner.metadata.uid = None;
        assert!(runner_pod(&runner, &settings(), &Switches::default()).is_err());
    }
}
