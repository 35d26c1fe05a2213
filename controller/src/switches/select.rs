//! Switches by name, for the command line: read and set one switch of a [`Switches`] value by its
//! qualified name (`fixes.patch_id_gate`) or its bare name (`patch_id_gate`; bare names are unique
//! across groups). An unknown name is an [`UnknownSwitch`] that lists the valid names.

use serde_json::{Map, Value};

use super::{GROUPS, Switches};

/// A name that names no switch (in the group asked for, if any), with the valid names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown switch {name:?}{scope}; valid: {valid}", scope = group_scope(group), valid = valid.join(", "))]
pub struct UnknownSwitch {
    /// The name given.
    pub name: String,
    /// The group it was looked up in, if one was required.
    pub group: Option<String>,
    /// The names that would have been accepted.
    pub valid: Vec<String>,
}

fn group_scope(group: &Option<String>) -> String {
    group.as_ref().map(|g| format!(" in {g}")).unwrap_or_default()
}

/// One switch's value, as listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchValue {
    /// Its group (`fixes`, `optimisations`, `scaling`, `releases`, `departures`).
    pub group: &'static str,
    /// Its name.
    pub name: &'static str,
    /// Its value.
    pub on: bool,
}

impl Switches {
    /// Every switch with its value, group by group in declaration order.
    pub fn values(&self) -> Vec<SwitchValue> {
        let json = self.as_json();
        let mut out = Vec::new();
        for (group, docs) in GROUPS {
            for doc in docs {
                let on = json[group][doc.name].as_bool().unwrap_or(false);
                out.push(SwitchValue { group, name: doc.name, on });
            }
        }
        out
    }

    /// The value of the switch `name` (qualified or bare).
    pub fn get(&self, name: &str) -> Result<bool, UnknownSwitch> {
        let (group, field) = resolve(name, None)?;
        Ok(self.as_json()[group][field].as_bool().unwrap_or(false))
    }

    /// Sets the switch `name` (qualified or bare) to `on`.
    pub fn set(&mut self, name: &str, on: bool) -> Result<(), UnknownSwitch> {
        self.set_in(None, name, on)
    }

    /// Sets the switch `name` to `on`, requiring it to be in `group` when one is given (what
    /// `arc-controller --disable-optimisation` and arcsim's switch options accept).
    pub fn set_in(&mut self, group: Option<&str>, name: &str, on: bool) -> Result<(), UnknownSwitch> {
        let (group, field) = resolve(name, group)?;
        let mut json = self.as_json();
        json[group][field] = Value::Bool(on);
        *self = serde_json::from_value(json).expect("a switch set to a bool still deserializes");
        Ok(())
    }

    fn as_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| Value::Object(Map::new()))
    }
}

/// The group and field `name` names, within `required` when given.
fn resolve(name: &str, required: Option<&str>) -> Result<(&'static str, &'static str), UnknownSwitch> {
    let (wanted_group, field) = match name.split_once('.') {
        Some((group, field)) => (Some(group), field),
        None => (None, name),
    };
    let found = GROUPS.iter().find_map(|(group, docs)| {
        let group_ok = wanted_group.is_none_or(|g| g == *group) && required.is_none_or(|g| g == *group);
        let doc = docs.iter().find(|d| d.name == field)?;
        group_ok.then_some((*group, doc.name))
    });
    found.ok_or_else(|| UnknownSwitch {
        name: name.to_string(),
        group: required.map(str::to_string),
        valid: valid_names(required),
    })
}

fn valid_names(required: Option<&str>) -> Vec<String> {
    let groups = GROUPS.iter().filter(|(group, _)| required.is_none_or(|g| g == *group));
    groups.flat_map(|(_, docs)| docs.iter().map(|d| d.name.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn bare_switch_names_are_unique_across_groups() {
        let names: Vec<&str> = GROUPS.iter().flat_map(|(_, docs)| docs.iter().map(|d| d.name)).collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn a_switch_is_set_by_bare_or_qualified_name() {
        let mut switches = Switches::default();
        switches.set("patch_id_gate", false).unwrap();
        switches.set("scaling.actionable_revision", false).unwrap();
        assert!(!switches.fixes.patch_id_gate && !switches.scaling.actionable_revision);
        assert_eq!(switches.get("fixes.patch_id_gate"), Ok(false));
        assert_eq!(switches.get("lazy_copy"), Ok(true));
    }

    #[test]
    fn an_unknown_name_is_an_error_listing_the_valid_ones() {
        let err = Switches::default().set("turbo", true).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("unknown switch \"turbo\"") && text.contains("patch_id_gate"), "{text}");
        assert!(text.contains("failure_time_kept"), "{text}");
        let err = Switches::default().set("fixes.lazy_copy", false).unwrap_err();
        assert!(err.to_string().contains("fixes.lazy_copy"), "{err}");
    }

    #[test]
    fn a_group_restricted_set_refuses_a_switch_of_another_group() {
        let mut switches = Switches::default();
        let err = switches.set_in(Some("fixes"), "predicates", false).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("in fixes") && text.contains("already_exists_requeue"), "{text}");
        assert!(!text.contains("lazy_copy"), "{text}");
        switches.set_in(Some("optimisations"), "predicates", false).unwrap();
        assert!(!switches.optimisations.predicates);
    }

    #[test]
    fn values_list_every_switch_once_in_group_order() {
        let values = Switches::default().values();
        let total: usize = GROUPS.iter().map(|(_, docs)| docs.len()).sum();
        assert_eq!(values.len(), total);
        assert_eq!(values[0].group, "fixes");
        assert_eq!(values.last().map(|v| v.group), Some("departures"));
    }
}
