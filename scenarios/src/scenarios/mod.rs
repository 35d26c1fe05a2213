//! The scenarios arcsim ships, and the objects they start from.

pub mod objects;
pub mod standard;

use crate::scenario::Scenario;

/// Every scenario, in the order `arcsim list` shows them.
pub fn all() -> Vec<&'static dyn Scenario> {
    vec![&standard::Standard]
}

/// The scenario named `name`, or an error listing the valid names.
pub fn find(name: &str) -> Result<&'static dyn Scenario, String> {
    all().into_iter().find(|s| s.name() == name).ok_or_else(|| {
        let valid: Vec<&str> = all().iter().map(|s| s.name()).collect();
        format!("unknown scenario {name:?}; valid: {}", valid.join(", "))
    })
}
