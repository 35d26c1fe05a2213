//! The AutoscalingListener of an ARS (ARC-MODEL §2.5) and the resources the AL controller creates
//! for it (§3.4): ServiceAccount, Role and RoleBinding (in the ARS namespace, so the listener may
//! patch its ERS and its runners' status), the config secret and the proxy secret. Each carries
//! an `actions.github.com/integrity-hash` of the fields whose change needs a recreate.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{LocalObjectReference, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::github_url::apply_github_url_labels;
use super::listener_config::ListenerConfig;
use super::runner::{byte_map, secret_data_hash};
use super::{
    BuildError, BuildResult, ResourceBuilder, controller_reference, labels_of, merge_annotations, name_of,
    namespace_of, string_map,
};
use crate::crd::constants::{
    ANNOTATION_INTEGRITY_HASH, COMPONENT_LISTENER, LABEL_COMPONENT, LABEL_LISTENER_NAME,
    LABEL_LISTENER_NAMESPACE, LABEL_PART_OF, LABEL_SCALE_SET_NAME, LABEL_SCALE_SET_NAMESPACE,
    LABEL_VALUE_PART_OF, LABEL_VERSION, LISTENER_CONFIG_SECRET_KEY, SCALESET_GROUP,
};
use crate::crd::{AutoscalingListener, AutoscalingListenerSpec, AutoscalingRunnerSet, EphemeralRunnerSet};
use crate::github::GitHubCredentials;
use crate::hash::{listener_name, template_hash};

/// The RBAC API group, for the RoleBinding's `roleRef`.
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

impl ResourceBuilder {
    /// The AL of `ars` (ARC's `newAutoscalingListener`), in the controller `namespace`, serving
    /// `ers`, running `image`. Not owner-referenced: it lives in another namespace than its ARS.
    pub fn autoscaling_listener(
        &self,
        ars: &AutoscalingRunnerSet,
        ers: &EphemeralRunnerSet,
        namespace: &str,
        image: &str,
        image_pull_secrets: &[LocalObjectReference],
    ) -> BuildResult<AutoscalingListener> {
        let ars_name = name_of(ars)?;
        let ars_namespace = namespace_of(ars);
        let spec = AutoscalingListenerSpec {
            github_config_url: ars.spec.github_config_url.clone(),
            github_config_secret: ars.spec.github_config_secret.clone(),
            runner_scale_set_id: ars.runner_scale_set_id()?,
            autoscaling_runner_set_namespace: ars_namespace.to_string(),
            autoscaling_runner_set_name: ars_name.to_string(),
            ephemeral_runner_set_name: name_of(ers)?.to_string(),
            max_runners: ars.effective_max_runners(),
            min_runners: ars.effective_min_runners(),
            image: image.to_string(),
            image_pull_secrets: image_pull_secrets.to_vec(),
            proxy: ars.spec.proxy.clone(),
            github_server_tls: ars.spec.github_server_tls.clone(),
            vault_config: ars.spec.vault_config.clone(),
            metrics: ars.spec.listener_metrics.clone(),
            template: ars.spec.listener_template.clone(),
            config_secret_metadata: ars.spec.listener_config_secret_metadata.clone(),
            service_account_metadata: ars.spec.listener_service_account_metadata.clone(),
            role_metadata: ars.spec.listener_role_metadata.clone(),
            role_binding_metadata: ars.spec.listener_role_binding_metadata.clone(),
        };
        let ars_labels = labels_of(ars);
        let version = ars_labels.get(LABEL_VERSION).map(String::as_str).unwrap_or_default();
        let own_labels = string_map([
            (LABEL_SCALE_SET_NAMESPACE, ars_namespace),
            (LABEL_SCALE_SET_NAME, ars_name),
            (LABEL_PART_OF, LABEL_VALUE_PART_OF),
            (LABEL_COMPONENT, COMPONENT_LISTENER),
            (LABEL_VERSION, version),
        ]);
        let mut labels = self.filter_and_merge_labels(&ars_labels, &own_labels);
        apply_github_url_labels(&ars.spec.github_config_url, &mut labels)?;
        let mut annotations = string_map([(ANNOTATION_INTEGRITY_HASH, spec.integrity_hash()?.as_str())]);
        if let Some(meta) = &ars.spec.autoscaling_listener_metadata {
            labels = self.filter_and_merge_labels(&meta.labels, &labels);
            annotations = merge_annotations(&meta.annotations, &annotations);
        }
        let name =
            listener_name(ars_name, ars_namespace, &ars.spec.runner_group, &ars.spec.github_config_url);
        Ok(AutoscalingListener {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(namespace.to_string()),
                labels: Some(labels),
                annotations: Some(annotations),
                ..Default::default()
            },
            spec,
            status: None,
        })
    }

    /// The listener's ServiceAccount: same name and namespace as the AL, owned by it.
    pub fn listener_service_account(&self, al: &AutoscalingListener) -> BuildResult<ServiceAccount> {
        let mut labels = self.filter_and_merge_labels(&labels_of(al), &scale_set_labels(al));
        let mut annotations = BTreeMap::new();
        if let Some(meta) = &al.spec.service_account_metadata {
            labels = self.filter_and_merge_labels(&meta.labels, &labels);
            annotations = merge_annotations(&meta.annotations, &annotations);
        }
        let mut account = ServiceAccount {
            metadata: ObjectMeta {
                name: Some(name_of(al)?.to_string()),
                namespace: Some(namespace_of(al).to_string()),
                labels: Some(labels),
                owner_references: Some(vec![controller_reference(al)?]),
                ..Default::default()
            },
            ..Default::default()
        };
        annotations.insert(ANNOTATION_INTEGRITY_HASH.to_string(), service_account_hash(&account)?);
        account.metadata.annotations = Some(annotations);
        Ok(account)
    }

    /// The listener's Role, in the ARS namespace: `patch` on its ERS by name, and `get`/`patch` on
    /// EphemeralRunners and their status. Not owner-referenced (cross-namespace); the AL controller
    /// finds it through the `auto-scaling-listener-{namespace,name}` labels.
    ///
    /// ARC grants only `patch` on runners; `get` is added because the \[V\] listener reads the
    /// runner before its guarded Running write (ARC-MODEL §5.2).
    pub fn listener_role(&self, al: &AutoscalingListener) -> BuildResult<Role> {
        let (labels, annotations) = self.listener_rbac_metadata(al, al.spec.role_metadata.as_ref());
        let rules = listener_role_rules(&al.spec.ephemeral_runner_set_name);
        let hash = template_hash(&serde_json::json!({ "rules": &rules }))?;
        Ok(Role {
            metadata: ObjectMeta {
                name: Some(name_of(al)?.to_string()),
                namespace: Some(al.spec.autoscaling_runner_set_namespace.clone()),
                labels: Some(labels),
                annotations: Some(with_hash(annotations, hash)),
                ..Default::default()
            },
            rules: Some(rules),
        })
    }

    /// The listener's RoleBinding: `role` granted to `account`, in the ARS namespace.
    pub fn listener_role_binding(
        &self,
        al: &AutoscalingListener,
        role: &Role,
        account: &ServiceAccount,
    ) -> BuildResult<RoleBinding> {
        let (labels, annotations) = self.listener_rbac_metadata(al, al.spec.role_binding_metadata.as_ref());
        let role_ref = RoleRef {
            api_group: RBAC_GROUP.to_string(),
            kind: "Role".to_string(),
            name: name_of(role)?.into(),
        };
        let subjects = vec![Subject {
            kind: "ServiceAccount".to_string(),
            name: name_of(account)?.to_string(),
            namespace: account.metadata.namespace.clone(),
            api_group: None,
        }];
        let hash = template_hash(&serde_json::json!({ "roleRef": &role_ref, "subjects": &subjects }))?;
        Ok(RoleBinding {
            metadata: ObjectMeta {
                name: Some(name_of(al)?.to_string()),
                namespace: Some(al.spec.autoscaling_runner_set_namespace.clone()),
                labels: Some(labels),
                annotations: Some(with_hash(annotations, hash)),
                ..Default::default()
            },
            role_ref,
            subjects: Some(subjects),
        })
    }

    fn listener_rbac_metadata(
        &self,
        al: &AutoscalingListener,
        meta: Option<&crate::crd::ResourceMeta>,
    ) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        let mut own = scale_set_labels(al);
        own.insert(LABEL_LISTENER_NAMESPACE.to_string(), namespace_of(al).to_string());
        own.insert(LABEL_LISTENER_NAME.to_string(), al.metadata.name.clone().unwrap_or_default());
        let labels = self.filter_and_merge_labels(&labels_of(al), &own);
        match meta {
            Some(meta) => (self.filter_and_merge_labels(&meta.labels, &labels), meta.annotations.clone()),
            None => (labels, BTreeMap::new()),
        }
    }

    /// The listener config of `al` with `credentials` (from the ARS's GitHub config secret).
    pub fn listener_config(
        &self,
        al: &AutoscalingListener,
        credentials: &GitHubCredentials,
        server_root_ca: &str,
    ) -> BuildResult<ListenerConfig> {
        let config = ListenerConfig {
            configure_url: al.spec.github_config_url.clone(),
            github_config_secret: al.spec.github_config_secret.clone(),
            credentials: credentials.clone(),
            ephemeral_runner_set_namespace: al.spec.autoscaling_runner_set_namespace.clone(),
            ephemeral_runner_set_name: al.spec.ephemeral_runner_set_name.clone(),
            max_runners: al.spec.max_runners,
            min_runners: al.spec.min_runners,
            runner_scale_set_id: al.spec.runner_scale_set_id,
            runner_scale_set_name: al.spec.autoscaling_runner_set_name.clone(),
            log_level: self.listener_log_level.clone(),
            log_format: self.listener_log_format.clone(),
            server_root_ca: server_root_ca.to_string(),
        };
        config.validate().map_err(|e| BuildError::ListenerConfig(e.to_string()))?;
        Ok(config)
    }

    /// The `<al>-config` secret holding `config.json` (ARC's `newScaleSetListenerConfig`).
    pub fn listener_config_secret(
        &self,
        al: &AutoscalingListener,
        credentials: &GitHubCredentials,
        server_root_ca: &str,
    ) -> BuildResult<Secret> {
        let config = self.listener_config(al, credentials, server_root_ca)?;
        let mut json = serde_json::to_string(&config).map_err(BuildError::Encode)?;
        json.push('\n');
        let data = byte_map([(LISTENER_CONFIG_SECRET_KEY, json)]);
        let meta = al.spec.config_secret_metadata.as_ref();
        let labels = meta
            .filter(|m| !m.labels.is_empty())
            .map(|m| self.filter_and_merge_labels(&m.labels, &BTreeMap::new()));
        let annotations = meta.map(|m| m.annotations.clone()).unwrap_or_default();
        Ok(Secret {
            metadata: ObjectMeta {
                name: Some(listener_config_secret_name(al)?),
                namespace: Some(namespace_of(al).to_string()),
                labels,
                annotations: Some(with_hash(annotations, secret_data_hash(&data)?)),
                owner_references: Some(vec![controller_reference(al)?]),
                ..Default::default()
            },
            data: Some(data),
            ..Default::default()
        })
    }

    /// The `<al>-proxy` secret holding resolved proxy settings `data` for the listener pod.
    pub fn listener_proxy_secret(
        &self,
        al: &AutoscalingListener,
        data: BTreeMap<String, String>,
    ) -> BuildResult<Secret> {
        let data = byte_map(data);
        Ok(Secret {
            metadata: ObjectMeta {
                name: Some(listener_proxy_secret_name(al)?),
                namespace: Some(namespace_of(al).to_string()),
                labels: Some(scale_set_labels(al)),
                annotations: Some(with_hash(BTreeMap::new(), secret_data_hash(&data)?)),
                owner_references: Some(vec![controller_reference(al)?]),
                ..Default::default()
            },
            data: Some(data),
            ..Default::default()
        })
    }
}

/// `actions.github.com/scale-set-{namespace,name}` of the ARS an AL serves.
fn scale_set_labels(al: &AutoscalingListener) -> BTreeMap<String, String> {
    string_map([
        (LABEL_SCALE_SET_NAMESPACE, al.spec.autoscaling_runner_set_namespace.as_str()),
        (LABEL_SCALE_SET_NAME, al.spec.autoscaling_runner_set_name.as_str()),
    ])
}

fn with_hash(mut annotations: BTreeMap<String, String>, hash: String) -> BTreeMap<String, String> {
    annotations.insert(ANNOTATION_INTEGRITY_HASH.to_string(), hash);
    annotations
}

/// ARC's SA integrity hash: secrets, pull secrets and token automount.
fn service_account_hash(account: &ServiceAccount) -> BuildResult<String> {
    let data = serde_json::json!({
        "secrets": &account.secrets,
        "imagePullSecrets": &account.image_pull_secrets,
        "automountServiceAccountToken": &account.automount_service_account_token,
    });
    Ok(template_hash(&data)?)
}

/// The listener's permissions: patch its own ERS, get and patch runners and their status.
fn listener_role_rules(ers_name: &str) -> Vec<PolicyRule> {
    let strings = |items: &[&str]| Some(items.iter().map(|s| s.to_string()).collect());
    vec![
        PolicyRule {
            api_groups: strings(&[SCALESET_GROUP]),
            resources: strings(&["ephemeralrunnersets"]),
            resource_names: strings(&[ers_name]),
            verbs: vec!["patch".to_string()],
            non_resource_urls: None,
        },
        PolicyRule {
            api_groups: strings(&[SCALESET_GROUP]),
            resources: strings(&["ephemeralrunners", "ephemeralrunners/status"]),
            resource_names: None,
            verbs: vec!["get".to_string(), "patch".to_string()],
            non_resource_urls: None,
        },
    ]
}

/// `<al>-config`.
pub fn listener_config_secret_name(al: &AutoscalingListener) -> BuildResult<String> {
    Ok(format!("{}-config", name_of(al)?))
}

/// `<al>-proxy`.
pub fn listener_proxy_secret_name(al: &AutoscalingListener) -> BuildResult<String> {
    Ok(format!("{}-proxy", name_of(al)?))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::crd::ResourceMeta;
    use crate::scaleset::resource_builder::fixtures::registered_ars;

    pub(crate) fn stored_listener() -> AutoscalingListener {
        let builder = ResourceBuilder::default();
        let ars = registered_ars();
        let ers = builder.ephemeral_runner_set(&ars).unwrap();
        let mut al = builder.autoscaling_listener(&ars, &ers, "arc-systems", "listener:1", &[]).unwrap();
        al.metadata.uid = Some("uid-al".into());
        al
    }

    pub(crate) fn pat() -> GitHubCredentials {
        GitHubCredentials { github_token: "ghp_x".into(), ..Default::default() }
    }

    #[test]
    fn the_listener_is_named_by_hash_and_lives_in_the_controller_namespace() {
        let al = stored_listener();
        let expected = listener_name("arc", "runners", "", "https://github.com/octo");
        assert_eq!(al.metadata.name.as_deref(), Some(expected.as_str()));
        assert_eq!(al.metadata.namespace.as_deref(), Some("arc-systems"));
        assert_eq!(al.metadata.owner_references, None);
    }

    #[test]
    fn the_listener_spec_carries_the_effective_bounds_and_coordinates() {
        let spec = stored_listener().spec;
        assert_eq!((spec.min_runners, spec.max_runners), (1, i32::MAX));
        assert_eq!(spec.runner_scale_set_id, 7);
        assert_eq!(spec.autoscaling_runner_set_namespace, "runners");
        assert_eq!(spec.autoscaling_runner_set_name, "arc");
        assert_eq!(spec.ephemeral_runner_set_name, "arc");
        assert_eq!(spec.image, "listener:1");
    }

    #[test]
    fn the_listener_hash_follows_its_spec() {
        let al = stored_listener();
        let hash = al.metadata.annotations.as_ref().unwrap()["actions.github.com/integrity-hash"].clone();
        assert_eq!(hash, al.spec.integrity_hash().unwrap());
        let labels = al.metadata.labels.unwrap();
        assert_eq!(labels["app.kubernetes.io/component"], "runner-scale-set-listener");
        assert_eq!(labels["actions.github.com/organization"], "octo");
    }

    #[test]
    fn the_service_account_is_owned_by_the_listener() {
        let al = stored_listener();
        let sa = ResourceBuilder::default().listener_service_account(&al).unwrap();
        assert_eq!(sa.metadata.name, al.metadata.name);
        assert_eq!(sa.metadata.namespace.as_deref(), Some("arc-systems"));
        assert_eq!(sa.metadata.owner_references.unwrap()[0].uid, "uid-al");
        assert!(sa.metadata.annotations.unwrap().contains_key("actions.github.com/integrity-hash"));
    }

    #[test]
    fn the_role_lets_the_listener_patch_only_its_runner_set_and_runner_status() {
        let al = stored_listener();
        let role = ResourceBuilder::default().listener_role(&al).unwrap();
        assert_eq!(role.metadata.namespace.as_deref(), Some("runners"));
        let labels = role.metadata.labels.clone().unwrap();
        assert_eq!(labels["auto-scaling-listener-namespace"], "arc-systems");
        assert_eq!(labels["auto-scaling-listener-name"], al.metadata.name.clone().unwrap());
        let rules = role.rules.unwrap();
        assert_eq!(rules[0].resources, Some(vec!["ephemeralrunnersets".to_string()]));
        assert_eq!(rules[0].resource_names, Some(vec!["arc".to_string()]));
        assert_eq!(rules[0].verbs, ["patch"]);
        let runner_resources = rules[1].resources.clone().unwrap();
        assert!(runner_resources.contains(&"ephemeralrunners/status".to_string()));
    }

    #[test]
    fn the_role_binding_grants_the_role_to_the_service_account() {
        let builder = ResourceBuilder::default();
        let al = stored_listener();
        let sa = builder.listener_service_account(&al).unwrap();
        let role = builder.listener_role(&al).unwrap();
        let binding = builder.listener_role_binding(&al, &role, &sa).unwrap();
        assert_eq!(binding.role_ref.name, role.metadata.name.unwrap());
        assert_eq!(binding.role_ref.api_group, "rbac.authorization.k8s.io");
        let subject = &binding.subjects.unwrap()[0];
        assert_eq!(
            (subject.kind.as_str(), subject.namespace.as_deref()),
            ("ServiceAccount", Some("arc-systems"))
        );
    }

    #[test]
    fn the_config_secret_holds_a_valid_listener_config() {
        let al = stored_listener();
        let secret = ResourceBuilder::default().listener_config_secret(&al, &pat(), "").unwrap();
        assert_eq!(secret.metadata.name, Some(format!("{}-config", al.metadata.name.unwrap())));
        let bytes = &secret.data.unwrap()["config.json"].0;
        let config = ListenerConfig::from_json(bytes).unwrap();
        assert_eq!(config.runner_scale_set_id, 7);
        assert_eq!((config.min_runners, config.max_runners), (1, i32::MAX));
        assert_eq!(config.ephemeral_runner_set_namespace, "runners");
        assert_eq!(config.github_config_secret, "gh-secret");
        assert_eq!(config.credentials, pat());
    }

    #[test]
    fn the_config_secret_hash_changes_with_the_credentials() {
        let builder = ResourceBuilder::default();
        let al = stored_listener();
        let hash = |c: &GitHubCredentials| {
            let secret = builder.listener_config_secret(&al, c, "").unwrap();
            secret.metadata.annotations.unwrap()["actions.github.com/integrity-hash"].clone()
        };
        let other = GitHubCredentials { github_token: "ghp_y".into(), ..Default::default() };
        assert_ne!(hash(&pat()), hash(&other));
    }

    #[test]
    fn no_credentials_means_no_config_secret() {
        let al = stored_listener();
        let err = ResourceBuilder::default()
            .listener_config_secret(&al, &GitHubCredentials::default(), "")
            .unwrap_err();
        assert!(matches!(err, BuildError::ListenerConfig(_)), "{err}");
    }

    #[test]
    fn listener_metadata_overrides_apply_to_the_service_account() {
        let mut al = stored_listener();
        al.spec.service_account_metadata =
            Some(ResourceMeta { labels: string_map([("sa", "1")]), annotations: string_map([("n", "2")]) });
        let sa = ResourceBuilder::default().listener_service_account(&al).unwrap();
        assert_eq!(sa.metadata.labels.unwrap()["sa"], "1");
        assert_eq!(sa.metadata.annotations.unwrap()["n"], "2");
    }
}
