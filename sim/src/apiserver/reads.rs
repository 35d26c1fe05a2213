//! The read log: which version of which object each actor was handed, and when, as
//! [`ReadEntry`] events of the run's record, for the kinds the record's interest keeps. A get, every
//! item of a list, and every watch event count as reads. A client's informer cache can only hold versions it was handed,
//! so oracles use this log to bound what a controller could have seen when it acted (kube-apiserver
//! has no such log; it is the world's observation point, like the audit log).

use serde_json::Value;

use super::Shared;
use super::registry::ResourceId;
use crate::record::{Line, Observed};

/// How an object was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReadVia {
    /// A single-object get.
    Get,
    /// An item of a list answer.
    List,
    /// A watch event as it was sent to the client.
    Watch,
}

/// One object version handed to one actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadEntry {
    /// Sim milliseconds when it was handed over.
    pub ms: u64,
    /// Who read it (the request's actor; `client` when unattributed).
    pub actor: String,
    /// Resource plural.
    pub resource: String,
    /// `namespace/name`.
    pub key: String,
    /// The version's resourceVersion.
    pub rv: u64,
    /// How.
    pub via: ReadVia,
}

impl Observed for ReadEntry {
    fn line(&self) -> Option<Line<'_>> {
        None
    }

    fn resource(&self) -> Option<&str> {
        Some(&self.resource)
    }

    crate::observed_as_any!();
}

/// Records `objects` (stored JSON) as read by `actor` through `via`, if the record keeps reads of
/// their kind.
pub(crate) fn record<'a>(
    shared: &Shared,
    resource: ResourceId,
    actor: Option<&str>,
    via: ReadVia,
    objects: impl IntoIterator<Item = &'a Value>,
) {
    let plural = &shared.registry.get(resource).plural;
    if !shared.record.wants::<ReadEntry>(Some(plural)) {
        return;
    }
    let ms = shared.clock.elapsed_ms();
    let actor = actor.unwrap_or("client");
    for object in objects {
        let meta = object.get("metadata");
        let field = |f: &str| meta.and_then(|m| m.get(f)).and_then(Value::as_str).unwrap_or("");
        let (namespace, name) = (field("namespace"), field("name"));
        let mut key = String::with_capacity(namespace.len() + 1 + name.len());
        key.extend([namespace, "/", name]);
        let entry = ReadEntry {
            ms,
            actor: actor.to_string(),
            resource: plural.clone(),
            key,
            rv: field("resourceVersion").parse().unwrap_or(0),
            via,
        };
        shared.record.emit(entry);
    }
}
