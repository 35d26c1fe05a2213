//! The listener pod (ARC-MODEL §3.4, ARC's `newScaleSetListenerPod`): one `listener` container
//! reading its config from the `<al>-config` secret, run as the listener's ServiceAccount, never
//! restarted in place (the AL controller recreates it). Its integrity hash covers its own spec and
//! the hashes of everything it depends on, so a change to any of them recreates it. A
//! `spec.template` on the AL is merged in last, field by field as ARC does.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, EnvVar, Pod, PodSpec, PodTemplateSpec, Secret, SecretVolumeSource, ServiceAccount, Volume,
    VolumeMount,
};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::listener::listener_proxy_secret_name;
use super::runner::{plain_env, secret_env};
use super::{
    BuildResult, ResourceBuilder, controller_reference, labels_of, name_of, namespace_of, string_map,
};
use crate::crd::AutoscalingListener;
use crate::crd::constants::{
    ANNOTATION_INTEGRITY_HASH, ENV_HTTP_PROXY, ENV_HTTPS_PROXY, ENV_LISTENER_CONFIG_PATH, ENV_NO_PROXY,
    LABEL_KUBERNETES_OS, LISTENER_CONFIG_MOUNT_PATH, LISTENER_CONFIG_SECRET_KEY, LISTENER_CONTAINER_NAME,
};
use crate::hash::template_hash;

/// Name of the config volume in the listener pod.
const CONFIG_VOLUME: &str = "listener-config";
/// Grace period ARC gives the listener to close its session.
const LISTENER_GRACE_PERIOD_SECONDS: i64 = 60;

/// The objects a listener pod depends on; their integrity hashes go into the pod's.
#[derive(Debug, Clone, Copy)]
pub struct ListenerPodInputs<'a> {
    /// The AutoscalingListener.
    pub listener: &'a AutoscalingListener,
    /// The `<al>-config` secret.
    pub config_secret: &'a Secret,
    /// The listener's ServiceAccount.
    pub service_account: &'a ServiceAccount,
    /// The listener's Role.
    pub role: &'a Role,
    /// The listener's RoleBinding.
    pub role_binding: &'a RoleBinding,
}

impl ResourceBuilder {
    /// The listener pod of `inputs.listener`: same name and namespace, owned by the AL.
    pub fn listener_pod(&self, inputs: ListenerPodInputs<'_>) -> BuildResult<Pod> {
        let al = inputs.listener;
        let spec = self.listener_pod_spec(inputs)?;
        let hash = listener_pod_hash(&spec, inputs)?;
        let mut pod = Pod {
            metadata: ObjectMeta {
                name: Some(name_of(al)?.to_string()),
                namespace: Some(namespace_of(al).to_string()),
                labels: Some(labels_of(al)),
                annotations: Some(string_map([(ANNOTATION_INTEGRITY_HASH, hash.as_str())])),
                owner_references: Some(vec![controller_reference(al)?]),
                ..Default::default()
            },
            spec: Some(spec),
            status: None,
        };
        if let Some(template) = &al.spec.template {
            merge_listener_pod_with_template(&mut pod, template);
        }
        Ok(pod)
    }

    fn listener_pod_spec(&self, inputs: ListenerPodInputs<'_>) -> BuildResult<PodSpec> {
        let al = inputs.listener;
        let config_path = format!("{LISTENER_CONFIG_MOUNT_PATH}/{LISTENER_CONFIG_SECRET_KEY}");
        let mut env = vec![plain_env(ENV_LISTENER_CONFIG_PATH, &config_path)];
        env.extend(listener_proxy_env(al)?);
        let container = Container {
            name: LISTENER_CONTAINER_NAME.to_string(),
            image: Some(al.spec.image.clone()),
            env: Some(env),
            command: Some(self.listener_command.clone()),
            volume_mounts: Some(vec![VolumeMount {
                name: CONFIG_VOLUME.to_string(),
                mount_path: LISTENER_CONFIG_MOUNT_PATH.to_string(),
                read_only: Some(true),
                ..Default::default()
            }]),
            ..Default::default()
        };
        let volume = Volume {
            name: CONFIG_VOLUME.to_string(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(name_of(inputs.config_secret)?.to_string()),
                ..Default::default()
            }),
            ..Default::default()
        };
        Ok(PodSpec {
            service_account_name: Some(name_of(inputs.service_account)?.to_string()),
            node_selector: Some(string_map([(LABEL_KUBERNETES_OS, "linux")])),
            containers: vec![container],
            volumes: Some(vec![volume]),
            image_pull_secrets: Some(al.spec.image_pull_secrets.clone()).filter(|s| !s.is_empty()),
            restart_policy: Some("Never".to_string()),
            termination_grace_period_seconds: Some(LISTENER_GRACE_PERIOD_SECONDS),
            ..Default::default()
        })
    }
}

/// Proxy env vars of the listener, read from `<al>-proxy`, only for the proxies configured.
fn listener_proxy_env(al: &AutoscalingListener) -> BuildResult<Vec<EnvVar>> {
    let Some(proxy) = &al.spec.proxy else { return Ok(Vec::new()) };
    let secret = listener_proxy_secret_name(al)?;
    let wanted = [
        (ENV_HTTP_PROXY, proxy.http.is_some()),
        (ENV_HTTPS_PROXY, proxy.https.is_some()),
        (ENV_NO_PROXY, !proxy.no_proxy.is_empty()),
    ];
    Ok(wanted.into_iter().filter(|(_, on)| *on).map(|(key, _)| secret_env(key, &secret, key)).collect())
}

/// ARC's `scaleSetListenerPodIntegrity`: the pod spec before the template merge, plus the
/// integrity hashes of the AL, config secret, ServiceAccount, Role and RoleBinding.
fn listener_pod_hash(spec: &PodSpec, inputs: ListenerPodInputs<'_>) -> BuildResult<String> {
    let hash_of = |meta: &ObjectMeta| {
        meta.annotations.as_ref().and_then(|a| a.get(ANNOTATION_INTEGRITY_HASH)).cloned().unwrap_or_default()
    };
    let data = serde_json::json!({
        "listenerPodSpec": spec,
        "autoscalingListenerIntegrityHash": hash_of(&inputs.listener.metadata),
        "configSecretIntegrityHash": hash_of(&inputs.config_secret.metadata),
        "serviceAccountIntegrityHash": hash_of(&inputs.service_account.metadata),
        "roleIntegrityHash": hash_of(&inputs.role.metadata),
        "roleBindingIntegrityHash": hash_of(&inputs.role_binding.metadata),
    });
    Ok(template_hash(&data)?)
}

/// ARC's `mergeListenerPodWithTemplate`: template metadata fills gaps, a template `listener`
/// container is merged into ours, other template containers are appended, and the pod-level
/// fields are taken from the template.
fn merge_listener_pod_with_template(pod: &mut Pod, template: &PodTemplateSpec) {
    let template_meta = template.metadata.clone().unwrap_or_default();
    fill_missing(pod.metadata.annotations.get_or_insert_with(BTreeMap::new), template_meta.annotations);
    fill_missing(pod.metadata.labels.get_or_insert_with(BTreeMap::new), template_meta.labels);
    let template_spec = template.spec.clone().unwrap_or_default();
    let spec = pod.spec.get_or_insert_with(PodSpec::default);
    for container in &template_spec.containers {
        match (container.name == LISTENER_CONTAINER_NAME, spec.containers.first_mut()) {
            (true, Some(listener)) => merge_listener_container(listener, container.clone()),
            _ => spec.containers.push(container.clone()),
        }
    }
    merge_pod_spec_fields(spec, template_spec);
}

fn fill_missing(target: &mut BTreeMap<String, String>, source: Option<BTreeMap<String, String>>) {
    for (key, value) in source.unwrap_or_default() {
        target.entry(key).or_insert(value);
    }
}

fn append<T>(target: &mut Option<Vec<T>>, extra: Option<Vec<T>>) {
    if let Some(extra) = extra {
        target.get_or_insert_with(Vec::new).extend(extra);
    }
}

/// ARC's `mergeListenerContainer`. The name never changes; image and command only when set;
/// list fields are appended; the rest is taken from the template as is.
fn merge_listener_container(base: &mut Container, from: Container) {
    if from.image.as_deref().is_some_and(|image| !image.is_empty()) {
        base.image = from.image;
    }
    if from.command.as_ref().is_some_and(|command| !command.is_empty()) {
        base.command = from.command;
    }
    append(&mut base.env, from.env);
    append(&mut base.args, from.args);
    append(&mut base.ports, from.ports);
    append(&mut base.env_from, from.env_from);
    append(&mut base.volume_mounts, from.volume_mounts);
    append(&mut base.volume_devices, from.volume_devices);
    base.image_pull_policy = from.image_pull_policy;
    base.working_dir = from.working_dir;
    base.resources = from.resources;
    base.liveness_probe = from.liveness_probe;
    base.readiness_probe = from.readiness_probe;
    base.startup_probe = from.startup_probe;
    base.lifecycle = from.lifecycle;
    base.termination_message_path = from.termination_message_path;
    base.termination_message_policy = from.termination_message_policy;
    base.security_context = from.security_context;
    base.resize_policy = from.resize_policy;
    base.restart_policy = from.restart_policy;
    base.stdin = from.stdin;
    base.stdin_once = from.stdin_once;
    base.tty = from.tty;
}

/// The pod-level part of the merge. As in ARC, fields other than restart policy, pull secrets,
/// node selector and volumes are copied even when the template leaves them unset (so a template
/// resets the 60 s grace period to the cluster default unless it sets its own).
fn merge_pod_spec_fields(spec: &mut PodSpec, from: PodSpec) {
    if from.restart_policy.as_deref().is_some_and(|p| !p.is_empty()) {
        spec.restart_policy = from.restart_policy;
    }
    if from.image_pull_secrets.is_some() {
        spec.image_pull_secrets = from.image_pull_secrets;
    }
    if from.node_selector.is_some() {
        spec.node_selector = from.node_selector;
    }
    append(&mut spec.volumes, from.volumes);
    spec.init_containers = from.init_containers;
    spec.ephemeral_containers = from.ephemeral_containers;
    spec.termination_grace_period_seconds = from.termination_grace_period_seconds;
    spec.active_deadline_seconds = from.active_deadline_seconds;
    spec.dns_policy = from.dns_policy;
    spec.node_name = from.node_name;
    spec.host_network = from.host_network;
    spec.host_pid = from.host_pid;
    spec.host_ipc = from.host_ipc;
    spec.share_process_namespace = from.share_process_namespace;
    spec.security_context = from.security_context;
    spec.hostname = from.hostname;
    spec.subdomain = from.subdomain;
    spec.affinity = from.affinity;
    spec.scheduler_name = from.scheduler_name;
    spec.tolerations = from.tolerations;
    spec.host_aliases = from.host_aliases;
    spec.priority_class_name = from.priority_class_name;
    spec.priority = from.priority;
    spec.dns_config = from.dns_config;
    spec.readiness_gates = from.readiness_gates;
    spec.runtime_class_name = from.runtime_class_name;
    spec.enable_service_links = from.enable_service_links;
    spec.preemption_policy = from.preemption_policy;
    spec.overhead = from.overhead;
    spec.topology_spread_constraints = from.topology_spread_constraints;
    spec.set_hostname_as_fqdn = from.set_hostname_as_fqdn;
    spec.os = from.os;
    spec.host_users = from.host_users;
    spec.scheduling_gates = from.scheduling_gates;
    spec.resource_claims = from.resource_claims;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{ProxyConfig, ProxyServerConfig};
    use crate::scaleset::resource_builder::listener::tests::{pat, stored_listener};

    fn build(al: &AutoscalingListener) -> Pod {
        let builder = ResourceBuilder::default();
        let config_secret = builder.listener_config_secret(al, &pat(), "").unwrap();
        let service_account = builder.listener_service_account(al).unwrap();
        let role = builder.listener_role(al).unwrap();
        let role_binding = builder.listener_role_binding(al, &role, &service_account).unwrap();
        let inputs = ListenerPodInputs {
            listener: al,
            config_secret: &config_secret,
            service_account: &service_account,
            role: &role,
            role_binding: &role_binding,
        };
        builder.listener_pod(inputs).unwrap()
    }

    fn integrity(pod: &Pod) -> String {
        pod.metadata.annotations.as_ref().unwrap()[ANNOTATION_INTEGRITY_HASH].clone()
    }

    #[test]
    fn the_listener_pod_runs_the_listener_with_its_config_mounted() {
        let al = stored_listener();
        let pod = build(&al);
        assert_eq!(pod.metadata.name, al.metadata.name);
        assert_eq!(pod.metadata.owner_references.as_ref().unwrap()[0].kind, "AutoscalingListener");
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
        assert_eq!(spec.service_account_name, al.metadata.name);
        let container = &spec.containers[0];
        assert_eq!(container.name, "listener");
        assert_eq!(container.command, Some(vec!["/arc-controller".to_string(), "listener".to_string()]));
        let env = container.env.as_ref().unwrap();
        assert_eq!(env[0].value.as_deref(), Some("/etc/gha-listener/config.json"));
        let volume_secret = spec.volumes.as_ref().unwrap()[0].secret.as_ref().unwrap().secret_name.clone();
        assert_eq!(volume_secret, Some(format!("{}-config", al.metadata.name.unwrap())));
    }

    #[test]
    fn the_pod_hash_changes_when_the_listener_spec_changes() {
        let al = stored_listener();
        let mut other = al.clone();
        other
            .metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(ANNOTATION_INTEGRITY_HASH.into(), "changed".into());
        assert_eq!(integrity(&build(&al)), integrity(&build(&al.clone())));
        assert_ne!(integrity(&build(&al)), integrity(&build(&other)));
    }

    #[test]
    fn a_proxied_listener_reads_its_proxy_env_from_the_proxy_secret() {
        let mut al = stored_listener();
        al.spec.proxy = Some(ProxyConfig {
            https: Some(ProxyServerConfig { url: "http://p".into(), ..Default::default() }),
            ..Default::default()
        });
        let pod = build(&al);
        let env = pod.spec.unwrap().containers[0].env.clone().unwrap();
        let names: Vec<_> = env.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["LISTENER_CONFIG_PATH", "https_proxy"]);
        let key_ref = env[1].value_from.as_ref().unwrap().secret_key_ref.as_ref().unwrap();
        assert_eq!(key_ref.name, format!("{}-proxy", al.metadata.name.unwrap()));
    }

    #[test]
    fn a_template_merges_into_the_listener_container_and_adds_sidecars() {
        let mut al = stored_listener();
        al.spec.template = Some(PodTemplateSpec {
            metadata: Some(ObjectMeta { labels: Some(string_map([("extra", "x")])), ..Default::default() }),
            spec: Some(PodSpec {
                containers: vec![
                    Container {
                        name: "listener".into(),
                        image: Some("custom:2".into()),
                        env: Some(vec![plain_env("EXTRA", "1")]),
                        ..Default::default()
                    },
                    Container { name: "sidecar".into(), ..Default::default() },
                ],
                ..Default::default()
            }),
        });
        let pod = build(&al);
        let spec = pod.spec.as_ref().unwrap();
        let names: Vec<_> = spec.containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["listener", "sidecar"]);
        assert_eq!(spec.containers[0].image.as_deref(), Some("custom:2"));
        assert_eq!(spec.containers[0].env.as_ref().unwrap().len(), 2);
        let command = vec!["/arc-controller".to_string(), "listener".to_string()];
        assert_eq!(spec.containers[0].command, Some(command));
        assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
        assert_eq!(pod.metadata.labels.as_ref().unwrap()["extra"], "x");
    }
}
