//! The scenarios arcsim ships, and the objects they start from.

pub mod assign_during_delete;
pub mod objects;
pub mod standard;
pub mod watch_lag;

use crate::scenario::Scenario;

/// Every scenario, in the order `arcsim list` shows them.
pub fn all() -> Vec<&'static dyn Scenario> {
    vec![&standard::Standard, &watch_lag::WatchLagDuplicateCreate, &assign_during_delete::AssignDuringDelete]
}

/// The scenario named `name`, or an error listing the valid names.
pub fn find(name: &str) -> Result<&'static dyn Scenario, String> {
    all().into_iter().find(|s| s.name() == name).ok_or_else(|| {
        let valid: Vec<&str> = all().iter().map(|s| s.name()).collect();
        format!("unknown scenario {name:?}; valid: {}", valid.join(", "))
    })
}
