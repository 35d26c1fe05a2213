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
    let Some(reader) = Reader::of(shared, resource, actor, via) else { return };
    for object in objects {
        let (namespace, name, rv) = version_of(object);
        reader.read(namespace, name, rv);
    }
}

/// A stored object's namespace, name and resourceVersion (empty and 0 where it has none).
pub(crate) fn version_of(object: &Value) -> (&str, &str, u64) {
    let meta = object.get("metadata");
    let field = |f: &str| meta.and_then(|m| m.get(f)).and_then(Value::as_str).unwrap_or("");
    (field("namespace"), field("name"), field("resourceVersion").parse().unwrap_or(0))
}

/// Records the version `rv` of `namespace/name` as read by `actor` through `via`, if the record keeps
/// reads of its kind: [`record`] for a caller that knows the object's key and version already.
pub(crate) fn record_version(
    shared: &Shared,
    resource: ResourceId,
    actor: Option<&str>,
    via: ReadVia,
    (namespace, name, rv): (&str, &str, u64),
) {
    if let Some(reader) = Reader::of(shared, resource, actor, via) {
        reader.read(namespace, name, rv);
    }
}

/// One read's who, what kind and how, for a record that keeps such reads.
struct Reader<'a> {
    shared: &'a Shared,
    plural: &'a String,
    actor: &'a str,
    via: ReadVia,
    ms: u64,
}

impl<'a> Reader<'a> {
    fn of(shared: &'a Shared, resource: ResourceId, actor: Option<&'a str>, via: ReadVia) -> Option<Self> {
        let plural = &shared.registry.get(resource).plural;
        shared.record.wants::<ReadEntry>(Some(plural)).then(|| Reader {
            shared,
            plural,
            actor: actor.unwrap_or("client"),
            via,
            ms: shared.clock.elapsed_ms(),
        })
    }

    fn read(&self, namespace: &str, name: &str, rv: u64) {
        let mut key = String::with_capacity(namespace.len() + 1 + name.len());
        key.extend([namespace, "/", name]);
        let entry = ReadEntry {
            ms: self.ms,
            actor: self.actor.to_string(),
            resource: self.plural.clone(),
            key,
            rv,
            via: self.via,
        };
        self.shared.record.emit(entry);
    }
}
