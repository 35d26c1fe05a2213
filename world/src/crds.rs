//! ARC's CustomResourceDefinitions as the fake API server reads them: the manifests the controller
//! ships (`controller/crds/arc.yaml`, what `arc-controller crds` prints), turned into a JSON stream at
//! build time (`world/build.rs`; the same documents, tested) and parsed once per process. The
//! world is where the controller and the fakes meet, so this is the one place that turns the
//! controller's CRDs into data for the API server; every world, test, bench and `arcsim apiserver`
//! takes them from here.

use std::sync::OnceLock;

use arc_sim::apiserver::CrdSet;

/// The label ARC's CRDs carry in parse errors.
const SOURCE: &str = "controller/crds/arc.yaml";

/// [`arc_controller::crd::MANIFESTS`] as a JSON stream, one document a line (`world/build.rs`).
const MANIFESTS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/arc-crds.json"));

/// ARC's five CRDs (the scale-set family and the legacy Runner), parsed.
pub fn arc_crds() -> &'static CrdSet {
    static CRDS: OnceLock<CrdSet> = OnceLock::new();
    CRDS.get_or_init(|| {
        CrdSet::from_manifests(SOURCE, MANIFESTS_JSON)
            .unwrap_or_else(|e| panic!("arc-controller's CRDs must be servable: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_crds_define_the_five_kinds_with_their_schemas() {
        let kinds: Vec<&str> = arc_crds().crds().iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "AutoscalingRunnerSet",
                "EphemeralRunnerSet",
                "EphemeralRunner",
                "AutoscalingListener",
                "Runner"
            ]
        );
        for crd in arc_crds().crds() {
            assert!(crd.namespaced && crd.status_subresource && crd.version == "v1alpha1", "{}", crd.name);
            assert!(crd.schema.properties.contains_key("spec"), "{}", crd.name);
        }
    }

    #[test]
    fn the_json_built_from_the_shipped_yaml_defines_the_same_crds() {
        let from_yaml = CrdSet::from_manifests(SOURCE, arc_controller::crd::MANIFESTS).unwrap();
        assert_eq!(arc_crds(), &from_yaml);
    }
}
