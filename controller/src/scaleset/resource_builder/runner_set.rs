//! The EphemeralRunnerSet an ARS owns (ARC-MODEL §2.2, named after the ARS since #4516) and the
//! EphemeralRunners an ERS creates (§2.3: `generateName`, both finalizers at creation since #4320,
//! the patch-id and \[V\] actionable-revision stamps).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::github_url::apply_github_url_labels;
use super::{
    BuildResult, ResourceBuilder, annotations_of, controller_reference, labels_of, merge_annotations,
    name_of, namespace_of, string_map,
};
use crate::crd::constants::{
    ANNOTATION_ACTIONABLE_REVISION, ANNOTATION_INTEGRITY_HASH, ANNOTATION_PATCH_ID,
    ANNOTATION_RUNNER_GROUP_NAME, ANNOTATION_RUNNER_SCALE_SET_NAME, COMPONENT_RUNNER, COMPONENT_RUNNER_SET,
    EPHEMERAL_RUNNER_FINALIZER, EPHEMERAL_RUNNER_REGISTRATION_FINALIZER, LABEL_COMPONENT, LABEL_PART_OF,
    LABEL_SCALE_SET_NAME, LABEL_SCALE_SET_NAMESPACE, LABEL_VALUE_PART_OF, LABEL_VERSION,
};
use crate::crd::{
    AutoscalingRunnerSet, EphemeralRunner, EphemeralRunnerSet, EphemeralRunnerSetSpec, EphemeralRunnerSpec,
};
use crate::hash::fnv_hash_string;

impl ResourceBuilder {
    /// The ERS of `ars` (ARC's `newEphemeralRunnerSet`): same name and namespace, `replicas` and
    /// `patchID` 0, the runner spec from the ARS, and the integrity hash of that runner spec.
    /// Fails when the ARS is not registered yet (no scale-set id) or its config URL is invalid.
    pub fn ephemeral_runner_set(&self, ars: &AutoscalingRunnerSet) -> BuildResult<EphemeralRunnerSet> {
        let name = name_of(ars)?;
        let namespace = namespace_of(ars);
        let spec = EphemeralRunnerSetSpec {
            replicas: 0,
            patch_id: 0,
            actionable_revision: 0,
            ephemeral_runner_spec: runner_spec_of(ars)?,
            ephemeral_runner_metadata: ars.spec.ephemeral_runner_metadata.clone(),
        };
        let ars_labels = labels_of(ars);
        let version = ars_labels.get(LABEL_VERSION).map(String::as_str).unwrap_or_default();
        let own_labels = string_map([
            (LABEL_PART_OF, LABEL_VALUE_PART_OF),
            (LABEL_COMPONENT, COMPONENT_RUNNER_SET),
            (LABEL_VERSION, version),
            (LABEL_SCALE_SET_NAME, name),
            (LABEL_SCALE_SET_NAMESPACE, namespace),
        ]);
        let mut labels = self.filter_and_merge_labels(&ars_labels, &own_labels);
        apply_github_url_labels(&ars.spec.github_config_url, &mut labels)?;
        let ars_annotations = annotations_of(ars);
        let copied = |key: &str| ars_annotations.get(key).cloned().unwrap_or_default();
        let mut annotations = [ANNOTATION_RUNNER_GROUP_NAME, ANNOTATION_RUNNER_SCALE_SET_NAME]
            .into_iter()
            .map(|key| (key.to_string(), copied(key)))
            .collect();
        if let Some(meta) = &ars.spec.ephemeral_runner_set_metadata {
            labels = self.filter_and_merge_labels(&meta.labels, &labels);
            annotations = merge_annotations(&meta.annotations, &annotations);
        }
        let mut ers = EphemeralRunnerSet {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                namespace: Some(namespace.to_string()),
                labels: Some(labels),
                owner_references: Some(vec![controller_reference(ars)?]),
                ..Default::default()
            },
            spec,
            status: None,
        };
        let hash = ers.integrity_hash()?;
        annotations.insert(ANNOTATION_INTEGRITY_HASH.to_string(), hash);
        ers.metadata.annotations = Some(annotations);
        Ok(ers)
    }

    /// A new runner of `ers` (ARC's `newEphemeralRunner` plus the ERS controller's proxy-secret
    /// reference): `generateName: <ers>-runner-`, the ERS's labels with `component=runner`, its
    /// annotations plus `patch-id` and `actionable-revision`, both finalizers, and the runner spec.
    pub fn ephemeral_runner(&self, ers: &EphemeralRunnerSet) -> BuildResult<EphemeralRunner> {
        let name = name_of(ers)?;
        let mut labels = labels_of(ers);
        labels.insert(LABEL_COMPONENT.to_string(), COMPONENT_RUNNER.to_string());
        let mut annotations = annotations_of(ers);
        annotations.insert(ANNOTATION_PATCH_ID.to_string(), ers.spec.patch_id.to_string());
        annotations
            .insert(ANNOTATION_ACTIONABLE_REVISION.to_string(), ers.spec.actionable_revision.to_string());
        if let Some(meta) = &ers.spec.ephemeral_runner_metadata {
            labels = self.filter_and_merge_labels(&meta.labels, &labels);
            annotations = merge_annotations(&meta.annotations, &annotations);
        }
        let mut spec = ers.spec.ephemeral_runner_spec.clone();
        if spec.proxy.is_some() {
            spec.proxy_secret_ref = ephemeral_runner_set_proxy_secret_name(ers)?;
        }
        Ok(EphemeralRunner {
            metadata: ObjectMeta {
                generate_name: Some(format!("{name}-runner-")),
                namespace: Some(namespace_of(ers).to_string()),
                labels: Some(labels),
                annotations: Some(annotations),
                finalizers: Some(vec![
                    EPHEMERAL_RUNNER_FINALIZER.to_string(),
                    EPHEMERAL_RUNNER_REGISTRATION_FINALIZER.to_string(),
                ]),
                owner_references: Some(vec![controller_reference(ers)?]),
                ..Default::default()
            },
            spec,
            status: None,
        })
    }
}

/// The runner spec an ARS asks for: what the ERS stores in `spec.ephemeralRunnerSpec`.
fn runner_spec_of(ars: &AutoscalingRunnerSet) -> BuildResult<EphemeralRunnerSpec> {
    Ok(EphemeralRunnerSpec {
        github_config_url: ars.spec.github_config_url.clone(),
        github_config_secret: ars.spec.github_config_secret.clone(),
        github_server_tls: ars.spec.github_server_tls.clone(),
        runner_scale_set_id: ars.runner_scale_set_id()?,
        proxy: ars.spec.proxy.clone(),
        proxy_secret_ref: String::new(),
        vault_config: ars.spec.vault_config.clone(),
        ephemeral_runner_config_secret_metadata: ars.spec.ephemeral_runner_config_secret_metadata.clone(),
        pod_template: ars.spec.template.clone(),
    })
}

/// Name of the ERS's proxy secret: `<ers>-<first 8 chars of FNV(namespace)>-runner-proxy`.
pub fn ephemeral_runner_set_proxy_secret_name(ers: &EphemeralRunnerSet) -> BuildResult<String> {
    let mut suffix = fnv_hash_string(namespace_of(ers));
    suffix.truncate(8);
    Ok(format!("{}-{suffix}-runner-proxy", name_of(ers)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::ProxyConfig;
    use crate::crd::ResourceMeta;
    use crate::scaleset::resource_builder::BuildError;
    use crate::scaleset::resource_builder::fixtures::registered_ars;

    fn stored(mut ers: EphemeralRunnerSet) -> EphemeralRunnerSet {
        ers.metadata.uid = Some("uid-ers".into());
        ers
    }

    fn label<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
        meta.labels.as_ref().and_then(|l| l.get(key)).map(String::as_str)
    }

    fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
        meta.annotations.as_ref().and_then(|a| a.get(key)).map(String::as_str)
    }

    #[test]
    fn the_runner_set_is_named_after_and_owned_by_its_ars() {
        let ers = ResourceBuilder::default().ephemeral_runner_set(&registered_ars()).unwrap();
        assert_eq!(ers.metadata.name.as_deref(), Some("arc"));
        assert_eq!(ers.metadata.namespace.as_deref(), Some("runners"));
        let owner = &ers.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.uid.as_str()), ("AutoscalingRunnerSet", "uid-ars"));
        assert_eq!((ers.spec.replicas, ers.spec.patch_id), (0, 0));
        assert_eq!(ers.spec.ephemeral_runner_spec.runner_scale_set_id, 7);
        assert_eq!(ers.spec.ephemeral_runner_spec.pod_template, registered_ars().spec.template);
    }

    #[test]
    fn the_runner_set_carries_arc_labels_and_annotations() {
        let ers = ResourceBuilder::default().ephemeral_runner_set(&registered_ars()).unwrap();
        let meta = &ers.metadata;
        assert_eq!(label(meta, "app.kubernetes.io/component"), Some("runner-set"));
        assert_eq!(label(meta, "app.kubernetes.io/part-of"), Some("gha-runner-scale-set"));
        assert_eq!(label(meta, "app.kubernetes.io/version"), Some("0.1.0"));
        assert_eq!(label(meta, "actions.github.com/scale-set-name"), Some("arc"));
        assert_eq!(label(meta, "actions.github.com/scale-set-namespace"), Some("runners"));
        assert_eq!(label(meta, "actions.github.com/organization"), Some("octo"));
        assert_eq!(label(meta, "team"), Some("ci"));
        assert_eq!(annotation(meta, "actions.github.com/runner-group-name"), Some("default"));
        assert_eq!(annotation(meta, "actions.github.com/runner-scale-set-name"), Some("arc"));
        let hash = ers.integrity_hash().unwrap();
        assert_eq!(annotation(meta, "actions.github.com/integrity-hash"), Some(hash.as_str()));
    }

    #[test]
    fn the_integrity_hash_changes_with_the_runner_template_only() {
        let builder = ResourceBuilder::default();
        let hash_of = |ars: &AutoscalingRunnerSet| {
            let ers = builder.ephemeral_runner_set(ars).unwrap();
            annotation(&ers.metadata, "actions.github.com/integrity-hash").map(str::to_string)
        };
        let base = registered_ars();
        let mut rescaled = base.clone();
        rescaled.spec.max_runners = Some(9);
        let mut retemplated = base.clone();
        retemplated.spec.template.spec.as_mut().unwrap().containers[0].image = Some("other".into());
        assert_eq!(hash_of(&base), hash_of(&rescaled));
        assert_ne!(hash_of(&base), hash_of(&retemplated));
    }

    #[test]
    fn an_unregistered_ars_has_no_runner_set_yet() {
        let mut ars = registered_ars();
        ars.metadata.annotations = None;
        let err = ResourceBuilder::default().ephemeral_runner_set(&ars).unwrap_err();
        assert!(matches!(err, BuildError::ScaleSetId(_)), "{err}");
    }

    #[test]
    fn runner_set_metadata_overrides_apply() {
        let mut ars = registered_ars();
        ars.spec.ephemeral_runner_set_metadata = Some(ResourceMeta {
            labels: string_map([("extra", "l")]),
            annotations: string_map([("note", "a")]),
        });
        let ers = ResourceBuilder::default().ephemeral_runner_set(&ars).unwrap();
        assert_eq!(label(&ers.metadata, "extra"), Some("l"));
        assert_eq!(annotation(&ers.metadata, "note"), Some("a"));
    }

    #[test]
    fn a_runner_gets_generate_name_finalizers_stamps_and_owner() {
        let builder = ResourceBuilder::default();
        let mut ers = stored(builder.ephemeral_runner_set(&registered_ars()).unwrap());
        ers.spec.patch_id = 12;
        ers.spec.actionable_revision = 3;
        let er = builder.ephemeral_runner(&ers).unwrap();
        let meta = &er.metadata;
        assert_eq!(meta.generate_name.as_deref(), Some("arc-runner-"));
        assert_eq!(meta.name, None);
        let finalizers = meta.finalizers.clone().unwrap();
        assert_eq!(
            finalizers,
            [
                "ephemeralrunner.actions.github.com/finalizer",
                "ephemeralrunner.actions.github.com/runner-registration-finalizer"
            ]
        );
        assert_eq!(annotation(meta, "actions.github.com/patch-id"), Some("12"));
        assert_eq!(annotation(meta, "actions.github.com/actionable-revision"), Some("3"));
        assert_eq!(label(meta, "app.kubernetes.io/component"), Some("runner"));
        assert_eq!(label(meta, "actions.github.com/scale-set-name"), Some("arc"));
        let owner = &meta.owner_references.as_ref().unwrap()[0];
        assert_eq!((owner.kind.as_str(), owner.controller), ("EphemeralRunnerSet", Some(true)));
        assert_eq!(er.spec, ers.spec.ephemeral_runner_spec);
    }

    #[test]
    fn a_runner_of_a_proxied_set_references_the_set_proxy_secret() {
        let mut ars = registered_ars();
        ars.spec.proxy = Some(ProxyConfig::default());
        let builder = ResourceBuilder::default();
        let ers = stored(builder.ephemeral_runner_set(&ars).unwrap());
        let er = builder.ephemeral_runner(&ers).unwrap();
        let expected = format!("arc-{}-runner-proxy", &fnv_hash_string("runners")[..8]);
        assert_eq!(er.spec.proxy_secret_ref, expected);
    }

    #[test]
    fn a_runner_cannot_be_built_from_an_unstored_set() {
        let builder = ResourceBuilder::default();
        let ers = builder.ephemeral_runner_set(&registered_ars()).unwrap();
        assert!(matches!(builder.ephemeral_runner(&ers), Err(BuildError::OwnerWithoutUid { .. })));
    }
}
