//! Upstream's runner-spec step (ARC-MODEL §3.2 step 4, ARC HEAD's #4516 form), taken when the
//! `scaling.actionable_revision` switch is off: when the set's `actions.github.com/integrity-hash`
//! annotation differs from the hash of its `spec.ephemeralRunnerSpec`, clean up the idle and pending
//! runners (so their replacements get the new spec), reconcile the proxy secret, and write the new
//! hash into the annotation (a plain merge patch). The pass ends there; the annotation's own event
//! brings the next one.

use super::EphemeralRunnerSetReconciler;
use crate::crd::EphemeralRunnerSet;
use crate::crd::constants::ANNOTATION_INTEGRITY_HASH;
use crate::kit::error::Result;
use crate::kit::meta::namespace_and_name;
use crate::runtime::lazy_copy::LazyCopy;
use crate::runtime::outcome::Outcome;
use crate::scaleset::resource_builder::BuildError;

/// The hash `ers`'s runner spec has now, when its annotation records another (or none).
pub(crate) fn stale_integrity_hash(ers: &EphemeralRunnerSet) -> Result<Option<String>> {
    let current = ers.integrity_hash().map_err(BuildError::from)?;
    let recorded = ers.metadata.annotations.as_ref().and_then(|a| a.get(ANNOTATION_INTEGRITY_HASH));
    Ok((recorded != Some(&current)).then_some(current))
}

impl EphemeralRunnerSetReconciler {
    /// Cleans up for the spec whose hash is `hash`, then records the hash on the set.
    pub(crate) async fn apply_spec_hash(
        &self,
        ers: &mut LazyCopy<EphemeralRunnerSet>,
        hash: String,
    ) -> Result<Outcome> {
        tracing::info!(
            "EphemeralRunnerSpec has changed, deleting idle ephemeral runners to apply the new spec"
        );
        self.clean_up_runners(ers.get()).await?;
        self.reconcile_proxy_secret(ers.get()).await?;
        tracing::info!("Updating EphemeralRunnerSet with new spec hash");
        ers.mutate()
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(ANNOTATION_INTEGRITY_HASH.to_string(), hash);
        let patch = ers.merge_patch()?;
        let (namespace, name) = namespace_and_name(ers.get());
        self.ctx.api.patch_merge::<EphemeralRunnerSet>(namespace, name, &patch).await?;
        Ok(Outcome::Done)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::crd::EphemeralRunnerSetSpec;

    fn set_with_hash(hash: Option<&str>) -> EphemeralRunnerSet {
        let mut ers = EphemeralRunnerSet::new("arc", EphemeralRunnerSetSpec::default());
        ers.metadata.annotations =
            hash.map(|h| BTreeMap::from([(ANNOTATION_INTEGRITY_HASH.to_string(), h.to_string())]));
        ers
    }

    #[test]
    fn a_set_whose_annotation_matches_its_runner_spec_is_not_stale() {
        let hash = set_with_hash(None).integrity_hash().unwrap();
        assert_eq!(stale_integrity_hash(&set_with_hash(Some(&hash))).unwrap(), None);
    }

    #[test]
    fn a_missing_or_different_annotation_is_stale_and_the_current_hash_is_returned() {
        let hash = set_with_hash(None).integrity_hash().unwrap();
        assert_eq!(stale_integrity_hash(&set_with_hash(None)).unwrap(), Some(hash.clone()));
        assert_eq!(stale_integrity_hash(&set_with_hash(Some("refresh-1"))).unwrap(), Some(hash));
    }
}
