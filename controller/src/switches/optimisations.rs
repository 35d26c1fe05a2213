//! [`Optimisations`]: the parts of the \[V\] change set (ARC-MODEL §5.1–§5.3) whose oracles compare
//! "on" with "off": update predicates, lazy copy, and Running from the listener. ARC 0.15.0 took
//! them upstream (#4647, #4646); §5.4's scaling core is [`super::ScalingCore`].

use serde::{Deserialize, Serialize};

use super::SwitchDoc;

/// The \[V\] optimisations. `Default` is everything on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(default, deny_unknown_fields)]
pub struct Optimisations {
    /// §5.1 / #4647: update predicates on the owned watches drop updates whose projection is
    /// unchanged. Off: only the global resourceVersion-changed filter applies.
    pub predicates: bool,
    /// §5.3: reconcilers deep-copy an object only on first mutation and skip writes when nothing
    /// changed. Off: a copy per reconcile, as ARC's `DeepCopy()` before every patch.
    pub lazy_copy: bool,
    /// §5.2 / #4646: the Running phase comes from the listener's JobStarted; the ER controller
    /// publishes only Pending. Off: the ER controller copies pod phase Running into the ER.
    pub running_from_listener: bool,
}

/// Every optimisation, with its origin, in declaration order.
pub(super) const DOCS: &[SwitchDoc] = &[
    SwitchDoc::new("predicates", "§5.1, #4647 (0.15.0)", "update predicates on the owned watches"),
    SwitchDoc::new("lazy_copy", "§5.3", "copy on first mutation, no write when nothing changed"),
    SwitchDoc::new(
        "running_from_listener",
        "§5.2, #4646 (0.15.0)",
        "Running comes from JobStarted, not the pod phase",
    ),
];

impl Default for Optimisations {
    fn default() -> Self {
        Self::all_on()
    }
}

impl Optimisations {
    /// Every optimisation on.
    pub const fn all_on() -> Self {
        Optimisations { predicates: true, lazy_copy: true, running_from_listener: true }
    }

    /// Every optimisation off (the scaling core of §5.4 is switched separately, in
    /// [`super::ScalingCore`]).
    pub const fn all_off() -> Self {
        Optimisations { predicates: false, lazy_copy: false, running_from_listener: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switches::docs_match_fields;

    #[test]
    fn every_optimisation_is_on_by_default_and_a_partial_config_keeps_the_rest_on() {
        assert_eq!(Optimisations::default(), Optimisations::all_on());
        let opts: Optimisations = serde_json::from_str(r#"{"predicates": false}"#).unwrap();
        assert_eq!(opts, Optimisations { predicates: false, ..Optimisations::all_on() });
        let off = serde_json::to_value(Optimisations::all_off()).unwrap();
        assert!(off.as_object().unwrap().values().all(|v| v == &serde_json::Value::Bool(false)));
    }

    #[test]
    fn every_optimisation_is_documented_in_order() {
        docs_match_fields(&Optimisations::default(), DOCS);
    }
}
