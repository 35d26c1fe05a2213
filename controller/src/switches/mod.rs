//! Behaviour switches: ordinary configuration, like Kubernetes feature gates, never `cfg(test)`.
//!
//! Every behaviour of this controller that is not upstream ARC's is a switch, and so is every
//! upstream change after gha-runner-scale-set-0.13.1, so that a set of switches describes a
//! controller build: a [`Profile`] (an ARC release, the \[V\] change set, this project's hardened
//! controller) is a named [`Switches`] value. The switches come in five groups, one file each:
//!
//! - [`Fixes`]: one per historic fix; a bug variant is a profile with one of them off;
//! - [`Optimisations`]: the \[V\] change set's §5.1–§5.3 (predicates, lazy copy, Running from the
//!   listener);
//! - [`ScalingCore`]: the \[V\] change set's §5.4, the ERS scaling core, against upstream's;
//! - [`Releases`]: upstream changes after 0.13.1 that are neither;
//! - [`Departures`]: where this project departs from an upstream quirk.
//!
//! Each group deserializes from partial input (`#[serde(default)]`): a config that names only the
//! switches it changes keeps every other one at its default. Switches are also addressed by name
//! (`fixes.patch_id_gate`, or just `patch_id_gate`: names are unique across groups), for the
//! command line; an unknown name is an error that lists the valid ones.

mod departures;
mod fixes;
mod optimisations;
mod profile;
mod releases;
mod scaling;
mod select;

use serde::{Deserialize, Serialize};

pub use departures::Departures;
pub use fixes::Fixes;
pub use optimisations::Optimisations;
pub use profile::{Profile, UnknownProfile};
pub use releases::Releases;
pub use scaling::ScalingCore;
pub use select::{SwitchValue, UnknownSwitch};

/// Every behaviour switch of the controller. `Default` is this project's controller (the `arcsim`
/// profile).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Switches {
    /// Historic fixes.
    pub fixes: Fixes,
    /// The \[V\] change set's §5.1–§5.3.
    pub optimisations: Optimisations,
    /// The \[V\] change set's §5.4 (the ERS scaling core).
    pub scaling: ScalingCore,
    /// Upstream changes after 0.13.1 that are neither fixes nor the change set.
    pub releases: Releases,
    /// This project's departures from upstream quirks.
    pub departures: Departures,
}

/// One switch's documentation: its name (the serde field), where it comes from, and one line on
/// what it does when on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchDoc {
    /// The field name.
    pub name: &'static str,
    /// The ARC change, release or section it comes from.
    pub origin: &'static str,
    /// What it does when on.
    pub summary: &'static str,
}

impl SwitchDoc {
    /// A switch's documentation.
    pub const fn new(name: &'static str, origin: &'static str, summary: &'static str) -> Self {
        SwitchDoc { name, origin, summary }
    }
}

/// The groups, as named in [`Switches`]' serde form, with their switches' documentation.
pub const GROUPS: [(&str, &[SwitchDoc]); 5] = [
    ("fixes", fixes::DOCS),
    ("optimisations", optimisations::DOCS),
    ("scaling", scaling::DOCS),
    ("releases", releases::DOCS),
    ("departures", departures::DOCS),
];

/// Test helper: `docs` names exactly `value`'s serde fields, in order.
#[cfg(test)]
pub(crate) fn docs_match_fields<T: Serialize>(value: &T, docs: &[SwitchDoc]) {
    let json = serde_json::to_value(value).unwrap();
    let fields: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    let documented: Vec<&str> = docs.iter().map(|d| d.name).collect();
    let mut sorted = documented.clone();
    sorted.sort_unstable();
    let mut sorted_fields = fields.clone();
    sorted_fields.sort_unstable();
    assert_eq!(sorted, sorted_fields, "documented switches differ from the fields");
    assert!(docs.iter().all(|d| !d.origin.is_empty() && !d.summary.is_empty()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_switches_are_the_arcsim_profile() {
        assert_eq!(Switches::default(), Profile::Arcsim.switches());
    }

    #[test]
    fn a_partial_config_keeps_every_unnamed_switch_at_its_default() {
        let json = r#"{"fixes": {"patch_id_gate": false}, "scaling": {"actionable_revision": false}}"#;
        let switches: Switches = serde_json::from_str(json).unwrap();
        let mut expected = Switches::default();
        expected.fixes.patch_id_gate = false;
        expected.scaling.actionable_revision = false;
        assert_eq!(switches, expected);
        assert!(serde_json::from_str::<Switches>(r#"{"fix": {}}"#).is_err());
    }
}
