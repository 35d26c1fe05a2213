//! [`Snapshot`]: the world as it stood when it was paused — every stored object (read past the API,
//! so taking it costs the world nothing: no request, no random draw, no trace line), the latest
//! resourceVersion, and the fake GitHub's state as JSON.

use std::collections::BTreeMap;

use arc_world::SteppedWorld;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

/// The paused world.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Sim ms it was taken at.
    pub at_ms: u64,
    /// The world's clock then (its epoch plus `at_ms`).
    pub now: Timestamp,
    /// Whether the run had ended.
    pub ended: bool,
    /// The latest committed resourceVersion.
    pub resource_version: u64,
    /// Stored objects by resource plural, ordered by namespace and name.
    pub objects: BTreeMap<String, Vec<Value>>,
    /// The fake GitHub's scale sets, sessions, runners and jobs.
    pub github: Value,
}

impl Snapshot {
    /// The world now (it must be paused: between steps).
    pub fn of(world: &SteppedWorld) -> Snapshot {
        let apiserver = world.apiserver();
        let objects = apiserver
            .registry()
            .types()
            .iter()
            .map(|rt| (rt.plural.clone(), apiserver.objects(&rt.plural)))
            .collect();
        let at_ms = world.now_ms();
        let github = world.github();
        let elapsed = SignedDuration::from_millis(i64::try_from(at_ms).unwrap_or(i64::MAX));
        let now = world.record().clock().epoch().saturating_add(elapsed).unwrap_or(Timestamp::MAX);
        Snapshot {
            at_ms,
            now,
            ended: world.ended(),
            resource_version: apiserver.resource_version(),
            objects,
            github: json!({
                "at_ms": at_ms,
                "scale_sets": github.scale_sets(),
                "sessions": github.sessions(),
                "runners": github.runners(),
                "jobs": github.jobs(),
            }),
        }
    }
}
