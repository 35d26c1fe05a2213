//! An EphemeralRunner's children (ARC-MODEL §2.4): the JIT config secret and the runner pod, both
//! named exactly like the runner and controller-owned by it; and the ERS's proxy secret the pods'
//! proxy env vars read from.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, Pod, Secret, SecretKeySelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::runner_set::ephemeral_runner_set_proxy_secret_name;
use super::{
    BuildError, BuildResult, ResourceBuilder, annotations_of, controller_reference, labels_of, name_of,
    namespace_of,
};
use crate::crd::constants::{
    ANNOTATION_INTEGRITY_HASH, ENV_HTTP_PROXY, ENV_HTTPS_PROXY, ENV_NO_PROXY,
    ENV_RUNNER_DEPRECATED_EXIT_CODE, ENV_RUNNER_EXTRA_USER_AGENT, ENV_RUNNER_JIT_CONFIG,
    JIT_SECRET_KEY_RUNNER_ID, JIT_SECRET_KEY_RUNNER_NAME, JIT_SECRET_KEY_SCALE_SET_ID, JIT_SECRET_KEY_TOKEN,
    LABEL_EPHEMERAL_RUNNER, LABEL_POD_TEMPLATE_HASH, LABEL_RUNNER_TEMPLATE_HASH, LABEL_SCALE_SET_NAME,
    LABEL_SCALE_SET_NAMESPACE, LABEL_VALUE_TRUE, RUNNER_CONTAINER_NAME,
};
use crate::crd::{EphemeralRunner, EphemeralRunnerSet};
use crate::hash::{ObjectsHasher, template_hash};

/// What GenerateJitRunnerConfig returned: the builder's input for the JIT secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitConfig {
    /// The encoded JIT config the runner starts with.
    pub encoded_jit_config: String,
    /// The runner's id at the service.
    pub runner_id: i64,
    /// The runner's name at the service.
    pub runner_name: String,
    /// The scale set the runner belongs to.
    pub runner_scale_set_id: i64,
}

impl ResourceBuilder {
    /// The JIT secret of `runner` (ARC's `newEphemeralRunnerJitSecret`): keys `jitToken`,
    /// `runnerName`, `runnerId`, `scaleSetId`; metadata from `ephemeralRunnerConfigSecretMetadata`.
    pub fn jit_secret(&self, runner: &EphemeralRunner, jit: &JitConfig) -> BuildResult<Secret> {
        let meta = runner.spec.ephemeral_runner_config_secret_metadata.as_ref();
        let labels = meta.map(|m| self.filter_and_merge_labels(&m.labels, &BTreeMap::new()));
        let annotations = meta.map(|m| m.annotations.clone());
        let data = [
            (JIT_SECRET_KEY_TOKEN, jit.encoded_jit_config.clone()),
            (JIT_SECRET_KEY_RUNNER_NAME, jit.runner_name.clone()),
            (JIT_SECRET_KEY_RUNNER_ID, jit.runner_id.to_string()),
            (JIT_SECRET_KEY_SCALE_SET_ID, jit.runner_scale_set_id.to_string()),
        ];
        Ok(Secret {
            metadata: ObjectMeta {
                name: Some(name_of(runner)?.to_string()),
                namespace: Some(namespace_of(runner).to_string()),
                labels,
                annotations,
                owner_references: Some(vec![controller_reference(runner)?]),
                ..Default::default()
            },
            data: Some(byte_map(data)),
            ..Default::default()
        })
    }

    /// The pod of `runner` (ARC's `createPod` + `newEphemeralRunnerPod`): the template's metadata
    /// and spec, named like the runner, labelled `actions-ephemeral-runner=True` and with the
    /// informational `pod-template-hash`; the `runner` container gets the JIT config from
    /// `secret`, the user agent, the deprecated-version exit code, and the proxy env vars.
    pub fn runner_pod(&self, runner: &EphemeralRunner, secret: &Secret) -> BuildResult<Pod> {
        let name = name_of(runner)?;
        let template_meta = runner.spec.pod_template.metadata.clone().unwrap_or_default();
        let mut annotations = annotations_of(runner);
        annotations.extend(template_meta.annotations.unwrap_or_default());
        let mut labels = labels_of(runner);
        labels.extend(template_meta.labels.unwrap_or_default());
        labels.insert(LABEL_EPHEMERAL_RUNNER.to_string(), LABEL_VALUE_TRUE.to_string());
        let hash = runner_pod_hash(&labels, &annotations, runner, secret)?;
        labels.insert(LABEL_POD_TEMPLATE_HASH.to_string(), hash);

        let mut spec = runner.spec.pod_template.spec.clone().unwrap_or_default();
        let container = spec.containers.iter_mut().find(|c| c.name == RUNNER_CONTAINER_NAME);
        let Some(container) = container else {
            return Err(BuildError::MissingRunnerContainer { runner: name.to_string() });
        };
        let env = container.env.get_or_insert_with(Vec::new);
        env.extend(self.runner_env(name_of(secret)?));
        env.extend(proxy_env(runner));
        Ok(Pod {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(namespace_of(runner).to_string()),
                labels: Some(labels),
                annotations: Some(annotations),
                owner_references: Some(vec![controller_reference(runner)?]),
                ..Default::default()
            },
            spec: Some(spec),
            status: None,
        })
    }

    /// The env vars every runner container gets, in ARC's order.
    fn runner_env(&self, secret_name: &str) -> [EnvVar; 3] {
        [
            secret_env(ENV_RUNNER_JIT_CONFIG, secret_name, JIT_SECRET_KEY_TOKEN),
            plain_env(
                ENV_RUNNER_EXTRA_USER_AGENT,
                &format!("actions-runner-controller/{}", self.controller_version),
            ),
            plain_env(ENV_RUNNER_DEPRECATED_EXIT_CODE, "1"),
        ]
    }

    /// The ERS's proxy secret (ARC's `newEphemeralRunnerSetProxySecret`) holding `data`
    /// (`http_proxy`, `https_proxy`, `no_proxy`, already resolved with credentials).
    pub fn ephemeral_runner_set_proxy_secret(
        &self,
        ers: &EphemeralRunnerSet,
        data: BTreeMap<String, String>,
    ) -> BuildResult<Secret> {
        let ers_labels = labels_of(ers);
        let copied = |key: &str| (key.to_string(), ers_labels.get(key).cloned().unwrap_or_default());
        let data = byte_map(data);
        let annotations = [(ANNOTATION_INTEGRITY_HASH.to_string(), secret_data_hash(&data)?)].into();
        Ok(Secret {
            metadata: ObjectMeta {
                name: Some(ephemeral_runner_set_proxy_secret_name(ers)?),
                namespace: Some(namespace_of(ers).to_string()),
                labels: Some([copied(LABEL_SCALE_SET_NAME), copied(LABEL_SCALE_SET_NAMESPACE)].into()),
                annotations: Some(annotations),
                owner_references: Some(vec![controller_reference(ers)?]),
                ..Default::default()
            },
            data: Some(data),
            ..Default::default()
        })
    }
}

/// `pod-template-hash` of a runner pod: FNV over the labels (minus `runner-template-hash`), the
/// annotations, the runner spec and the secret data (§2.4). Informational: nothing compares it.
fn runner_pod_hash(
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    runner: &EphemeralRunner,
    secret: &Secret,
) -> BuildResult<String> {
    let mut hashed_labels = labels.clone();
    hashed_labels.remove(LABEL_RUNNER_TEMPLATE_HASH);
    let mut hasher = ObjectsHasher::default();
    hasher.add(&hashed_labels)?.add(annotations)?.add(&runner.spec)?.add(&secret.data)?;
    Ok(hasher.finish())
}

/// §3.1 step 9: with a proxy secret, `http_proxy`/`https_proxy` only when that proxy is
/// configured and `no_proxy` only when the list is non-empty, all read from the secret.
fn proxy_env(runner: &EphemeralRunner) -> Vec<EnvVar> {
    let secret = runner.spec.proxy_secret_ref.as_str();
    let Some(proxy) = runner.spec.proxy.as_ref().filter(|_| !secret.is_empty()) else {
        return Vec::new();
    };
    [
        (ENV_HTTP_PROXY, proxy.http.is_some()),
        (ENV_HTTPS_PROXY, proxy.https.is_some()),
        (ENV_NO_PROXY, !proxy.no_proxy.is_empty()),
    ]
    .into_iter()
    .filter(|(_, wanted)| *wanted)
    .map(|(key, _)| secret_env(key, secret, key))
    .collect()
}

/// An env var with a literal value.
pub(crate) fn plain_env(name: &str, value: &str) -> EnvVar {
    EnvVar { name: name.to_string(), value: Some(value.to_string()), value_from: None }
}

/// An env var read from key `key` of secret `secret`.
pub(crate) fn secret_env(name: &str, secret: &str, key: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.to_string(),
                key: key.to_string(),
                optional: None,
            }),
            ..Default::default()
        }),
    }
}

/// Secret data from string pairs.
pub(crate) fn byte_map<K: Into<String>>(
    pairs: impl IntoIterator<Item = (K, String)>,
) -> BTreeMap<String, ByteString> {
    pairs.into_iter().map(|(k, v)| (k.into(), ByteString(v.into_bytes()))).collect()
}

/// Integrity hash of a secret's data (ARC hashes `{data}` for proxy and config secrets).
pub(crate) fn secret_data_hash(data: &BTreeMap<String, ByteString>) -> BuildResult<String> {
    #[derive(serde::Serialize)]
    struct Data<'a> {
        data: &'a BTreeMap<String, ByteString>,
    }
    Ok(template_hash(&Data { data })?)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Container;

    use super::*;
    use crate::crd::{EphemeralRunnerSpec, ProxyConfig, ProxyServerConfig, ResourceMeta};
    use crate::scaleset::resource_builder::fixtures::runner_template;
    use crate::scaleset::resource_builder::string_map;

    fn stored_runner() -> EphemeralRunner {
        let mut runner = EphemeralRunner::new(
            "arc-runner-abcde",
            EphemeralRunnerSpec {
                github_config_url: "https://github.com/octo".into(),
                runner_scale_set_id: 7,
                pod_template: runner_template(),
                ..Default::default()
            },
        );
        runner.metadata.namespace = Some("runners".into());
        runner.metadata.uid = Some("uid-er".into());
        runner.metadata.labels = Some(string_map([("app.kubernetes.io/component", "runner")]));
        runner.metadata.annotations = Some(string_map([("actions.github.com/patch-id", "3")]));
        runner
    }

    fn jit() -> JitConfig {
        JitConfig {
            encoded_jit_config: "ENCODED".into(),
            runner_id: 42,
            runner_name: "arc-runner-abcde".into(),
            runner_scale_set_id: 7,
        }
    }

    fn secret_for(runner: &EphemeralRunner) -> Secret {
        ResourceBuilder::default().jit_secret(runner, &jit()).unwrap()
    }

    fn runner_container(pod: &Pod) -> &Container {
        pod.spec.as_ref().unwrap().containers.iter().find(|c| c.name == "runner").unwrap()
    }

    fn env_names(pod: &Pod) -> Vec<String> {
        runner_container(pod).env.iter().flatten().map(|e| e.name.clone()).collect()
    }

    #[test]
    fn the_jit_secret_has_the_four_keys_and_the_runner_name() {
        let runner = stored_runner();
        let secret = secret_for(&runner);
        assert_eq!(secret.metadata.name.as_deref(), Some("arc-runner-abcde"));
        assert_eq!(secret.metadata.namespace.as_deref(), Some("runners"));
        let data = secret.data.unwrap();
        let text = |k: &str| String::from_utf8(data[k].0.clone()).unwrap();
        assert_eq!(text("jitToken"), "ENCODED");
        assert_eq!(text("runnerName"), "arc-runner-abcde");
        assert_eq!(text("runnerId"), "42");
        assert_eq!(text("scaleSetId"), "7");
        assert_eq!(secret.metadata.owner_references.unwrap()[0].uid, "uid-er");
    }

    #[test]
    fn the_jit_secret_takes_the_configured_metadata() {
        let mut runner = stored_runner();
        runner.spec.ephemeral_runner_config_secret_metadata =
            Some(ResourceMeta { labels: string_map([("l", "1")]), annotations: string_map([("a", "2")]) });
        let secret = secret_for(&runner);
        assert_eq!(secret.metadata.labels, Some(string_map([("l", "1")])));
        assert_eq!(secret.metadata.annotations, Some(string_map([("a", "2")])));
    }

    #[test]
    fn the_pod_is_named_like_the_runner_and_marked_as_a_runner_pod() {
        let runner = stored_runner();
        let pod = ResourceBuilder::default().runner_pod(&runner, &secret_for(&runner)).unwrap();
        let labels = pod.metadata.labels.clone().unwrap();
        assert_eq!(pod.metadata.name.as_deref(), Some("arc-runner-abcde"));
        assert_eq!(labels.get("actions-ephemeral-runner").map(String::as_str), Some("True"));
        assert_eq!(labels.get("template-label").map(String::as_str), Some("t"));
        assert_eq!(labels.get("app.kubernetes.io/component").map(String::as_str), Some("runner"));
        assert!(labels.contains_key("pod-template-hash"));
        let annotations = pod.metadata.annotations.clone().unwrap();
        assert_eq!(annotations.get("actions.github.com/patch-id").map(String::as_str), Some("3"));
        let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("EphemeralRunner", "arc-runner-abcde"));
        assert_eq!(pod.spec.as_ref().unwrap().restart_policy.as_deref(), Some("Never"));
    }

    #[test]
    fn the_runner_container_reads_its_jit_config_from_the_secret() {
        let runner = stored_runner();
        let pod = ResourceBuilder::default().runner_pod(&runner, &secret_for(&runner)).unwrap();
        let env = runner_container(&pod).env.clone().unwrap();
        let jit = env.iter().find(|e| e.name == "ACTIONS_RUNNER_INPUT_JITCONFIG").unwrap();
        let key_ref = jit.value_from.as_ref().unwrap().secret_key_ref.as_ref().unwrap();
        assert_eq!((key_ref.name.as_str(), key_ref.key.as_str()), ("arc-runner-abcde", "jitToken"));
        let exit_code = env.iter().find(|e| e.name == "ACTIONS_RUNNER_RETURN_VERSION_DEPRECATED_EXIT_CODE");
        assert_eq!(exit_code.and_then(|e| e.value.as_deref()), Some("1"));
        let agent = env.iter().find(|e| e.name == "GITHUB_ACTIONS_RUNNER_EXTRA_USER_AGENT").unwrap();
        assert!(agent.value.as_deref().unwrap().starts_with("actions-runner-controller/"));
    }

    #[test]
    fn the_pod_hash_changes_with_the_secret_data() {
        let builder = ResourceBuilder::default();
        let runner = stored_runner();
        let secret = secret_for(&runner);
        let mut other_secret = secret.clone();
        other_secret.data.as_mut().unwrap().insert("jitToken".into(), ByteString(b"OTHER".to_vec()));
        let hash = |s: &Secret| {
            builder.runner_pod(&runner, s).unwrap().metadata.labels.unwrap()["pod-template-hash"].clone()
        };
        assert_eq!(hash(&secret), hash(&secret.clone()));
        assert_ne!(hash(&secret), hash(&other_secret));
    }

    #[test]
    fn proxy_env_vars_follow_the_configured_proxies() {
        let mut runner = stored_runner();
        runner.spec.proxy_secret_ref = "proxy-secret".into();
        runner.spec.proxy = Some(ProxyConfig {
            http: Some(ProxyServerConfig { url: "http://p".into(), ..Default::default() }),
            https: None,
            no_proxy: vec!["internal".into()],
        });
        let pod = ResourceBuilder::default().runner_pod(&runner, &secret_for(&runner)).unwrap();
        let names = env_names(&pod);
        assert!(names.contains(&"http_proxy".to_string()));
        assert!(!names.contains(&"https_proxy".to_string()));
        assert!(names.contains(&"no_proxy".to_string()));
    }

    #[test]
    fn without_a_proxy_secret_no_proxy_env_is_added() {
        let mut runner = stored_runner();
        runner.spec.proxy = Some(ProxyConfig { no_proxy: vec!["x".into()], ..Default::default() });
        let pod = ResourceBuilder::default().runner_pod(&runner, &secret_for(&runner)).unwrap();
        assert!(!env_names(&pod).iter().any(|n| n.ends_with("_proxy")));
    }

    #[test]
    fn a_template_without_runner_container_is_an_error() {
        let mut runner = stored_runner();
        runner.spec.pod_template.spec.as_mut().unwrap().containers[0].name = "worker".into();
        let err = ResourceBuilder::default().runner_pod(&runner, &secret_for(&runner)).unwrap_err();
        assert!(matches!(err, BuildError::MissingRunnerContainer { .. }), "{err}");
    }

    #[test]
    fn the_set_proxy_secret_is_named_labelled_and_hashed() {
        let mut ers = EphemeralRunnerSet::new("arc", Default::default());
        ers.metadata.namespace = Some("runners".into());
        ers.metadata.uid = Some("uid-ers".into());
        ers.metadata.labels = Some(string_map([("actions.github.com/scale-set-name", "arc")]));
        let data = string_map([("http_proxy", "http://p")]);
        let secret = ResourceBuilder::default().ephemeral_runner_set_proxy_secret(&ers, data).unwrap();
        assert!(secret.metadata.name.unwrap().ends_with("-runner-proxy"));
        let labels = secret.metadata.labels.unwrap();
        assert_eq!(labels.get("actions.github.com/scale-set-name").map(String::as_str), Some("arc"));
        assert!(secret.metadata.annotations.unwrap().contains_key("actions.github.com/integrity-hash"));
    }
}
