//! Test fixtures for the apiserver's unit tests: a registry with the built-in kinds, a small
//! EphemeralRunner-shaped CRD (namespaced, status subresource, open spec and status) and the Widget
//! CRD of `sim/tests/apiserver/fixtures/widgets.yaml`. The CRDs are data: the apiserver never sees
//! arc-controller's types.

use super::crd::CrdSet;
use super::registry::{Registry, ResourceType};

/// An EphemeralRunner CRD whose spec and status keep any field (unit tests exercise the server's
/// bookkeeping, not the schema).
pub(crate) const RUNNER_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ephemeralrunners.actions.github.com
spec:
  group: actions.github.com
  names: {kind: EphemeralRunner, plural: ephemeralrunners}
  scope: Namespaced
  versions:
    - name: v1alpha1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

/// The Widget CRD of the integration tests.
pub(crate) const WIDGET_CRD: &str = include_str!("../../tests/apiserver/fixtures/widgets.yaml");

/// Both fixture CRDs.
pub(crate) fn crds() -> CrdSet {
    let mut set = CrdSet::from_manifests("runner", RUNNER_CRD).expect("the runner fixture is valid");
    set.add_manifests("widgets.yaml", WIDGET_CRD).expect("the widget fixture is valid");
    set
}

/// The built-in kinds plus the fixture CRDs.
pub(crate) fn registry() -> Registry {
    Registry::new(&crds())
}

/// The fixture type served as `plural`.
pub(crate) fn resource(plural: &str) -> ResourceType {
    let r = registry();
    r.get(r.find_plural(plural).expect("a fixture plural")).clone()
}
